"""Services: one call per user action, used by the CLI and the wizard alike."""
