"""Textual screens and widgets of the aicr-tui wizard: thin faces over ``core``."""
