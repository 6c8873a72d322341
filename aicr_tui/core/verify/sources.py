"""Where a component's pinned chart comes from when it is verified.

``--charts DIR`` (repeatable) holds chart trees or ``.tgz`` archives named
``<component>-<version>`` (with or without the version's leading ``v``, as
the upstream chart trees are laid out); a directory with a ``values.yaml`` but no
``Chart.yaml`` is a values-only source and cannot be rendered. Without ``--charts`` the
chart is pulled with Helm from the repository the bundle names into the project cache
(``$AICR_TUI_CACHE_DIR`` or ``~/.cache/aicr-tui``, under ``charts/``), once per pin.

A pin that has no public chart tree may name a stand-in in the registry
(``helm.verifyStandIn``: a ``<name>-<version>`` source and the reason); the report then
says that the component was checked against the stand-in, never that the pin was.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from aicr_tui.core.foundation.cachedir import user_cache_dir

PULL_TIMEOUT_SECONDS = 60.0
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


@dataclass(frozen=True)
class ChartSource:
    kind: str
    """``chart`` (a tree or archive to render), ``values-only``, or ``missing``."""
    path: Path | None
    label: str
    """What the report names: the directory or archive, or where it was looked for."""
    stand_in: str = ""
    """Non-empty when this is a registry-declared stand-in for the pin: the reason."""


def version_variants(version: str) -> list[str]:
    bare = version[1:] if version.startswith("v") else version
    return list(dict.fromkeys([version, bare, f"v{bare}"]))


def _find_in(dirs: list[Path], names: list[str]) -> ChartSource | None:
    for base in dirs:
        for name in names:
            if not _SAFE.match(name):
                continue
            tree = base / name
            if (tree / "Chart.yaml").is_file():
                return ChartSource("chart", tree, str(tree))
            archive = base / f"{name}.tgz"
            if archive.is_file():
                return ChartSource("chart", archive, str(archive))
            for suffix in ("-values-only", "-values-excerpt"):
                values_only = base / f"{name}{suffix}"
                if (values_only / "values.yaml").is_file():
                    return ChartSource("values-only", values_only, str(values_only))
            if (tree / "values.yaml").is_file():
                return ChartSource("values-only", tree, str(tree))
    return None


def find_local(
    dirs: list[Path], component: str, chart: str, version: str, stand_in: tuple[str, str] | None
) -> ChartSource:
    names: list[str] = []
    for stem in dict.fromkeys([component, chart]):
        names += [f"{stem}-{v}" for v in version_variants(version)]
    hit = _find_in(dirs, names)
    if hit is not None:
        return hit
    if stand_in is not None:
        name, reason = stand_in
        hit = _find_in(dirs, [name])
        if hit is not None:
            return ChartSource(hit.kind, hit.path, hit.label, stand_in=reason)
    where = ", ".join(str(d) for d in dirs)
    return ChartSource("missing", None, f"no {names[0]}/ (or .tgz) under {where}")


def cache_root() -> Path | None:
    if os.environ.get("AICR_TUI_NO_CACHE"):
        return None
    explicit = os.environ.get("AICR_TUI_CACHE_DIR")
    if explicit:
        return Path(explicit) / "charts"
    base = user_cache_dir()
    return None if base is None else Path(base) / "charts"


def pulled(chart: str, repository: str, version: str, *, timeout: float) -> ChartSource:
    """The cached archive of this pin, pulling it with Helm the first time."""
    import hashlib
    import tempfile

    from aicr_tui.core.verify import helm

    root = cache_root()
    key = hashlib.sha256(f"{repository}\0{chart}\0{version}".encode()).hexdigest()[:16]
    if root is not None:
        target = root / key
        found = sorted(target.glob("*.tgz")) if target.is_dir() else []
        if found:
            return ChartSource("chart", found[0], f"{chart} {version} (cached {found[0]})")
    with tempfile.TemporaryDirectory(prefix="aicr-tui-pull-") as tmp:
        archive = helm.pull_chart(
            chart, repository=repository, version=version, destination=Path(tmp), timeout=timeout
        )
        if root is None:
            keep = Path(tempfile.mkdtemp(prefix="aicr-tui-chart-")) / archive.name
        else:
            (root / key).mkdir(parents=True, exist_ok=True)
            keep = root / key / archive.name
        staged = keep.with_name(f".{keep.name}.tmp")
        staged.write_bytes(archive.read_bytes())
        os.replace(staged, keep)
    return ChartSource("chart", keep, f"{chart} {version} from {repository}")
