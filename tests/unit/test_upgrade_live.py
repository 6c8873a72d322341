"""The installed side read from a cluster: Helm's release records (Secrets of type
helm.sh/release.v1, the release JSON gzipped and base64-encoded, base64-encoded again by
the API) through a loopback API server, and compared with a rendered target.

The records are written here the way Helm's Secret driver writes them (encodeRelease:
json.Marshal, gzip, base64 StdEncoding; the Secret's data.release holds those bytes); the
manifests in them are the real nvidia-dra-driver-gpu v0.4.1 chart rendered by the engine.
"""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.live.helm_releases import decode_release, newest, read_releases, records_of
from aicr_tui.core.services import upgrade as svc
from aicr_tui.core.verify import upgrade as u
from aicr_tui.core.verify import upgrade_verdicts as uv
from aicr_tui.core.verify.analysis import Verifier
from tests.unit.live_fakes import LoopbackServer, Reply, Request, write_kubeconfig
from tests.unit.test_upgrade_charts import DRA, comp
from tests.verify.matrix import UPSTREAM_CHARTS


def helm_secret(
    name: str,
    *,
    namespace: str = "nvidia-dra-driver",
    revision: int = 1,
    status: str = "deployed",
    chart: str = "dra-driver-nvidia-gpu",
    version: str = "0.4.1",
    config: dict[str, Any] | None = None,
    manifest: str = "",
    crds: dict[str, str] | None = None,
) -> dict[str, Any]:
    release = {
        "name": name,
        "namespace": namespace,
        "version": revision,
        "info": {"status": status},
        "chart": {
            "metadata": {"name": chart, "version": version},
            "values": {"driver": {"enabled": True}},
            "files": [
                {"name": path, "data": base64.b64encode(text.encode()).decode()}
                for path, text in (crds or {}).items()
            ],
        },
        "config": config or {},
        "manifest": manifest,
    }
    packed = base64.b64encode(gzip.compress(json.dumps(release).encode()))
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "helm.sh/release.v1",
        "metadata": {
            "name": f"sh.helm.release.v1.{name}.v{revision}",
            "namespace": namespace,
            "labels": {"owner": "helm", "name": name, "status": status, "version": str(revision)},
        },
        "data": {"release": base64.b64encode(packed).decode()},
    }


def rendered_manifest(version: str) -> str:
    """The chart rendered as Helm stores a release's manifest (``---`` + ``# Source:``)."""
    pytest.importorskip("helm_python")
    from aicr_tui.core.verify import helm

    c = comp(version)
    chart = helm.load_chart(UPSTREAM_CHARTS / f"{DRA}-{version}")
    out = chart.render(c.values, release=c.name, namespace=c.namespace)
    return "".join(
        f"---\n# Source: {path}\n{text}\n"
        for path, text in sorted(out.items())
        if text.strip() and not path.endswith("NOTES.txt")
    )


def test_a_record_decodes_as_helm_writes_it() -> None:
    crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
    (rel,) = records_of(
        [helm_secret("dra", config={"a": 1}, manifest="x", crds={"crds/c.yaml": crd})], "test"
    )
    assert (rel.name, rel.namespace, rel.revision, rel.status) == (
        "dra",
        "nvidia-dra-driver",
        1,
        "deployed",
    )
    assert (rel.chart, rel.version, rel.values, rel.manifest) == (
        "dra-driver-nvidia-gpu",
        "0.4.1",
        {"a": 1},
        "x",
    )
    assert rel.crds == [crd] and rel.defaults == {"driver": {"enabled": True}}


def test_the_newest_revision_of_each_release_is_kept() -> None:
    rels = records_of(
        [helm_secret("dra", revision=1, version="0.4.0"), helm_secret("dra", revision=3),
         helm_secret("dra", revision=2, version="0.4.0"), {"type": "Opaque", "data": {}}],
        "test",
    )  # fmt: skip
    (rel,) = newest(rels)
    assert (rel.revision, rel.version) == (3, "0.4.1")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("not base64!", "is not base64 text"),
        (base64.b64encode(base64.b64encode(b"\x1f\x8bnot gzip")).decode(), "is not valid gzip"),
        (
            base64.b64encode(base64.b64encode(gzip.compress(b"[1]", mtime=0))).decode(),
            "is not a JSON object",
        ),
    ],
)
def test_a_broken_record_is_one_error_naming_it(data: str, problem: str) -> None:
    with pytest.raises(AicrError) as info:
        decode_release(data, "ns/sh.helm.release.v1.x.v1")
    assert problem in info.value.message and "ns/sh.helm.release.v1.x.v1" in info.value.message


def serve_releases(secrets: list[dict[str, Any]], seen: list[Request]) -> Any:
    """GET /api/v1/secrets, one Secret per page (the continue token is the next index)."""

    def handler(request: Request) -> Reply:
        seen.append(request)
        if request.path != "/api/v1/secrets":
            return Reply(404, {"kind": "Status", "code": 404})
        start = int(request.param("continue") or 0)
        page = secrets[start : start + 1]
        more = start + 1 < len(secrets)
        meta = {"continue": str(start + 1)} if more else {}
        return Reply(
            200, {"kind": "SecretList", "apiVersion": "v1", "metadata": meta, "items": page}
        )

    return handler


def test_releases_are_read_through_the_api_page_by_page(tmp_path: Path) -> None:
    seen: list[Request] = []
    secrets = [
        helm_secret("dra", revision=1),
        helm_secret("dra", revision=2),
        helm_secret("other", namespace="x"),
    ]
    with LoopbackServer(serve_releases(secrets, seen)) as server:
        kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", server.url)
        releases, source = read_releases(str(kubeconfig), None, timeout=5)
    assert [(r.namespace, r.name, r.revision) for r in releases] == [
        ("nvidia-dra-driver", "dra", 2),
        ("x", "other", 1),
    ]
    assert len(seen) == 3
    assert {r.param("fieldSelector") for r in seen} == {"type=helm.sh/release.v1"}
    assert {r.param("labelSelector") for r in seen} == {"owner=helm"}
    assert all(r.method == "GET" for r in seen)  # read-only


def _target(version: str) -> svc.StackSide:
    side = u.rendered_side(comp(version), Verifier([UPSTREAM_CHARTS]))
    assert not side.unknown
    return svc.StackSide("target", {DRA: side})


def test_a_live_release_compares_like_its_rendered_chart() -> None:
    """The v0.4.1 release read back from its record, against 0.5.0-dev rendered: the same
    reasons as rendering both (test_upgrade_charts), the major change only."""
    (rel,) = records_of(
        [helm_secret(DRA, config=comp("v0.4.1").values, manifest=rendered_manifest("v0.4.1"))], "t"
    )
    report = svc.check(svc.live_side([rel], _target("0.5.0-dev"), "test"), _target("0.5.0-dev"))
    (row,) = report.components
    assert (row.verdict, row.from_version, row.to_version) == (uv.MANUAL, "0.4.1", "0.5.0-dev")
    assert {r.kind for r in row.reasons} == {uv.CHART_MAJOR}


def test_a_release_installed_under_another_name_is_found_by_its_chart() -> None:
    (rel,) = records_of([helm_secret("dra", manifest=rendered_manifest("v0.4.1"))], "t")
    target = _target("v0.4.1")
    report = svc.check(svc.live_side([rel], target, "test"), target)
    (row,) = report.components
    assert row.verdict == uv.BLOCKED
    assert any(
        r.kind == uv.RELEASE_RENAMED and "nvidia-dra-driver/dra becomes" in r.message
        for r in row.reasons
    )


def test_a_release_that_is_not_deployed_is_unknown() -> None:
    (rel,) = records_of(
        [helm_secret(DRA, status="failed", manifest=rendered_manifest("v0.4.1"))], "t"
    )
    target = _target("v0.4.1")
    report = svc.check(svc.live_side([rel], target, "test"), target)
    assert report.components[0].verdict == uv.UNKNOWN
    assert report.exit_code == 11


def test_the_documented_role_grants_only_the_list_the_reader_makes() -> None:
    import yaml

    root = Path(__file__).resolve().parents[2]
    role = yaml.safe_load((root / "docs/rbac/aicr-tui-upgrade-check.yaml").read_text())
    assert role["kind"] == "ClusterRole"
    assert role["rules"] == [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}]
    assert "rbac/aicr-tui-upgrade-check.yaml" in (root / "docs/upgrade-check.md").read_text()


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [("name", "x; rm -rf ~", "not a valid Helm release name"),
     ("namespace", "Bad_NS\x1b[31m", "not a valid namespace")],
)  # fmt: skip
def test_a_record_naming_an_invalid_release_is_refused(
    field: str, value: str, problem: str
) -> None:
    """Names from the cluster end up in the steps a user runs: a record Helm could not
    have written (Helm validates both) is one error, not a command line."""
    secret = helm_secret("dra")
    packed = base64.b64decode(base64.b64decode(secret["data"]["release"]))
    release = json.loads(gzip.decompress(packed))
    release[field] = value
    secret["data"]["release"] = base64.b64encode(
        base64.b64encode(gzip.compress(json.dumps(release).encode()))
    ).decode()
    with pytest.raises(AicrError) as info:
        records_of([secret], "t")
    assert problem in info.value.message and "\x1b" not in info.value.render()


def test_uninstall_steps_quote_what_they_name() -> None:
    old = uv.Side("c", "rel;id", "team a", "c", "1.0.0", {}, [])
    new = uv.Side("c", "rel", "team-a", "c", "1.0.0", {}, [])
    (reason,) = u.compare_component(old, new)
    assert reason.kind == uv.RELEASE_RENAMED
    assert reason.steps[0].startswith("helm uninstall 'rel;id' -n 'team a' ")


def test_objects_another_release_owns_block_the_install() -> None:
    """The same chart installed earlier by hand as another chart name (so not matched as
    this component): every object the target would install is owned by that release."""
    (rel,) = records_of(
        [helm_secret("legacy", chart="legacy-dra", manifest=rendered_manifest("v0.4.1"))], "t"
    )
    target = _target("v0.4.1")
    live = svc.live_side([rel], target, "test")
    assert live.components == {} and [s.release for s in live.others] == ["legacy"]
    (row,) = svc.check(live, target).components
    assert row.verdict == uv.BLOCKED
    (owned,) = [r for r in row.reasons if r.kind == svc.OWNED]
    assert "owned by release nvidia-dra-driver/legacy" in owned.message


def _sides(**by_component: list[dict[str, Any]]) -> dict[str, uv.Side]:
    return {
        name: uv.Side(name, name, "ns", name, "1.0.0", {}, objs)
        for name, objs in by_component.items()
    }


def test_an_object_moving_between_components_needs_the_owner_upgraded_first() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}}
    old = svc.StackSide("old", _sides(a=[cm], b=[]))
    moved = svc.StackSide("new", _sides(a=[], b=[cm]))
    rows = {c.name: c for c in svc.check(old, moved).components}
    (reason,) = [r for r in rows["b"].reasons if r.kind == svc.OWNED]
    assert reason.verdict == uv.MANUAL and reason.steps == ("upgrade a before b",)
    both = svc.StackSide("new", _sides(a=[cm], b=[cm]))
    rows = {c.name: c for c in svc.check(old, both).components}
    assert rows["b"].verdict == uv.BLOCKED
