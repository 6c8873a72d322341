"""aicr-tui: the shell around ``core`` — CLI entry point, Textual app factory, serve."""
