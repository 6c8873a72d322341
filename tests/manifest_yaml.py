"""PyYAML, as the tests' independent reader of rendered Kubernetes manifests.

PyYAML reads YAML 1.1, where a plain ``=`` is the "value" type and ``safe_load`` has no
constructor for it. Helm and Kubernetes read YAML 1.2 (sigs.k8s.io/yaml), where ``=`` is
just the string "=", and charts render it (the prometheus-operator CRDs in
prometheus-operator-crds 28.0.1 and kube-prometheus-stack 84.4.0 have ``- =`` in an enum
list). This loader reads that tag as the string, as the cluster does; everything
else is SafeLoader's.
"""

from __future__ import annotations

from typing import Any

import yaml


class ManifestLoader(yaml.SafeLoader):
    """SafeLoader that reads the YAML 1.1 value tag (a plain ``=``) as its text."""


ManifestLoader.add_constructor("tag:yaml.org,2002:value", yaml.SafeLoader.construct_yaml_str)


def load_manifest(text: str) -> Any:
    """One rendered manifest document, read as the cluster reads it."""
    return yaml.load(text, Loader=ManifestLoader)  # noqa: S506 - a SafeLoader subclass
