"""The window's views: they draw the document and emit the user's intents as signals."""
