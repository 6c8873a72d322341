"""Vendored charts (``bundle --vendor-charts``): each pinned chart's archive inside the
bundle, so its scripts install with no chart repository reachable.

The archives sit in ``charts/<chart>-<version>.tgz`` at the bundle root. Each is checked
before it is taken: a gzip tar whose members stay inside one top-level folder, whose
``Chart.yaml`` names the pinned chart and version. ``provenance.yaml`` records each
chart's component, source repository, version, file and sha256 (where the archive was
found, too); ``checksums.txt`` covers the archives and ``provenance.yaml`` like every
other file.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from aicr_tui.core.foundation.digest import sha256_hex
from aicr_tui.core.foundation.errors import AicrError, invalid
from aicr_tui.core.foundation.yamlio import dump_yaml, load_yaml_plain

VENDOR_DIR = "charts"
PROVENANCE_FILE = "provenance.yaml"
MAX_ARCHIVE_BYTES = 64 * 1_048_576
MAX_CHART_YAML_BYTES = 1_048_576


@dataclass(frozen=True)
class VendoredChart:
    component: str
    chart: str
    version: str
    source: str
    origin: str
    """Where the archive was read from (the --charts directory file, or the pull cache)."""
    data: bytes = field(repr=False)

    @property
    def file(self) -> str:
        return f"{VENDOR_DIR}/{self.chart}-{self.version}.tgz"

    @property
    def sha256(self) -> str:
        return sha256_hex(self.data)

    @property
    def oci_tag(self) -> str:
        """The tag ``helm push`` gives this archive: its Chart.yaml version, ``+`` as ``_``."""
        return str(_chart_yaml(self.data, self.file).get("version", "")).replace("+", "_")

    def tree(self) -> dict[str, bytes]:
        """The chart's files by their path inside the chart folder (the archive unpacked;
        :func:`check_archive` has refused anything but plain files in one folder)."""
        out: dict[str, bytes] = {}
        with tarfile.open(fileobj=io.BytesIO(self.data), mode="r:gz") as tar:
            for m in tar.getmembers():
                handle = tar.extractfile(m) if m.isfile() else None
                rel = m.name.split("/", 1)[1] if "/" in m.name else ""
                if handle is not None and rel:
                    out[rel] = handle.read()
        return out


def _bare(version: str) -> str:
    return version[1:] if version.startswith("v") else version


def check_archive(data: bytes, chart: str, version: str, where: str) -> None:
    """Refuse an archive that is not this pin's chart (one line naming ``where``)."""
    if len(data) > MAX_ARCHIVE_BYTES:
        raise invalid(f"chart archive {where} exceeds {MAX_ARCHIVE_BYTES} bytes")
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members = tar.getmembers()
            tops = set()
            for m in members:
                parts = m.name.split("/")
                if m.name.startswith("/") or ".." in parts or not (m.isfile() or m.isdir()):
                    raise invalid(
                        f"chart archive {where} holds {m.name!r}, which is not a plain file "
                        "inside the chart folder"
                    )
                tops.add(parts[0])
            if len(tops) != 1:
                raise invalid(f"chart archive {where} does not hold exactly one chart folder")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise invalid(f"chart archive {where} is not a gzip tar Helm can read", str(exc)) from None
    doc = _chart_yaml(data, where)
    name = str(doc.get("name", ""))
    got = str(doc.get("version", ""))
    if name != chart or _bare(got) != _bare(version):
        raise invalid(
            f"chart archive {where} is chart {name or '?'} {got or '?'}, "
            f"but the bundle pins {chart} {version}"
        )


def _chart_yaml(data: bytes, where: str) -> dict[str, Any]:
    """The archive's top-level ``Chart.yaml`` as a mapping (empty when it is no mapping)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            members = tar.getmembers()
            top = members[0].name.split("/")[0] if members else ""
            meta = next((m for m in members if m.name == f"{top}/Chart.yaml"), None)
            if meta is None or not meta.isfile() or meta.size > MAX_CHART_YAML_BYTES:
                raise invalid(f"chart archive {where} has no readable {top}/Chart.yaml")
            handle = tar.extractfile(meta)
            text = handle.read().decode("utf-8") if handle is not None else ""
    except (tarfile.TarError, OSError, EOFError, UnicodeDecodeError) as exc:
        raise invalid(f"chart archive {where} is not a gzip tar Helm can read", str(exc)) from None
    try:
        doc: Any = load_yaml_plain(text, f"{where}: Chart.yaml")
    except AicrError as exc:
        raise invalid(f"chart archive {where} has an unreadable Chart.yaml", exc) from None
    return doc if isinstance(doc, dict) else {}


def vendored_files(vendored: Mapping[str, VendoredChart]) -> dict[str, bytes]:
    """The archives and ``provenance.yaml`` the bundle carries."""
    files = {v.file: v.data for v in vendored.values()}
    doc = {
        "apiVersion": "aicr.run/v1",
        "kind": "ChartProvenance",
        "charts": [
            {
                "component": v.component,
                "chart": v.chart,
                "version": v.version,
                "source": v.source,
                "file": v.file,
                "sha256": v.sha256,
                "origin": v.origin,
            }
            for _name, v in sorted(vendored.items())
        ],
    }
    files[PROVENANCE_FILE] = dump_yaml(doc).encode("utf-8")
    return files


def readme_section(vendored: Mapping[str, VendoredChart], deployer: str = "helm") -> str:
    """The bundle README's note on its vendored charts (appended when there are any)."""
    from aicr_tui.core.bundler import prose

    rows = "".join(
        prose.phrase(
            "vendored-row",
            "row",
            component=v.component,
            file=v.file,
            source=v.source,
            version=v.version,
        )
        for _name, v in sorted(vendored.items())
    )
    how = prose.phrases()["how"]
    return prose.section("vendored", how=how.get(deployer, how["default"]), rows=rows)
    how = {
        "argocd": "each chart is also unpacked in its folder's `chart/`, and its Application "
        "installs it from there, a path in this bundle's own Git repository",
        "flux": "the README's `helm push` lines put them beside the bundle in its registry, "
        "and each HelmRelease installs its chart from there",
        "argocd-helm": "the README's `helm push` lines put them in the OCI registry given "
        "with `--repo`, and each Application installs its chart from there (`.helmignore` "
        "keeps them out of the root chart)",
    }.get(
        deployer,
        "`deploy.sh`, each `install.sh`, `undeploy.sh` (its `helm show crds`) and helmfile read "
        "them from there (the note above about the chart repositories `deploy.sh` used does "
        "not apply)",
    )
    return (
        "\n## Vendored charts\n\n"
        "This bundle carries every pinned chart archive in `charts/` (built with "
        f"`--vendor-charts`): {how}, so no chart repository has to be reachable. "
        "`provenance.yaml` records each chart's source, version and sha256; `sha256sum -c "
        "checksums.txt` checks them. Container images are still pulled from their registries: "
        "`aicr-tui mirror list . -o hauler` (or `-o zarf`) lists them for a mirror.\n\n"
        "| component | archive | source | version |\n|---|---|---|---|\n" + rows
    )
