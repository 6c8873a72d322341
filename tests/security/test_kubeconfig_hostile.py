"""A hostile or broken kubeconfig is bad input: one line naming the file and the field, exit 2.

Each file below is given to ``aicr-tui snapshot --kubeconfig`` and to ``aicr-tui validate
--kubeconfig`` (live, with and without ``--snapshot``) in a subprocess, as a user would: not
YAML, a ``!!python/...`` or other application tag, YAML that is no mapping, no clusters or
contexts, a field of the wrong type, and cluster ``server`` values that are no http(s) URL
(``file:///etc/passwd``, ``ftp://``, ``javascript:``, empty, with a space or control
characters). No cluster is contacted, no check runs, and nothing is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SAMPLES

RECIPE = str(SAMPLES / "validation" / "aks-h100-training.recipe.yaml")
SNAPSHOT = str(SAMPLES / "snapshots" / "aks-h100-install.yaml")


def _config(server: str = "https://127.0.0.1:1", *, clusters: str = "", users: str = "") -> str:
    clusters = clusters or f"- name: c\n  cluster:\n    server: {server}\n"
    users = users or "- name: u\n  user: {token: t}\n"
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n{clusters}"
        "contexts:\n- name: c\n  context: {cluster: c, user: u}\n"
        "current-context: c\n"
        f"users:\n{users}"
    )


# (file text, field the line must name, words it must hold)
CASES: dict[str, tuple[str | bytes, str, str]] = {
    "not-yaml": ("a: [unclosed\n  b: :\n", "", "not valid YAML"),
    "python-tag": (
        'apiVersion: v1\nclusters: !!python/object/apply:os.system ["touch /tmp/pwned"]\n',
        "",
        "not valid YAML",
    ),
    "python-name-tag": (
        _config().replace("kind: Config", "kind: !!python/name:os.system"),
        "",
        "not valid YAML",
    ),
    "custom-tag": (_config().replace("kind: Config", "kind: !Ref Config"), "", "not valid YAML"),
    "not-utf8": (b"\xff\xfe\x00apiVersion: v1\n", "", "UTF-8"),
    "a-list": ("- a\n- b\n", "top level", "expected a mapping"),
    "a-scalar": ("just text\n", "top level", "expected a mapping"),
    "empty": ("", "top level", "expected a mapping"),
    "no-clusters": (
        "apiVersion: v1\ncontexts:\n- name: c\n  context: {cluster: c}\ncurrent-context: c\n",
        "clusters",
        "at least one",
    ),
    "no-contexts": (
        "apiVersion: v1\nclusters:\n- name: c\n  cluster: {server: 'https://a'}\n",
        "contexts",
        "at least one",
    ),
    "clusters-a-mapping": (
        "apiVersion: v1\nclusters: {c: 1}\ncontexts: []\n",
        "clusters",
        "expected a list",
    ),
    "cluster-a-string": (
        _config(clusters="- name: c\n  cluster: x\n"),
        "clusters[0].cluster",
        "mapping",
    ),
    "cluster-name-a-list": (
        _config(clusters="- name: [a]\n  cluster: {server: 'https://a'}\n"),
        "clusters[0].name",
        "string",
    ),
    "no-server": (
        _config(clusters="- name: c\n  cluster: {}\n"),
        "clusters[0].cluster.server",
        "URL",
    ),
    "ca-a-number": (
        _config(
            clusters="- name: c\n  cluster: {server: 'https://a', certificate-authority-data: 7}\n"
        ),
        "clusters[0].cluster.certificate-authority-data",
        "string",
    ),
    "token-a-list": (
        _config(users="- name: u\n  user: {token: [t]}\n"),
        "users[0].user.token",
        "string",
    ),
    "exec-without-command": (
        _config(users="- name: u\n  user:\n    exec: {apiVersion: v1}\n"),
        "users[0].user.exec.command",
        "program",
    ),
    "current-context-a-map": (
        _config().replace("current-context: c", "current-context: {a: 1}"),
        "current-context",
        "string",
    ),
    "deep": ("a: " + "[" * 120 + "]" * 120 + "\n", "", "levels deep"),
}
SERVERS = {
    "file-url": "file:///etc/passwd",
    "ftp-url": "ftp://127.0.0.1/x",
    "javascript": "'javascript:alert(1)'",
    "gopher": "gopher://127.0.0.1:70/x",
    "no-scheme": "127.0.0.1:6443",
    "empty-server": '""',
    "null-server": "null",
    "number-server": "6443",
    "list-server": "[https://a]",
    "space-in-host": '"https://a b:6443"',
    "trailing-space": '"https://a:6443 "',
    "escape-in-host": '"https://a\\e[31mred:6443"',
    "newline-in-url": '"https://a\\n:6443"',
    "nul-in-url": '"https://a\\0:6443"',
    "bad-port": "https://a:99999",
    "port-not-number": "https://a:port",
    "no-host": "https://:6443",
    "only-scheme": "'https://'",
}
for _name, _server in SERVERS.items():
    CASES[_name] = (
        _config(_server),
        "clusters[0].cluster.server",
        "expected an https:// or http:// URL",
    )


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "kubeconfig"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def _assert_refused(result: Any, path: Path, field: str, words: str) -> None:
    err = result.stderr
    assert result.returncode == 2, (result.returncode, err)
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "[INVALID_REQUEST]" in err and "Traceback" not in err, err
    assert f'kubeconfig "{path}"' in err or f'kubeconfig file "{path}"' in err, err
    if field:
        assert f": {field}: " in err, err
    assert words in err, err
    assert "\x1b" not in err


@pytest.mark.parametrize("case", sorted(CASES), ids=sorted(CASES))
def test_snapshot_refuses_hostile_kubeconfig(case: str, tmp_path: Path, cli: Any) -> None:
    text, field, words = CASES[case]
    path = _write(tmp_path, text)
    out = tmp_path / "snap.yaml"
    result = cli("snapshot", "--kubeconfig", str(path), "--deadline", "20", "-o", str(out))
    _assert_refused(result, path, field, words)
    assert not out.exists()
    assert not Path("/tmp/pwned").exists()


@pytest.mark.parametrize(
    "case",
    [
        "not-yaml",
        "python-tag",
        "a-list",
        "no-contexts",
        "file-url",
        "escape-in-host",
        "empty-server",
    ],
)
@pytest.mark.parametrize("with_snapshot", [False, True], ids=["capture", "snapshot"])
def test_validate_refuses_hostile_kubeconfig(
    case: str, with_snapshot: bool, tmp_path: Path, cli: Any
) -> None:
    text, field, words = CASES[case]
    path = _write(tmp_path, text)
    out = tmp_path / "report.json"
    args = ["validate", "-r", RECIPE, "--kubeconfig", str(path), "-o", str(out), "--plain"]
    if with_snapshot:
        args += ["-s", SNAPSHOT]
    result = cli(*args)
    _assert_refused(result, path, field, words)
    assert not out.exists()


def test_kubeconfig_list_is_checked_file_by_file(tmp_path: Path, cli: Any) -> None:
    """``$KUBECONFIG`` with two files: the bad one is named, not the list."""
    good = tmp_path / "good"
    good.write_text(_config())
    bad = tmp_path / "bad"
    bad.write_text(_config("ftp://x"))
    out = tmp_path / "snap.yaml"
    result = cli(
        "snapshot", "--deadline", "20", "-o", str(out), env={"KUBECONFIG": f"{good}:{bad}"}
    )
    _assert_refused(result, bad, "clusters[0].cluster.server", "URL")
    assert not out.exists()
