"""Checks of the deployment, conformance and performance phases, keyed by catalog name."""
