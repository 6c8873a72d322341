"""Foundation: errors, bounded I/O, YAML, names, text safety; imports nothing above it."""
