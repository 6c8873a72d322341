"""Widgets and widget-free helpers shared by the wizard screens."""
