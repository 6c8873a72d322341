"""The read-only ClusterRole the README documents for ``snapshot`` is shipped as a file
(docs/rbac/aicr-tui-snapshot.yaml, applied as-is by the cluster tier's RBAC test): the two
must say the same, and the role grants read verbs only."""

from __future__ import annotations

import re
from typing import Any

import yaml

from tests.conftest import REPO

ROLE_FILE = REPO / "docs" / "rbac" / "aicr-tui-snapshot.yaml"
READ_VERBS = {"get", "list", "watch"}


def readme_role() -> dict[str, Any]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    found = [
        doc
        for block in re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
        for doc in [yaml.safe_load(block)]
        if isinstance(doc, dict) and (doc.get("metadata") or {}).get("name") == "aicr-tui-snapshot"
    ]
    assert len(found) == 1, "README.md documents the aicr-tui-snapshot ClusterRole once"
    role: dict[str, Any] = found[0]
    return role


def test_the_shipped_role_file_is_the_documented_role() -> None:
    shipped = yaml.safe_load(ROLE_FILE.read_text(encoding="utf-8"))
    assert shipped == readme_role()
    assert "docs/rbac/aicr-tui-snapshot.yaml" in (REPO / "README.md").read_text(encoding="utf-8")


def test_the_role_is_read_only_and_names_the_one_daemonset() -> None:
    role = yaml.safe_load(ROLE_FILE.read_text(encoding="utf-8"))
    assert role["kind"] == "ClusterRole"
    for rule in role["rules"]:
        assert set(rule["verbs"]) <= READ_VERBS, rule
    (apps,) = [r for r in role["rules"] if r.get("apiGroups") == ["apps"]]
    assert apps["resources"] == ["daemonsets"]
    assert apps["resourceNames"] == ["nvidia-gpu-device-plugin"]
