"""Capture: provider dumps (AKS pools, OKE add-ons, legacy plugin) projected into a snapshot."""
