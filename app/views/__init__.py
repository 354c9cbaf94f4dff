"""The window's docked panels (each a `views.panel.Panel`) and its other parts: they draw
the document and emit the user's intents as signals."""
