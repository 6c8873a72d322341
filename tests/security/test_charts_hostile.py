"""``verify`` runs hostile charts (issue 25, family 4).

Every chart here is built in ``tmp_path``: a minimal chart (Chart.yaml, values.yaml, one
template) with one hostile thing planted. A secret lives outside the chart (a manifest
whose kind and name are markers, so a leak would show up in a finding) and the tests
assert that its content never reaches the text or JSON report, and that the chart is
refused with one line naming the entry. The bounded cases run with a lowered per-chart
limit (``AICR_TUI_VERIFY_SECONDS``) so none waits the default 30 s.
"""

from __future__ import annotations

import http.server
import io
import json
import os
import subprocess
import sys
import tarfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.verify.analysis import Verifier
from aicr_tui.core.verify.model import (
    KUBE_VERSION,
    TEMPLATE,
    VerifyComponent,
    VerifyInput,
    VerifyReport,
)

pytest.importorskip("helm_python")

NAME, VERSION = "demo", "1.0.0"
MARKER = "s3cr3t-7f3a"
SECRET_KIND = "TopSecretKind"
SECRET_MANIFEST = (
    f"apiVersion: leak.example/v1\nkind: {SECRET_KIND}\nmetadata: {{name: {MARKER}}}\n"
)
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: demo}\ndata: {a: b}\n"


# ------------------------------------------------------------------------- helpers
def write_chart(
    root: Path,
    templates: dict[str, str] | None = None,
    *,
    chart_yaml: str = f"apiVersion: v2\nname: {NAME}\nversion: {VERSION}\n",
    values: str = "a: 1\n",
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "templates").mkdir(exist_ok=True)
    (root / "Chart.yaml").write_text(chart_yaml)
    (root / "values.yaml").write_text(values)
    for name, text in (templates if templates is not None else {"cm.yaml": CONFIGMAP}).items():
        (root / "templates" / name).write_text(text)
    return root


def tgz(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def member(name: str, data: bytes | None = None, **kw: Any) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    for key, value in kw.items():
        setattr(info, key, value)
    return info, data


def base_members(top: str = NAME) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    return [
        member(f"{top}/Chart.yaml", f"apiVersion: v2\nname: {top}\nversion: {VERSION}\n".encode()),
        member(f"{top}/values.yaml", b"a: 1\n"),
        member(f"{top}/templates/cm.yaml", CONFIGMAP.encode()),
    ]


def verify(
    charts: Path, values: dict[str, Any] | None = None, kubernetes: str = ">= 1.30"
) -> VerifyReport | AicrError:
    comp = VerifyComponent(
        NAME,
        f"001-{NAME}",
        NAME,
        NAME,
        "https://charts.example.invalid",
        VERSION,
        values or {},
        {},
    )
    try:
        return Verifier([charts]).verify(VerifyInput([comp], kubernetes))
    except AicrError as exc:
        return exc


def shown(outcome: VerifyReport | AicrError) -> str:
    """Everything a user would see: the text report and the JSON report, or the error."""
    if isinstance(outcome, AicrError):
        return outcome.render()
    return outcome.render_text() + json.dumps(outcome.to_json(), ensure_ascii=False)


def refused(outcome: VerifyReport | AicrError, *words: str) -> str:
    assert isinstance(outcome, AicrError), f"expected a refusal, got: {shown(outcome)}"
    assert outcome.code == ErrorCode.INVALID_REQUEST
    line = outcome.render()
    assert "\n" not in line and len(line) < 1000
    for word in words:
        assert word in line, line
    assert MARKER not in line and SECRET_KIND not in line
    return line


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside every chart with the secret manifest and a chart of its own."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.yaml").write_text(SECRET_MANIFEST)
    (out / "secret.json").write_text(json.dumps({"enum": [MARKER]}))
    write_chart(
        out / "evilchart",
        {"secret.yaml": SECRET_MANIFEST},
        chart_yaml=f"apiVersion: v2\nname: evil\nversion: {VERSION}\n",
    )
    return out


@pytest.fixture
def charts(tmp_path: Path) -> Path:
    d = tmp_path / "charts"
    d.mkdir()
    return d


def chart_dir(charts: Path) -> Path:
    return charts / f"{NAME}-{VERSION}"


# ----------------------------------------------------------- (a) links in a chart tree
def _files_get_link(c: Path, out: Path) -> None:
    write_chart(c, {"cm.yaml": '{{ fail (.Files.Get "notes.txt") }}\n'})
    (c / "notes.txt").symlink_to(out / "secret.yaml")


def _template_link(c: Path, out: Path) -> None:
    write_chart(c)
    (c / "templates" / "leak.yaml").symlink_to(out / "secret.yaml")


def _template_dir_link(c: Path, out: Path) -> None:
    write_chart(c)
    (c / "templates" / "more").symlink_to(out)


def _glob_through_dir_link(c: Path, out: Path) -> None:
    write_chart(
        c,
        {
            "cm.yaml": '{{ range $p, $_ := .Files.Glob "conf/*" }}{{ fail ($.Files.Get $p) }}{{ end }}\n'
        },
    )
    (c / "conf").symlink_to(out)


def _subchart_link(c: Path, out: Path) -> None:
    write_chart(c)
    (c / "charts").mkdir()
    (c / "charts" / "evil").symlink_to(out / "evilchart")


def _link_inside_subchart(c: Path, out: Path) -> None:
    write_chart(c)
    sub = write_chart(
        c / "charts" / "sub", chart_yaml="apiVersion: v2\nname: sub\nversion: 0.1.0\n"
    )
    (sub / "templates" / "leak.yaml").symlink_to(out / "secret.yaml")


def _hard_link(c: Path, out: Path) -> None:
    write_chart(c)
    os.link(out / "secret.yaml", c / "templates" / "leak.yaml")


def _chart_entry_is_a_link(c: Path, out: Path) -> None:
    c.symlink_to(out / "evilchart")


def _fifo(c: Path, out: Path) -> None:
    write_chart(c)
    os.mkfifo(c / "templates" / "pipe.yaml")


TREE_CASES: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "Files.Get through a file link": (_files_get_link, "symbolic link"),
    "a template that is a link": (_template_link, "symbolic link"),
    "a directory link in templates/": (_template_dir_link, "symbolic link"),
    "Files.Glob through a directory link": (_glob_through_dir_link, "symbolic link"),
    "a subchart that is a link": (_subchart_link, "symbolic link"),
    "a link inside a subchart": (_link_inside_subchart, "symbolic link"),
    "a hard link to a file elsewhere": (_hard_link, "hard link"),
    "the chart entry itself is a link": (_chart_entry_is_a_link, "symbolic link"),
    "a FIFO among the templates": (_fifo, "not a regular file"),
}


@pytest.mark.parametrize("case", list(TREE_CASES))
def test_a_link_in_the_chart_tree_is_refused_and_nothing_leaks(
    case: str, charts: Path, outside: Path
) -> None:
    build, words = TREE_CASES[case]
    build(chart_dir(charts), outside)
    refused(verify(charts), words)


def test_a_link_to_proc_self_environ_never_shows_the_environment(
    charts: Path, tmp_path: Path
) -> None:
    c = write_chart(chart_dir(charts), {"cm.yaml": '{{ fail (.Files.Get "env") }}\n'})
    (c / "env").symlink_to("/proc/self/environ")
    script = textwrap.dedent(
        f"""
        import sys
        sys.path[:0] = {sys.path!r}
        from tests.security.test_charts_hostile import verify, shown
        from pathlib import Path
        print(shown(verify(Path({str(charts)!r}))))
        """
    )
    env = {**os.environ, "LEAK_MARKER": "envsecret-91c2"}
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "envsecret-91c2" not in proc.stdout + proc.stderr
    assert "symbolic link" in proc.stdout


# ------------------------------------------------------------------- (a) archives
def _link_member(kind: bytes, top: str = NAME) -> Callable[[Path], list[Any]]:
    """A member ``<top>/templates/leak.yaml`` that links (``kind``) to the secret."""
    return lambda out: [
        member(f"{top}/templates/leak.yaml", type=kind, linkname=str(out / "secret.yaml"))
    ]


ARCHIVE_CASES: dict[str, tuple[Callable[[Path], list[Any]], str]] = {
    "a symlink member": (_link_member(tarfile.SYMTYPE), "symbolic link"),
    "a hard-link member": (_link_member(tarfile.LNKTYPE), "hard link"),
    "an absolute member path": (
        lambda out: [member(str(out / "dropped.yaml"), CONFIGMAP.encode())],
        "outside the chart",
    ),
    "a .. member path": (
        lambda out: [member(f"{NAME}/../../dropped.yaml", CONFIGMAP.encode())],
        "outside the chart",
    ),
    "a device member": (
        lambda out: [
            member(f"{NAME}/templates/zero.yaml", type=tarfile.CHRTYPE, devmajor=1, devminor=5)
        ],
        "not a regular file",
    ),
    "a subchart archive with a symlink member": (
        lambda out: [
            member(
                f"{NAME}/charts/sub-0.1.0.tgz",
                tgz(
                    [
                        *base_members("sub"),
                        member(
                            "sub/templates/leak.yaml",
                            type=tarfile.SYMTYPE,
                            linkname=str(out / "secret.yaml"),
                        ),
                    ]
                ),
            )
        ],
        "symbolic link",
    ),
}


@pytest.mark.parametrize("case", list(ARCHIVE_CASES))
def test_a_hostile_archive_member_is_refused(case: str, charts: Path, outside: Path) -> None:
    extra, words = ARCHIVE_CASES[case]
    (charts / f"{NAME}-{VERSION}.tgz").write_bytes(tgz([*base_members(), *extra(outside)]))
    refused(verify(charts), words)
    assert not (outside / "dropped.yaml").exists()


def test_a_subchart_archive_in_a_tree_is_checked_too(charts: Path, outside: Path) -> None:
    c = write_chart(chart_dir(charts))
    (c / "charts").mkdir()
    (c / "charts" / "sub-0.1.0.tgz").write_bytes(
        tgz(
            [
                *base_members("sub"),
                member(
                    "sub/templates/leak.yaml",
                    type=tarfile.SYMTYPE,
                    linkname=str(outside / "secret.yaml"),
                ),
            ]
        )
    )
    refused(verify(charts), "symbolic link", "sub/templates/leak.yaml")


# ------------------------------------------------------- (a) values.schema.json refs
@pytest.fixture
def loopback() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that records every request (none may arrive)."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            hits.append(self.path)
            body = json.dumps({"enum": [MARKER]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def _schemas(out: Path, url: str) -> dict[str, dict[str, Any]]:
    secret = out / "secret.json"
    prop = lambda ref: {"type": "object", "properties": {"a": {"$ref": ref}}}  # noqa: E731
    return {
        "file URL $ref": prop(secret.as_uri()),
        "relative $ref climbing out": prop(f"..{secret}"),
        "/etc/passwd $ref": prop("file:///etc/passwd"),
        "http $ref to loopback": prop(f"{url}/x.json"),
        "$schema on loopback": {"$schema": f"{url}/meta", "type": "object"},
        "$id on loopback with a relative $ref": {
            "$id": f"{url}/base/",
            **prop("y.json"),
        },
        "$dynamicRef to a file": {"type": "object", "$dynamicRef": secret.as_uri()},
    }


SCHEMA_CASES = [
    "file URL $ref",
    "relative $ref climbing out",
    "/etc/passwd $ref",
    "http $ref to loopback",
    "$schema on loopback",
    "$id on loopback with a relative $ref",
    "$dynamicRef to a file",
]


@pytest.mark.parametrize("where", ["chart", "subchart", "subchart archive"])
@pytest.mark.parametrize("case", SCHEMA_CASES)
def test_a_schema_reference_outside_the_schema_is_refused_unread(
    case: str, where: str, charts: Path, outside: Path, loopback: tuple[str, list[str]]
) -> None:
    url, hits = loopback
    schema = json.dumps(_schemas(outside, url)[case])
    c = write_chart(chart_dir(charts))
    if where == "chart":
        (c / "values.schema.json").write_text(schema)
    elif where == "subchart":
        sub = write_chart(
            c / "charts" / "sub", chart_yaml="apiVersion: v2\nname: sub\nversion: 0.1.0\n"
        )
        (sub / "values.schema.json").write_text(schema)
    else:
        (c / "charts").mkdir()
        (c / "charts" / "sub-0.1.0.tgz").write_bytes(
            tgz([*base_members("sub"), member("sub/values.schema.json", schema.encode())])
        )
    refused(verify(charts, {"a": 5}), "values.schema.json", "points outside the schema")
    assert hits == []


def test_a_duplicate_key_cannot_hide_a_file_reference(charts: Path, outside: Path) -> None:
    c = write_chart(chart_dir(charts))
    ref = json.dumps((outside / "secret.json").as_uri())
    (c / "values.schema.json").write_text(
        '{"type": "object", "properties": {"a": {"$ref": ' + ref + ', "$ref": "#"}}}'
    )
    refused(verify(charts, {"a": 5}), "points outside the schema")


def test_fragment_references_and_known_drafts_still_validate(charts: Path) -> None:
    c = write_chart(chart_dir(charts))
    (c / "values.schema.json").write_text(
        json.dumps(
            {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$defs": {"n": {"type": "integer"}},
                "type": "object",
                "properties": {"a": {"$ref": "#/$defs/n"}},
            }
        )
    )
    report = verify(charts, {"a": "five"})
    assert isinstance(report, VerifyReport), shown(report)
    assert [f.kind for f in report.findings] == ["values-schema"]


# ----------------------------------------------------------------- (b) bounded renders
BOUNDED = {
    "nested range/until loops": "{{ range until 100000 }}{{ range until 100000 }}x{{ end }}{{ end }}\n",
    "an include fan-out": (
        '{{ define "f" }}{{ if lt (len .) 30 }}{{ include "f" (append . 1) }}'
        '{{ include "f" (append . 1) }}{{ end }}{{ end }}{{ include "f" list }}\n'
    ),
    "a repeat larger than the memory limit": '{{ repeat 1500000000 "x" }}\n',
    "output over the render output limit": 'a: {{ repeat 70000000 "x" }}\n',
}


@pytest.mark.parametrize("case", list(BOUNDED))
def test_an_unbounded_template_ends_as_one_finding(
    case: str, charts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AICR_TUI_VERIFY_SECONDS", "4")
    monkeypatch.setenv("AICR_TUI_VERIFY_MEMORY_MIB", "512")
    write_chart(chart_dir(charts), {"cm.yaml": BOUNDED[case]})
    started = time.monotonic()
    report = verify(charts, {"undefined": {"x": 1}})
    assert time.monotonic() - started < 60  # it ends (the limit is 4 s; generous)
    assert isinstance(report, VerifyReport), shown(report)
    found = [f for f in report.findings if f.kind == TEMPLATE]
    assert len(found) == 1 and len(report.findings) == 1, shown(report)
    assert any(
        words in found[0].message
        for words in ("did not finish within 4 s", "ran out of memory", "MiB are accepted")
    ), found[0].message
    # The engine is replaced: the next chart verifies as if nothing happened.
    good = tmp_path / "good"
    write_chart(good / f"{NAME}-{VERSION}")
    again = verify(good)
    assert isinstance(again, VerifyReport) and again.findings == [], shown(again)


# ------------------------------------------------- (c) chart text reaching the report
ESCAPES = "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31m\\u009b5n"


@pytest.mark.parametrize(
    "template",
    [
        f'{{{{ fail "boom {ESCAPES} done" }}}}\n',
        f'{{{{ required "need x {ESCAPES}" .Values.x }}}}\n',
        f'{{{{ fail (printf "%s\\n0 finding(s) in 1 components" "{ESCAPES}") }}}}\n',
    ],
    ids=["fail", "required", "forged verdict line"],
)
def test_chart_messages_reach_the_report_without_escape_sequences(
    template: str, charts: Path
) -> None:
    write_chart(chart_dir(charts), {"cm.yaml": template})
    report = verify(charts)
    assert isinstance(report, VerifyReport), shown(report)
    assert [f.kind for f in report.findings] == [TEMPLATE]
    text = shown(report)
    for ch in ("\x1b", "\x07", "\x9b"):
        assert ch not in text
    lines = report.render_text().splitlines()
    assert sum(line.startswith("0 finding(s)") for line in lines) == 0
    assert lines[-1].startswith("1 finding(s) in 1 components")


def test_a_template_file_name_with_escapes_is_shown_escaped(charts: Path) -> None:
    write_chart(chart_dir(charts), {"x\x1b[2J\x1b]0;t\x07.yaml": "a: [\n"})
    report = verify(charts)
    assert isinstance(report, VerifyReport), shown(report)
    assert [f.kind for f in report.findings] == [TEMPLATE]
    assert "\x1b" not in shown(report) and "\x07" not in shown(report)


def test_a_chart_name_with_escapes_is_shown_escaped(charts: Path) -> None:
    write_chart(
        chart_dir(charts),
        chart_yaml=f'apiVersion: v2\nname: "{NAME}"\nversion: {VERSION}\n'
        'description: "\\e]0;t\\a\\e[2J"\nappVersion: "\\e[31m"\n',
        values="known: 1\n",
    )
    report = verify(charts, {"unknown\x1b[31m": 1})
    assert isinstance(report, VerifyReport), shown(report)
    assert [f.kind for f in report.findings] == ["undefined-value"]
    assert "\x1b" not in shown(report)


DIGITS = "9" * 5000


@pytest.mark.parametrize(
    ("chart_yaml", "values"),
    [
        (
            f"apiVersion: v2\nname: {NAME}\nversion: {VERSION}\nkubeVersion: '>= {DIGITS}'\n",
            "a: 1\n",
        ),
        (f"apiVersion: v2\nname: {NAME}\nversion: {VERSION}\nkubeVersion: {DIGITS}\n", "a: 1\n"),
        (f"apiVersion: v2\nname: {NAME}\nversion: {DIGITS}\n", "a: 1\n"),
        (f"apiVersion: v2\nname: {NAME}\nversion: 1e99999\n", "a: 1\n"),
        (f"apiVersion: v2\nname: {NAME}\nversion: {VERSION}\n", f"a: {DIGITS}\nb: 1e99999\n"),
        (f"apiVersion: v2\nname: {NAME}\nversion: {VERSION}\n", "a: " + "[" * 3000 + "]" * 3000),
        (
            f"apiVersion: v2\nname: {NAME}\nversion: {VERSION}\n",
            "a: " + "{b: " * 500 + "1" + "}" * 500,
        ),
    ],
    ids=[
        "kubeVersion >= 5000 digits",
        "kubeVersion 5000 digits",
        "version 5000 digits",
        "version 1e99999",
        "values 5000 digits",
        "values 3000 deep",
        "values 500 deep",
    ],
)
def test_huge_numbers_and_deep_nesting_are_a_finding_or_one_line(
    chart_yaml: str, values: str, charts: Path
) -> None:
    write_chart(chart_dir(charts), chart_yaml=chart_yaml, values=values)
    outcome = verify(charts, {"a": 2})
    if isinstance(outcome, AicrError):
        refused(outcome)
    else:
        assert outcome.findings, shown(outcome)
        assert all(len(f.message) <= 2000 for f in outcome.findings)
        if "kubeVersion" in chart_yaml:
            assert [f.kind for f in outcome.findings] == [KUBE_VERSION]


def test_a_rendered_document_nested_too_deep_is_a_finding(charts: Path) -> None:
    deep = "a: " + "[" * 500 + "]" * 500 + "\n"
    write_chart(chart_dir(charts), {"cm.yaml": CONFIGMAP, "deep.yaml": deep})
    report = verify(charts)
    assert isinstance(report, VerifyReport), shown(report)
    assert [f.kind for f in report.findings] == [TEMPLATE]
    assert "deep.yaml" in report.findings[0].message


@pytest.mark.parametrize("constraint", [">= 1." + "9" * 5000, "9" * 5000, "> 1.34." + "9" * 30])
def test_a_recipe_kubernetes_version_with_a_huge_number_is_a_finding(
    constraint: str, charts: Path
) -> None:
    """The recipe's ``K8s.server.version`` is the recipe's text too: a number of thousands of
    digits once ended in ``[INTERNAL]`` (Python refuses to parse it); now one finding."""
    chart_yaml = f"apiVersion: v2\nname: {NAME}\nversion: {VERSION}\nkubeVersion: '>= 1.25'\n"
    write_chart(chart_dir(charts), chart_yaml=chart_yaml, values="a: 1\n")
    outcome = verify(charts, {"a": 2}, kubernetes=constraint)
    assert isinstance(outcome, VerifyReport), shown(outcome)
    assert [f.kind for f in outcome.findings] == [KUBE_VERSION]
    assert "no version can have" in outcome.findings[0].message
    assert len(outcome.findings[0].message) <= 2000
