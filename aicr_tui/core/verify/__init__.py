"""Verify: render bundles with a real Helm engine and report what the charts would do."""
