"""Qt plumbing every view shares: when hidden work runs (when_shown), echo guards
(sync_guard), handlers that survive an exception (handler_guard), cached plot drawings,
fenced labels, frame turns, elided labels, the export folder. No view, panel or scene here."""
