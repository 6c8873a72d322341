"""The recipe catalog: overlays, mixins, the component registry and values files.

Layout (upstream schema): ``registry.yaml`` (ComponentRegistry), ``overlays/base.yaml``
(the root), ``overlays/*.yaml`` (RecipeMetadata keyed by ``metadata.name``),
``mixins/*.yaml`` (RecipeMixin), ``components/<name>/values*.yaml`` and manifests.

:func:`load_catalog` parses and checks everything once per directory and process, and
precomputes every overlay's inheritance chain. Parsed documents are also kept in a small
on-disk cache keyed by file sizes and modification times, because the pure-Python YAML
parser would otherwise dominate the start-up of a one-shot ``aicr-tui recipe``.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from aicr_tui.core import __version__
from aicr_tui.core.documents.criteria import DIMENSIONS, Criteria, overlay_criteria, valid_values
from aicr_tui.core.documents.recipe_result import (
    API_AUTHORING,
    API_PROFILE,
    Constraint,
    check_component_ref,
)
from aicr_tui.core.foundation import names
from aicr_tui.core.foundation.cachedir import user_cache_dir
from aicr_tui.core.foundation.digest import blake2b_256
from aicr_tui.core.foundation.errors import AicrError, invalid, not_found, validate_document
from aicr_tui.core.foundation.fileio import MAX_DOCUMENT_BYTES, read_document
from aicr_tui.core.foundation.yamlio import load_yaml_plain
from aicr_tui.core.recipe.catalog_models import (
    REGISTRY_KIND,
    Mixin,
    MixinSpec,
    Overlay,
    OverlaySpec,
    Registry,
    RegistryComponent,
)
from aicr_tui.core.recipe.constraints import parse_path
from aicr_tui.core.recipe.profiles import owned_paths, validate_declaration

_T = TypeVar("_T")

OVERLAY_KIND = "RecipeMetadata"
MIXIN_KIND = "RecipeMixin"
AUTHORING_VERSIONS = (API_AUTHORING, "aicr.run/v1alpha2")
PROFILE_VERSIONS = (API_PROFILE, "aicr.run/v1alpha3")
KNOWN_KINDS = (
    OVERLAY_KIND,
    MIXIN_KIND,
    REGISTRY_KIND,
    "RecipeResult",
    "RecipeCriteria",
    "Snapshot",
    "BundleInfo",
    "AICRConfig",
    "ValidatorCatalog",
)
CACHE_FORMAT = 4  # 4: BLAKE2b; 3: validated models, sealed (2 parsed documents; 1 sorted keys)


# ---------------------------------------------------------------------------- catalog
@dataclass
class Catalog:
    """A loaded catalog. Trees it returns are shared: treat them as read-only."""

    data_dir: Path
    external: Path | None
    base: Overlay
    overlays: dict[str, Overlay]
    mixins: dict[str, Mixin]
    registry: Registry
    files: dict[str, Path]
    registered: dict[str, set[str]]
    _docs: dict[str, Any] = field(default_factory=dict, repr=False)
    _values: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False)

    def overlay(self, name: str) -> Overlay:
        if name == "base":
            return self.base
        found = self.overlays.get(name)
        if found is None:
            raise not_found(f'overlay "{name}" is not in the catalog')
        return found

    def has_file(self, rel: str) -> bool:
        return rel in self.files

    def file_path(self, rel: str) -> Path:
        """The on-disk file for a catalog-relative path (``--data`` layer first)."""
        _check_rel(rel)
        path = self.files.get(rel)
        if path is None:
            raise invalid(f'catalog file "{rel}" does not exist in {self.data_dir}')
        return path

    def read_text(self, rel: str) -> str:
        return read_document(self.file_path(rel), "catalog", cap=MAX_DOCUMENT_BYTES)

    def read_values_file(self, rel: str) -> dict[str, Any]:
        """A parsed values file (cached; read-only: copy before editing)."""
        cached = self._values.get(rel)
        if cached is not None:
            return cached
        doc = self._docs.get(rel)
        if doc is None:
            doc = load_yaml_plain(
                self.read_text(rel), f'values file "{rel}"', refuse_lone_surrogates=True
            )
        if doc is None:
            doc = {}
        if not isinstance(doc, dict):
            raise invalid(f'values file "{rel}" is not a mapping of Helm values')
        self._values[rel] = doc
        return doc

    def criteria_values(self, dimension: str) -> list[str]:
        return valid_values(dimension, self.registered)

    def memoized(self, key: Hashable, build: Callable[[], _T]) -> _T:
        """The value cached under ``key`` for this catalog, built once (read-only once built).

        The recipe engine keeps per-catalog results here (candidates, merged compositions,
        finalised components); a build that raises caches nothing.
        """
        if key in self._memo:
            cached: _T = self._memo[key]
            return cached
        value = build()
        self._memo[key] = value
        return value


_CATALOGS: dict[tuple[str, str], Catalog] = {}


def default_data_dir() -> Path:
    """The shipped ``aicr_tui/recipes/`` directory (beside ``aicr_tui/core/``)."""
    return Path(__file__).resolve().parents[2] / "recipes"


def load_catalog(
    data_dir: Path | str | None = None, *, external: Path | str | None = None
) -> Catalog:
    """Load (once per process) the catalog at ``data_dir``, optionally layered with ``--data``."""
    if data_dir is None and external is None:
        default = _CATALOGS.get(("", ""))
        if default is not None:
            return default
        catalog = load_catalog(default_data_dir())
        _CATALOGS[("", "")] = catalog
        return catalog
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    ext = Path(external) if external is not None else None
    key = (str(root.resolve()), str(ext.resolve()) if ext else "")
    cached = _CATALOGS.get(key)
    if cached is not None:
        return cached
    catalog = _build(root, ext)
    _CATALOGS[key] = catalog
    return catalog


def clear_catalog_cache() -> None:
    _CATALOGS.clear()


def _check_rel(rel: str) -> None:
    parts = Path(rel).parts
    if not rel or os.path.isabs(rel) or ".." in parts:
        raise invalid(f'catalog path "{rel}" must be relative and must not contain ".."')


def _walk(root: Path, *, reject_symlinks: bool) -> dict[str, Path]:
    """Every file under ``root`` by catalog-relative path, in ``os.walk`` order (sorted,
    files before subdirectories). Symlinked files are skipped (refused for ``--data``);
    symlinked directories are not entered; unreadable directories are skipped."""
    files: dict[str, Path] = {}
    _scan(str(root), "", files, reject_symlinks=reject_symlinks)
    return files


def _scan(directory: str, prefix: str, files: dict[str, Path], *, reject_symlinks: bool) -> None:
    # os.scandir reads each entry's type from the directory itself: no stat per file.
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    subdirs = []
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            if not entry.is_symlink():
                subdirs.append(entry)
            continue
        if entry.is_symlink():
            if reject_symlinks:
                raise invalid(f'--data file "{entry.path}" is a symlink; symlinks are not allowed')
            continue
        files[prefix + entry.name] = Path(entry.path)
    for entry in subdirs:
        _scan(entry.path, f"{prefix}{entry.name}/", files, reject_symlinks=reject_symlinks)


def _is_yaml(rel: str) -> bool:
    return rel.endswith((".yaml", ".yml"))


def _parsed_rels(files: dict[str, Path]) -> list[str]:
    """Files parsed up front: registry, overlays, mixins and values files."""
    out = []
    for rel in files:
        if not _is_yaml(rel) or "checks/" in rel:
            continue
        if rel == "registry.yaml" or rel.startswith(("overlays/", "mixins/")):
            out.append(rel)
        elif rel.startswith("components/") and "/manifests/" not in rel:
            name = rel.rsplit("/", 1)[-1]
            if name.startswith("values"):
                out.append(rel)
    return out


# ------------------------------------------------------------------ the validated cache
# A catalog that passed every load-time check is stored as JSON (``model_dump()`` of its
# models, the values files as parsed) under a key hashed from the content of every parsed
# file, its catalog-relative path and location, this build's version and CACHE_FORMAT. A
# later process with the same content rebuilds the same models from those dumps (pydantic's
# ``model_validate``), parsing no YAML and running no load-time check. Any edit under
# aicr_tui/recipes/ or a ``--data`` layer changes the key. The file's first line seals its body with a BLAKE2b-256:
# an edited, truncated or foreign file is ignored and rebuilt, and so is one that is not a
# regular file, not the user's own, or writable by others. Only plain JSON is ever read
# back (never pickle or marshal), and nothing from it is executed.
_CACHE_MAGIC = "aicr-tui catalog cache"

# BLAKE2b-256 (aicr_tui.core.foundation.digest): as strong as SHA-256 and, without OpenSSL, four
# times faster (the ~200 KB a cache hit hashes cost ~9M instructions with CPython's SHA-256).
_digest = blake2b_256


_CACHE_MAX_BYTES = 64 * 1024 * 1024


def _cache_dir() -> Path | None:
    if os.environ.get("AICR_TUI_NO_CACHE"):
        return None
    explicit = os.environ.get("AICR_TUI_CACHE_DIR")
    if explicit:
        return Path(explicit)
    # $XDG_CACHE_HOME/aicr-tui or ~/.cache/aicr-tui on Linux; the platform's cache elsewhere
    found = user_cache_dir()
    if found is None or not Path(found).is_absolute():  # no home directory: run without it
        return None
    return Path(found)


def _read_regular(path: Path | str, cap: int, *, own: bool = False) -> bytes | None:
    """A regular file's bytes (None when it is anything else, larger than ``cap``, or, with
    ``own``, not this user's or writable by group or others). Never blocks on a FIFO."""
    flags = (
        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | (getattr(os, "O_NOFOLLOW", 0) if own else 0)
    )
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return None
        if own and (info.st_mode & 0o022 or (hasattr(os, "getuid") and info.st_uid != os.getuid())):
            return None
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            total += len(chunk)
            if total > cap:
                return None
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)


def _content_key(files: dict[str, Path], rels: Iterable[str]) -> str | None:
    """The cache key of these files' content (None when one cannot be read plainly: the
    full load then reports it)."""
    h = _digest(f"{CACHE_FORMAT}:{__version__}\n".encode())
    for rel in rels:
        data = _read_regular(files[rel], MAX_DOCUMENT_BYTES)
        if data is None:
            return None
        h.update(f"{rel}\0{files[rel]}\0".encode())
        h.update(_digest(data).digest())
    return h.hexdigest()[:32]


def _seal(key: str, body: bytes) -> bytes:
    return f"{_CACHE_MAGIC} {CACHE_FORMAT} {key} {_digest(body).hexdigest()}\n".encode()


def _read_cache(path: Path, key: str) -> dict[str, Any] | None:
    data = _read_regular(path, _CACHE_MAX_BYTES, own=True)
    if data is None:
        return None
    header, newline, body = data.partition(b"\n")
    if not newline or header + newline != _seal(key, body):
        return None
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return payload if isinstance(payload, dict) else None


def _store_cache(path: Path, payload: dict[str, Any]) -> None:
    """Best effort: a cache that cannot be written (or is not JSON-exact) is skipped."""
    tmp: str | None = None
    try:
        text = json.dumps(payload)  # never sort: key order in values is output order
        if json.loads(text) != payload:
            return
        body = text.encode("ascii")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".catalog.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(_seal(path.stem.removeprefix("catalog-"), body) + body)
        os.replace(tmp, path)
        tmp = None
        _prune_cache(path.parent, keep=path)
    except (OSError, TypeError, ValueError, RecursionError):
        return
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _prune_cache(directory: Path, *, keep: Path, limit: int = 8) -> None:
    """Keep the newest few caches; every catalog edit leaves a stale one behind."""
    entries = sorted(
        (p for p in directory.glob("catalog-*.json") if p != keep),
        key=lambda p: p.stat().st_mtime,
        reverse=True,
    )
    for stale in entries[limit - 1 :]:
        stale.unlink(missing_ok=True)


def _overlay_record(ov: Overlay) -> dict[str, Any]:
    return {
        "name": ov.name,
        "api_version": ov.api_version,
        "path": ov.path,
        "spec": ov.spec.model_dump(),
        "criteria": None if ov.criteria is None else ov.criteria.model_dump(),
        "chain": list(ov.chain),
        "owned_paths": ov.owned_paths,
    }


def _overlay_from(record: dict[str, Any]) -> Overlay:
    criteria = record["criteria"]
    return Overlay(
        name=record["name"],
        api_version=record["api_version"],
        spec=OverlaySpec.model_validate(record["spec"]),
        path=record["path"],
        criteria=None if criteria is None else Criteria.model_construct(**criteria),
        chain=tuple(record["chain"]),
        owned_paths={k: list(v) for k, v in record["owned_paths"].items()},
    )


def _payload(catalog: Catalog) -> dict[str, Any]:
    return {
        "registry": catalog.registry.model_dump(),
        "base": _overlay_record(catalog.base),
        "overlays": [_overlay_record(ov) for ov in catalog.overlays.values()],
        "mixins": [
            {"name": m.name, "path": m.path, "spec": m.spec.model_dump()}
            for m in catalog.mixins.values()
        ],
        "values": catalog._docs,
    }


def _from_payload(
    payload: dict[str, Any], root: Path, ext: Path | None, files: dict[str, Path]
) -> Catalog:
    overlays = {ov.name: ov for ov in map(_overlay_from, payload["overlays"])}
    mixins = {
        m["name"]: Mixin(name=m["name"], spec=MixinSpec.model_validate(m["spec"]), path=m["path"])
        for m in payload["mixins"]
    }
    values = payload["values"]
    if not isinstance(values, dict):
        raise TypeError("values")
    return Catalog(
        data_dir=root,
        external=ext,
        base=_overlay_from(payload["base"]),
        overlays=overlays,
        mixins=mixins,
        registry=Registry.model_validate(payload["registry"]),
        files=files,
        registered=_registered(overlays),
        _docs=values,
    )


def _registered(overlays: dict[str, Overlay]) -> dict[str, set[str]]:
    registered: dict[str, set[str]] = {d: set() for d in DIMENSIONS}
    for ov in overlays.values():
        if ov.criteria is not None:
            for d in DIMENSIONS:
                v = ov.criteria.value(d)
                if v not in ("any", ""):
                    registered[d].add(v)
    return registered


def _build(root: Path, ext: Path | None) -> Catalog:
    if not root.is_dir():
        raise invalid(f'catalog directory "{root}" does not exist')
    files = _walk(root, reject_symlinks=False)
    if ext is not None:
        if not ext.is_dir():
            raise invalid(f'--data directory "{ext}" does not exist')
        if not (ext / "registry.yaml").is_file():
            raise invalid(f'--data directory "{ext}" must contain registry.yaml')
        ext_files = _walk(ext, reject_symlinks=True)
        for path in ext_files.values():
            if path.stat().st_size > MAX_DOCUMENT_BYTES:
                raise invalid(f'--data file "{path}" exceeds {MAX_DOCUMENT_BYTES} bytes')
        ext_registry = ext_files.pop("registry.yaml")
        files.update(ext_files)
    else:
        ext_files, ext_registry = {}, None
    if "registry.yaml" not in files:
        raise invalid(f'catalog directory "{root}" has no registry.yaml')
    if "overlays/base.yaml" not in files:
        raise invalid(f'catalog directory "{root}" has no overlays/base.yaml')

    to_parse = _parsed_rels(files)
    if ext_registry is not None:
        files["@ext/registry.yaml"] = ext_registry
        to_parse.append("@ext/registry.yaml")
    cache_dir = _cache_dir()
    key = _content_key(files, to_parse) if cache_dir is not None else None
    cache_file = cache_dir / f"catalog-{key}.json" if cache_dir is not None and key else None
    payload = _read_cache(cache_file, key or "") if cache_file is not None else None
    if payload is not None:
        files.pop("@ext/registry.yaml", None)
        try:
            cached = _from_payload(payload, root, ext, files)
        except (KeyError, TypeError, ValueError, AttributeError):
            cached = None  # sealed but not a catalog this build can rebuild
        if cached is not None and _names_hold(cached):
            return cached
        # otherwise load from the files, which report what is wrong in them
    if ext_registry is not None:
        files["@ext/registry.yaml"] = ext_registry
    docs = {rel: _parse(files[rel], rel) for rel in to_parse}
    files.pop("@ext/registry.yaml", None)
    catalog = _validated(root, ext, files, ext_files, docs, to_parse)
    if cache_file is not None:
        _store_cache(cache_file, _payload(catalog))
    return catalog


def _names_hold(catalog: Catalog) -> bool:
    """Whether a cache hit passes the name, path and constraint checks a full load makes.

    The seal proves the cache file is whole, not who wrote it: a hand-edited cache with
    a fresh seal must not hand the engine a component name, namespace, chart version or
    URL that the catalog's own files could never carry. The checks are the full load's.
    """
    try:
        for i, comp in enumerate(catalog.registry.components):
            _check_registry_names(comp, f"registry.yaml: components[{i}]")
        specs: list[tuple[str, Any]] = [
            (ov.path, ov.spec) for ov in [catalog.base, *catalog.overlays.values()]
        ]
        specs += [(mx.path, mx.spec) for mx in catalog.mixins.values()]
        for rel, spec in specs:
            _check_constraint_names(spec.constraints, rel)
            for i, ref in enumerate(spec.componentRefs):
                check_component_ref(ref, f"{rel}: spec.componentRefs[{i}]")
            profile = getattr(spec, "profile", None)
            if profile is not None:
                validate_declaration(profile, rel)
                for value in profile.values.values():
                    _check_constraint_names(value.constraints, f"{rel} profile value")
                    _check_constraint_names(value.readinessConstraints, f"{rel} profile value")
    except AicrError:
        return False
    return True


def _parse(path: Path, rel: str) -> Any:
    text = read_document(path, "catalog", cap=MAX_DOCUMENT_BYTES)
    return load_yaml_plain(text, f'catalog file "{rel}"', refuse_lone_surrogates=True)


def _validated(
    root: Path,
    ext: Path | None,
    files: dict[str, Path],
    ext_files: dict[str, Path],
    docs: dict[str, Any],
    to_parse: list[str],
) -> Catalog:
    """Every load-time check over the parsed documents; the catalog they make."""
    registry = _load_registry(docs["registry.yaml"], "registry.yaml")
    if "@ext/registry.yaml" in docs:
        extra = _load_registry(docs.pop("@ext/registry.yaml"), f"{ext}/registry.yaml")
        by_name = {c.name: c for c in registry.components}
        for comp in extra.components:
            by_name[comp.name] = comp
        merged = [by_name[c.name] for c in registry.components]
        merged += [c for c in extra.components if c.name not in {m.name for m in merged}]
        registry = Registry(apiVersion=registry.apiVersion, components=merged)

    overlays: dict[str, Overlay] = {}
    origin: dict[str, str] = {}
    base: Overlay | None = None
    mixins: dict[str, Mixin] = {}
    for rel in to_parse:
        if rel.startswith("overlays/"):
            ov = _load_overlay(docs[rel], rel, external=rel in ext_files)
            if ov is None:
                continue
            if rel == "overlays/base.yaml":
                ov.name = "base"
                base = ov
                continue
            if ov.name == "base":
                raise invalid(f'{rel}: the name "base" is reserved for overlays/base.yaml')
            if ov.name in overlays:
                if (rel in ext_files) == (origin[ov.name] in ext_files):
                    raise invalid(
                        f'{rel}: overlay "{ov.name}" is also defined in {origin[ov.name]}'
                    )
                if rel not in ext_files:
                    continue
            overlays[ov.name] = ov
            origin[ov.name] = rel
        elif rel.startswith("mixins/"):
            mx = _load_mixin(docs[rel], rel)
            if mx is None:
                continue
            if mx.name in mixins:
                raise invalid(f'{rel}: mixin "{mx.name}" is also defined in {mixins[mx.name].path}')
            mixins[mx.name] = mx
    if base is None:
        raise invalid(f'catalog directory "{root}": overlays/base.yaml is not a RecipeMetadata')

    registered = _registered(overlays)
    for ov in [base, *overlays.values()]:
        ov.chain = _chain(ov, overlays)
        for mixin in ov.spec.mixins:
            if mixin not in mixins:
                raise not_found(f'{ov.path}: mixin "{mixin}" is not in the catalog')
    _check_base_dependencies(base)
    values_docs = {k: v for k, v in docs.items() if k.startswith("components/")}
    return Catalog(
        data_dir=root,
        external=ext,
        base=base,
        overlays=overlays,
        mixins=mixins,
        registry=registry,
        files=files,
        registered=registered,
        _docs=values_docs,
    )


def _load_registry(doc: Any, source: str) -> Registry:
    if not isinstance(doc, dict):
        raise invalid(f"{source}: expected a ComponentRegistry mapping")
    kind = doc.get("kind") or REGISTRY_KIND
    if kind != REGISTRY_KIND:
        raise invalid(f'{source}: kind "{kind}", expected "{REGISTRY_KIND}"')
    reg = validate_document(Registry, doc, source)
    seen: set[str] = set()
    for i, comp in enumerate(reg.components):
        _check_registry_names(comp, f"{source}: components[{i}]")
        if comp.name in seen:
            raise invalid(f'{source}: component "{comp.name}" is listed twice')
        seen.add(comp.name)
        if comp.helm is not None and comp.kustomize is not None and comp.kustomize.defaultSource:
            if comp.helm.defaultRepository:
                raise invalid(f'{source}: component "{comp.name}" sets both helm and kustomize')
    return reg


def _check_registry_names(comp: RegistryComponent, field: str) -> None:
    names.COMPONENT_NAME.check(comp.name, f"{field}.name")
    for i, alias in enumerate(comp.valueOverrideKeys):
        names.ALIAS.check(alias, f"{field}.valueOverrideKeys[{i}]")
    if comp.helm is not None:
        h = comp.helm
        names.check_optional(
            names.CHART_REPOSITORY, h.defaultRepository, f"{field}.helm.defaultRepository"
        )
        names.check_optional(names.CHART_REFERENCE, h.defaultChart, f"{field}.helm.defaultChart")
        names.check_optional(names.CHART_VERSION, h.defaultVersion, f"{field}.helm.defaultVersion")
        names.check_optional(names.NAMESPACE, h.defaultNamespace, f"{field}.helm.defaultNamespace")
    if comp.kustomize is not None:
        k = comp.kustomize
        names.check_optional(names.GIT_SOURCE, k.defaultSource, f"{field}.kustomize.defaultSource")
        names.check_optional(names.GIT_REF, k.defaultTag, f"{field}.kustomize.defaultTag")
    for i, rel in enumerate(comp.manifestFiles):
        names.CATALOG_PATH.check(rel, f"{field}.manifestFiles[{i}]")
    assert_file = (comp.healthCheck or {}).get("assertFile")
    if assert_file:
        names.CATALOG_PATH.check(assert_file, f"{field}.healthCheck.assertFile")


def _check_constraint_names(constraints: Iterable[Constraint], where: str) -> None:
    for c in constraints:
        if not c.name or not c.value:
            raise invalid(f"{where}: every constraint needs a name and a value")
        try:
            parse_path(c.name)
        except AicrError as exc:
            raise invalid(f"{where}: {exc.message}") from exc


def _load_overlay(doc: Any, rel: str, *, external: bool) -> Overlay | None:
    if not isinstance(doc, dict):
        return None
    kind = doc.get("kind") or ""
    api = str(doc.get("apiVersion") or "")
    if kind != OVERLAY_KIND:
        if api.startswith("aicr.run/") and kind not in KNOWN_KINDS:
            raise invalid(f'{rel}: unknown kind "{kind}" in the aicr.run group')
        return None
    profiled = api in PROFILE_VERSIONS
    if not profiled and api not in AUTHORING_VERSIONS:
        raise invalid(
            f'{rel}: RecipeMetadata apiVersion "{api}" is not supported '
            f'(expected "{API_AUTHORING}", or "{API_PROFILE}" for an overlay declaring a profile)'
        )
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = str((meta or {}).get("name") or "")
    if not name and rel != "overlays/base.yaml":
        raise invalid(f"{rel}: metadata.name is required")
    unknown_top = sorted(set(doc) - {"kind", "apiVersion", "metadata", "spec"})
    if unknown_top and profiled:
        raise invalid(f"{rel}: unknown field {unknown_top[0]} in a profile-version overlay")
    spec = validate_document(OverlaySpec, doc.get("spec") or {}, rel, at="spec.")
    if profiled and spec.profile is None:
        raise invalid(f'{rel}: apiVersion "{api}" requires spec.profile (a profile declaration)')
    if spec.profile is not None and not profiled:
        raise invalid(f'{rel}: spec.profile requires apiVersion "{API_PROFILE}", not "{api}"')
    criteria = None
    if spec.criteria is not None:
        criteria = overlay_criteria(spec.criteria, rel)
        if external and criteria.nodes:
            raise invalid(f"{rel}: --data overlays may not set criteria.nodes")
    _check_constraint_names(spec.constraints, rel)
    declared = [r.name for r in spec.componentRefs]
    for i, ref in enumerate(spec.componentRefs):
        if not ref.name:
            raise invalid(f"{rel}: a componentRef has no name")
        check_component_ref(ref, f"{rel}: spec.componentRefs[{i}]")
        if declared.count(ref.name) > 1:
            raise invalid(f'{rel}: component "{ref.name}" is listed twice')
    owned: dict[str, list[str]] = {}
    if spec.profile is not None:
        validate_declaration(spec.profile, rel)
        for value in spec.profile.values.values():
            _check_constraint_names(value.constraints, f"{rel} profile value")
            _check_constraint_names(value.readinessConstraints, f"{rel} profile value")
        owned = owned_paths(spec.profile)
    return Overlay(
        name=name or "base",
        api_version=api,
        spec=spec,
        path=rel,
        criteria=criteria,
        owned_paths=owned,
    )


def _load_mixin(doc: Any, rel: str) -> Mixin | None:
    if not isinstance(doc, dict):
        return None
    kind = doc.get("kind") or ""
    if kind != MIXIN_KIND:
        if kind == OVERLAY_KIND:
            raise invalid(f"{rel}: files under mixins/ must be RecipeMixin, not RecipeMetadata")
        return None
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    name = str((meta or {}).get("name") or "")
    if not name:
        raise invalid(f"{rel}: metadata.name is required")
    spec_raw = doc.get("spec") or {}
    if isinstance(spec_raw, dict) and "profile" in spec_raw:
        raise invalid(f"{rel}: mixins cannot declare profiles")
    spec = validate_document(MixinSpec, spec_raw, rel, at="spec.")
    _check_constraint_names(spec.constraints, rel)
    for i, ref in enumerate(spec.componentRefs):
        check_component_ref(ref, f"{rel}: spec.componentRefs[{i}]")
    declared = [r.name for r in spec.componentRefs]
    dupes = sorted({n for n in declared if declared.count(n) > 1})
    if dupes:
        raise invalid(f'{rel}: mixin "{name}" lists component "{dupes[0]}" twice')
    return Mixin(name=name, spec=spec, path=rel)


def _chain(ov: Overlay, overlays: dict[str, Overlay]) -> tuple[str, ...]:
    """base first, then ancestors down to ``ov``; cycles and unknown parents rejected."""
    if ov.name == "base":
        return ("base",)
    seen = [ov.name]
    node = ov
    while node.spec.base not in ("", "base"):
        parent = overlays.get(node.spec.base)
        if parent is None:
            raise not_found(f'{node.path}: parent overlay "{node.spec.base}" is not in the catalog')
        if parent.name in seen:
            raise invalid(f"{ov.path}: circular inheritance: {' -> '.join([*seen, parent.name])}")
        seen.append(parent.name)
        node = parent
    return ("base", *reversed(seen))


def _check_base_dependencies(base: Overlay) -> None:
    declared = {r.name for r in base.spec.componentRefs}
    for ref in base.spec.componentRefs:
        for dep in ref.dependencyRefs:
            if dep not in declared:
                raise invalid(
                    f'overlays/base.yaml: component "{ref.name}" references unknown dependency "{dep}"'
                )
