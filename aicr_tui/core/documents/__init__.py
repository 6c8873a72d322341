"""Documents: snapshot, recipe result and criteria models and parsing; no catalog I/O."""
