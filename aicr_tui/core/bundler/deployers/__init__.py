"""Deployers: bundle layouts for helm, helmfile, Argo CD, Argo CD + Helm and Flux."""
