"""The verification calls the CLI and the wizard make.

``verify_plan(plan, charts=…)`` checks a bundle before it is written (``bundle --verify``,
the wizard's preview); ``verify_bundle_dir(path, charts=…)`` reads a written bundle
(``aicr-tui verify``): ``bundle-info.yaml`` for the steps in order, ``recipe.yaml`` for each
step's chart, pin and the Kubernetes constraint, each folder's ``values.yaml`` (with
``cluster-values.yaml`` on top, as ``install.sh`` passes it) and ``manifests/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.verify.analysis import Verifier
from aicr_tui.core.verify.model import VerifyComponent, VerifyInput, VerifyReport
from aicr_tui.core.verify.sources import PULL_TIMEOUT_SECONDS

if TYPE_CHECKING:
    from aicr_tui.core.bundler.model import BundlePlan
    from aicr_tui.core.documents.recipe_result import RecipeResult
    from aicr_tui.core.recipe.catalog import Catalog

REPORT_NAME = "verify-report.json"


def _stand_ins(catalog: Catalog | None) -> Any:
    if catalog is None:
        from aicr_tui.core.recipe.catalog import load_catalog

        catalog = load_catalog()

    def lookup(name: str) -> tuple[str, str] | None:
        entry = catalog.registry.get(name)
        helm = entry.helm if entry is not None else None
        extra = getattr(helm, "model_extra", None) or {}
        stand_in = extra.get("verifyStandIn")
        if isinstance(stand_in, dict) and stand_in.get("source"):
            source = str(stand_in["source"])
            reason = str(stand_in.get("reason") or "")
            return source, f"{source}: {reason}" if reason else source
        return None

    return lookup


def chart_verifier(
    charts: list[Path] | None = None,
    *,
    catalog: Catalog | None = None,
    pull_timeout: float = PULL_TIMEOUT_SECONDS,
) -> Verifier:
    """The Verifier ``aicr-tui verify``, ``bundle --verify`` and the wizard's Charts tab use:
    local ``charts`` (else each chart pulled), with the catalog's declared stand-ins."""
    return Verifier(charts, stand_ins=_stand_ins(catalog), pull_timeout=pull_timeout)


def kubernetes_constraint(recipe: RecipeResult) -> str:
    for c in recipe.constraints:
        if c.name == "K8s.server.version":
            return str(c.value)
    return ""


def _cluster_provided(
    recipe: RecipeResult, rendered: set[str], user_skipped: set[str]
) -> list[VerifyComponent]:
    out: list[VerifyComponent] = []
    for ref in recipe.componentRefs:
        if ref.name in rendered or ref.name in user_skipped or ref.enabled:
            continue
        out.append(
            VerifyComponent(
                name=ref.name,
                folder="(cluster)",
                namespace=ref.namespace or ref.name,
                chart=ref.chart or ref.name,
                source=ref.source,
                version=ref.version,
                values={},
                manifests={},
            )
        )
    return out


def _helm_read(data: bytes | None, where: str) -> dict[str, Any]:
    """A values file as Helm reads it (Go's YAML 1.1 reader), not as written in Python."""
    from aicr_tui.core.verify import helm

    if not data:
        return {}
    try:
        doc = helm.parse_document(data.decode("utf-8"))
    except (helm.RenderError, UnicodeDecodeError) as exc:
        raise invalid(f"{where} is not a values file Helm can read", str(exc)) from None
    return doc or {}


def plan_input(plan: BundlePlan) -> VerifyInput:
    """The plan's steps with the values Helm will read from the files the plan writes."""
    comps: list[VerifyComponent] = []
    for c in plan.components:
        from aicr_tui.core.bundler.render import values_yaml

        where = f"{c.folder}/values.yaml"
        # The file the plan writes; a layout that keeps values elsewhere (GitOps
        # deployers) is read from the same serialisation.
        written = plan.files.get(where) or values_yaml(c.values).encode("utf-8")
        values = _helm_read(written, where)
        if c.cluster_values is not None:
            cwhere = f"{c.folder}/cluster-values.yaml"
            _overlay(values, _helm_read(plan.files.get(cwhere), cwhere))
        comps.append(
            VerifyComponent(
                name=c.name,
                folder=c.folder,
                namespace=c.namespace,
                chart=c.chart,
                source=c.source,
                version=c.version,
                values=values,
                manifests=dict(c.manifests),
            )
        )
    user_skipped = {
        n for n, why in plan.skipped.items() if not why.startswith("the recipe disables it")
    }
    rendered = {c.name for c in plan.components}
    return VerifyInput(
        comps,
        kubernetes_constraint(plan.recipe),
        _cluster_provided(plan.recipe, rendered, user_skipped),
    )


def _overlay(base: dict[str, Any], top: dict[str, Any]) -> None:
    """Helm's coalescing of a later -f file: maps merge, everything else replaces."""
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _overlay(base[key], value)
        else:
            base[key] = value


def verify_plan(
    plan: BundlePlan,
    *,
    charts: list[Path] | None = None,
    catalog: Catalog | None = None,
    verifier: Verifier | None = None,
) -> VerifyReport:
    verifier = verifier or chart_verifier(charts, catalog=catalog)
    return verifier.verify(plan_input(plan))


# --------------------------------------------------------------- a written bundle
def _read_yaml(path: Path, what: str) -> Any:
    from aicr_tui.core.foundation.fileio import read_document
    from aicr_tui.core.foundation.yamlio import load_yaml_plain

    return load_yaml_plain(read_document(path, what), str(path))


def _read_values(path: Path, what: str) -> dict[str, Any]:
    from aicr_tui.core.foundation.fileio import read_document

    return _helm_read(read_document(path, what).encode("utf-8"), str(path))


def bundle_input(bundle: Path) -> VerifyInput:
    from aicr_tui.core.recipe.loading import load_recipe

    if not bundle.exists():
        raise invalid(
            f'bundle directory "{bundle}" does not exist',
            "expected the output directory of aicr-tui bundle",
        )
    if not bundle.is_dir():
        raise invalid(
            f"{bundle} is not a bundle directory", "expected the output of aicr-tui bundle"
        )
    info_path = bundle / "bundle-info.yaml"
    if not info_path.is_file():
        raise invalid(f"{bundle} is not a bundle directory", "it has no bundle-info.yaml")
    info = _read_yaml(info_path, "bundle-info.yaml")
    releases = (info.get("layout") or {}).get("releases") if isinstance(info, dict) else None
    if not isinstance(releases, list) or not releases:
        raise invalid(f"{info_path}: expected layout.releases, a list of the bundle's steps")
    recipe = load_recipe(str(bundle / "recipe.yaml"))
    refs = {ref.name: ref for ref in recipe.componentRefs}
    comps: list[VerifyComponent] = []
    entries: dict[str, list[dict[str, Any]]] = {}
    for rel in releases:
        if not isinstance(rel, dict):
            raise invalid(f"{info_path}: layout.releases entries must be maps")
        name = str(rel.get("component") or "")
        if name not in refs:
            raise invalid(f"{info_path}: release {name!r} is not a component of recipe.yaml")
        entries.setdefault(name, []).append(rel)
    for name, group in entries.items():
        # Every deployer's layout: the entry named after the component holds its values
        # (NNN-<c>/, <c>/ for flux, static/NNN-<c>/ for argocd-helm); -post and -readiness
        # entries are folders of their own, and their raw manifests are listed by path.
        ref = refs[name]
        main = next((r for r in group if str(r.get("name") or "") == name), group[0])
        folder = _folder(bundle, info_path, name, main.get("path"))
        values_path = bundle / folder / "values.yaml"
        values = _read_values(values_path, f"{folder}/values.yaml") if values_path.is_file() else {}
        cluster_path = bundle / folder / "cluster-values.yaml"
        if cluster_path.is_file():
            _overlay(values, _read_values(cluster_path, f"{folder}/cluster-values.yaml"))
        manifests: dict[str, str] = {}
        for rel in group:
            if str(rel.get("name") or "").endswith("-readiness") and rel is not main:
                continue  # a generated wait Job, not one of the recipe's manifests
            listed = rel.get("manifest")
            if isinstance(listed, list):
                for item in listed:
                    path = _folder(bundle, info_path, name, item, file=True)
                    manifests[Path(path).name] = _manifest_text(bundle / path, path)
            elif rel is main:
                mdir = bundle / folder / "manifests"
                if mdir.is_dir():
                    for f in sorted(mdir.iterdir()):
                        if f.is_file() and f.suffix in (".yaml", ".yml"):
                            where = f"{folder}/manifests/{f.name}"
                            manifests[f.name] = _manifest_text(f, where)
        comps.append(
            VerifyComponent(
                name=name,
                folder=folder,
                namespace=str(main.get("namespace") or ref.namespace or name),
                chart=ref.chart or name,
                source=ref.source,
                version=ref.version,
                values=values,
                manifests=manifests,
            )
        )
    settings = ((info.get("build") or {}).get("settings") or {}) if isinstance(info, dict) else {}
    user_skipped = _user_skipped(recipe, settings.get("set") or [])
    rendered = {c.name for c in comps}
    return VerifyInput(
        comps, kubernetes_constraint(recipe), _cluster_provided(recipe, rendered, user_skipped)
    )


def _folder(bundle: Path, info_path: Path, name: str, value: object, *, file: bool = False) -> str:
    """A path from bundle-info.yaml, relative, inside the bundle and present."""
    folder = str(value or "")
    parts = folder.split("/")
    bad = any(not p or p.startswith(".") for p in parts)
    target = bundle / folder
    if not folder or bad or not (target.is_file() if file else target.is_dir()):
        what = "file" if file else "folder"
        raise invalid(f"{info_path}: release {name} names a missing {what} {folder!r}")
    return folder


def _manifest_text(path: Path, where: str) -> str:
    """A raw manifest as the recipe rendered it (a local chart's template escapes its
    ``{{``/``}}`` for Helm; undo that)."""
    from aicr_tui.core.foundation.fileio import read_document

    text = read_document(path, where)
    return text.replace('{{ "{{" }}', "{{").replace('{{ "}}" }}', "}}")


def _user_skipped(recipe: RecipeResult, sets: list[Any]) -> set[str]:
    """Components dropped with ``--set C:enabled=false`` (recorded in bundle-info)."""
    from aicr_tui.core.recipe.catalog import load_catalog

    registry = load_catalog().registry
    out: set[str] = set()
    for entry in sets:
        text = str(entry)
        text = text.split(" ", 1)[-1] if text.startswith("--set ") else text
        key, _, rest = text.partition(":")
        if rest.split("=", 1)[0] != "enabled":
            continue
        for ref in recipe.componentRefs:
            reg = registry.get(ref.name)
            aliases = reg.valueOverrideKeys if reg is not None else []
            if key == ref.name or key in aliases:
                out.add(ref.name)
    return out


def verify_bundle_dir(
    bundle: Path,
    *,
    charts: list[Path] | None = None,
    catalog: Catalog | None = None,
) -> VerifyReport:
    data = bundle_input(bundle)
    return chart_verifier(charts, catalog=catalog).verify(data)
