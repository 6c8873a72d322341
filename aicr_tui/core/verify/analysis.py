"""Render each step's pinned chart with the bundle's values and report what would go wrong.

Per chart step, in this order: the chart's ``kubeVersion`` against the recipe's floor,
``values.schema.json``, the render itself (template errors), values the chart does not
define that change nothing when removed (rendered with and without them), values whose
type differs from the chart's default, then every rendered object and manifest: custom
resources need a CRD installed by an earlier step or by the same chart, built-in kinds must
be valid against the Kubernetes 1.34 schemas, custom resources against their CRD's schema.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from aicr_tui.core.foundation.tree import KindNames, kind_name
from aicr_tui.core.verify import kubeschema, kubeversion
from aicr_tui.core.verify.model import (
    CHART_SOURCE,
    INVALID_OBJECT,
    KUBE_VERSION,
    MISSING_CRD,
    NOT_RENDERABLE,
    SCHEMA,
    TEMPLATE,
    TYPE_MISMATCH,
    UNDEFINED_VALUE,
    ComponentReport,
    Finding,
    VerifyComponent,
    VerifyInput,
    VerifyReport,
)
from aicr_tui.core.verify.sources import PULL_TIMEOUT_SECONDS, ChartSource, find_local, pulled

StandIns = Callable[[str], tuple[str, str] | None]
_MAX_SINGLE_RENDERS = 40


def _documents(text: str, where: str) -> Iterator[dict[str, Any]]:
    got = _documents_of([(text, where)])[0]
    if isinstance(got, ValueError):
        raise got
    yield from got


def _documents_of(items: list[tuple[str, str]]) -> list[list[dict[str, Any]] | ValueError]:
    """The objects of each (text, where), all parsed in one engine call; a text with a
    document that cannot be read gives the ValueError naming it instead."""
    from aicr_tui.core.verify import helm

    chunked = [[c for c in _split_documents(text) if c.strip()] for text, _where in items]
    parsed = iter(helm.parse_documents([c for chunks in chunked for c in chunks]))
    out: list[list[dict[str, Any]] | ValueError] = []
    for chunks, (_text, where) in zip(chunked, items, strict=True):
        docs: list[dict[str, Any]] = []
        error: ValueError | None = None
        for doc in (next(parsed) for _ in chunks):
            if isinstance(doc, helm.RenderError):
                error = error or ValueError(f"{where}: {doc}")
            elif doc:
                if doc.get("kind") == "List" and isinstance(doc.get("items"), list):
                    docs += [i for i in doc["items"] if isinstance(i, dict)]
                else:
                    docs.append(doc)
        out.append(error if error is not None else docs)
    return out


# API groups a real cluster serves but Helm's offline capability set leaves out (it lists
# client-go's scheme only): a chart asking `.Capabilities.APIVersions.Has
# "apiregistration.k8s.io/v1"` falls back to a version 1.34 no longer serves, while on a
# cluster it picks the served one. Such objects are checked as that served version.
_OFFLINE_CAPABILITY_GAPS = {"apiregistration.k8s.io": "v1"}


def _split_documents(text: str) -> list[str]:
    """Helm's manifest separator (releaseutil): a line starting with ``---``, whatever
    follows on it (``---# comment`` starts the next document with that comment)."""
    out: list[str] = []
    current: list[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("---"):
            out.append("".join(current))
            rest = line[3:].lstrip()
            current = [rest] if rest else []
            continue
        current.append(line)
    out.append("".join(current))
    return out


def _ref(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return f"{obj.get('kind', '?')}/{meta.get('name', '?')}" if meta else str(obj.get("kind"))


def _is_test_hook(obj: dict[str, Any]) -> bool:
    meta = obj.get("metadata")
    notes = meta.get("annotations") if isinstance(meta, dict) else None
    hook = notes.get("helm.sh/hook", "") if isinstance(notes, dict) else ""
    return isinstance(hook, str) and "test" in hook.split(",")


# ------------------------------------------------------------------- value checks
# Helm's words for value types in schema-style messages.
_HELM_KINDS: KindNames = (
    (bool, "boolean"),
    ((int, float), "number"),
    (str, "string"),
    (list, "list"),
    (dict, "map"),
)


def _kind(value: Any) -> str:
    return kind_name(value, _HELM_KINDS)


ValuePath = tuple[str, ...]


def _dotted(path: ValuePath) -> str:
    return ".".join(path)


def _undefined_paths(
    values: Any, defaults: Any, raw: Any, prefix: ValuePath = ()
) -> list[ValuePath]:
    """Shallowest dotted paths of ``values`` that neither the coalesced defaults nor the
    chart's own values.yaml define. Free-form maps (empty or null by default) and lists
    define everything under them."""
    out: list[ValuePath] = []
    if not isinstance(values, dict):
        return out
    for key, value in values.items():
        path = (*prefix, key)
        in_defaults = isinstance(defaults, dict) and key in defaults
        in_raw = isinstance(raw, dict) and key in raw
        if not in_defaults and not in_raw:
            out.append(path)
            continue
        d = defaults.get(key) if isinstance(defaults, dict) else None
        r = raw.get(key) if isinstance(raw, dict) else None
        if not isinstance(value, dict):
            continue
        if (not isinstance(d, dict) or not d) and (not isinstance(r, dict) or not r):
            continue  # a free-form map (or a non-map default the type check reports)
        out += _undefined_paths(value, d if isinstance(d, dict) else {}, r, path)
    return out


def _mismatches(
    values: Any, defaults: Any, prefix: ValuePath = ()
) -> list[tuple[ValuePath, str, str]]:
    out: list[tuple[ValuePath, str, str]] = []
    if not isinstance(values, dict) or not isinstance(defaults, dict):
        return out
    for key, value in values.items():
        if key not in defaults:
            continue
        path = (*prefix, key)
        default = defaults[key]
        if value is None or default is None:
            continue
        a, b = _kind(value), _kind(default)
        if a != b:
            out.append((path, a, b))
        elif a == "map":
            out += _mismatches(value, default, path)
    return out


def _without(values: dict[str, Any], paths: list[ValuePath]) -> dict[str, Any]:
    trimmed = copy.deepcopy(values)
    for parts in paths:
        node: Any = trimmed
        for part in parts[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(parts[-1], None)
    return trimmed


def _leaf_summary(values: dict[str, Any], path: ValuePath) -> str:
    node: Any = values
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    text = json.dumps(node, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


# -------------------------------------------------------------------- the verifier
class _Crds:
    def __init__(self) -> None:
        self.kinds: dict[tuple[str, str], str] = {}
        self.schemas = kubeschema.CrdSchemas()

    def add(self, obj: dict[str, Any], origin: str) -> None:
        spec = obj.get("spec")
        spec = spec if isinstance(spec, dict) else {}
        names = spec.get("names")
        names = names if isinstance(names, dict) else {}
        group = str(spec.get("group", ""))
        kind = str(names.get("kind", ""))
        if group and kind:
            self.kinds.setdefault((group, kind), origin)
            self.schemas.add_crd(obj)

    def add_text(self, text: str, origin: str) -> None:
        docs = _CRD_TEXTS.get(text)
        if docs is None:
            docs = [
                d for d in _documents(text, origin) if d.get("kind") == "CustomResourceDefinition"
            ]
            if len(_CRD_TEXTS) > 1024:
                _CRD_TEXTS.clear()
            _CRD_TEXTS[text] = docs
        for doc in docs:
            self.add(doc, origin)


_CRD_TEXTS: dict[str, list[dict[str, Any]]] = {}


class Verifier:
    def __init__(
        self,
        chart_dirs: list[Path] | None,
        *,
        stand_ins: StandIns | None = None,
        pull_timeout: float = PULL_TIMEOUT_SECONDS,
    ) -> None:
        self.chart_dirs = list(chart_dirs or [])
        self.stand_ins = stand_ins or (lambda _name: None)
        self.pull_timeout = pull_timeout
        self._object_cache: dict[str, list[str]] = {}
        self._component_cache: dict[
            str, tuple[ComponentReport, dict[Any, str], dict[Any, Any]]
        ] = {}

    # -- chart sources
    def source(self, comp: VerifyComponent) -> ChartSource:
        chart = comp.chart.rsplit("/", 1)[-1] or comp.name
        if self.chart_dirs:
            return find_local(
                self.chart_dirs, comp.name, chart, comp.version, self.stand_ins(comp.name)
            )
        return pulled(chart, comp.source, comp.version, timeout=self.pull_timeout)

    def verify(self, data: VerifyInput) -> VerifyReport:
        from aicr_tui.core.verify import engine, helm

        helm.require_engine()
        crds = _Crds()
        for comp in data.cluster_provided:
            if not comp.has_chart:
                continue
            src = self.source(comp)
            if src.kind == "chart" and src.path is not None:
                for text in helm.load_chart(src.path).crds:
                    # one that cannot be read installs nothing; its own step reports it
                    with contextlib.suppress(ValueError):
                        crds.add_text(text, f"{comp.name} (cluster-provided)")
        reports = []
        for comp in data.components:
            with engine.chart_budget():
                reports.append(self._cached_component(comp, data, crds))
        return VerifyReport(reports, kubeschema.KUBERNETES_VERSION, helm.engine_version())

    def _cached_component(
        self, comp: VerifyComponent, data: VerifyInput, crds: _Crds
    ) -> ComponentReport:
        """A step's report depends only on the step, the recipe's Kubernetes floor and the
        CRDs earlier steps installed: the same chart with the same values is rendered and
        checked once per verifier (the catalog test verifies a hundred bundles)."""
        key = json.dumps(
            [
                comp.name,
                comp.folder,
                comp.chart,
                comp.source,
                comp.version,
                comp.namespace,
                comp.values,
                comp.manifests,
                data.kubernetes_constraint,
                sorted(map(list, crds.kinds)),
            ],
            sort_keys=True,
            default=str,
        )
        hit = self._component_cache.get(key)
        if hit is None:
            before = dict(crds.kinds)
            before_schemas = dict(crds.schemas._raw)
            report = self._component(comp, data, crds)
            added = {k: v for k, v in crds.kinds.items() if k not in before}
            schemas = {k: v for k, v in crds.schemas._raw.items() if k not in before_schemas}
            hit = (report, added, schemas)
            self._component_cache[key] = hit
        else:
            for k, v in hit[1].items():
                crds.kinds.setdefault(k, v)
            for k, v in hit[2].items():
                crds.schemas._raw.setdefault(k, v)
        report = hit[0]
        return ComponentReport(
            report.name,
            report.folder,
            report.status,
            report.chart,
            report.source,
            report.note,
            report.objects,
            list(report.findings),
        )

    def _component(self, comp: VerifyComponent, data: VerifyInput, crds: _Crds) -> ComponentReport:
        from aicr_tui.core.verify import helm

        report = ComponentReport(comp.name, comp.folder, "manifest-only")
        objects: list[tuple[dict[str, Any], str]] = []
        local_crds = _Crds()
        if comp.has_chart:
            src = self.source(comp)
            report.chart = f"{comp.chart} {comp.version}"
            report.source = src.label
            if src.kind == "missing":
                report.status = "chart missing"
                report.findings.append(
                    Finding(
                        comp.name, CHART_SOURCE, f"chart {comp.chart} {comp.version}: {src.label}"
                    )
                )
                return report
            if src.kind == "values-only":
                report.status = NOT_RENDERABLE
                report.note = "the chart's templates are not available, so nothing was checked"
                if src.stand_in:
                    report.note += f"; stand-in: {src.stand_in}"
                return report
            assert src.path is not None
            chart = helm.load_chart(src.path)
            report.status = "verified"
            if src.stand_in:
                report.status = "verified against stand-in"
                report.note = src.stand_in
            elif chart.version.lstrip("v") != comp.version.lstrip("v"):
                report.findings.append(
                    Finding(
                        comp.name,
                        CHART_SOURCE,
                        f"{src.label} is chart version {chart.version}, the bundle pins {comp.version}",
                    )
                )
            report.findings += self._chart_checks(comp, chart, data, objects, local_crds)
        names = sorted(comp.manifests)
        texts = [(comp.manifests[n], f"{comp.folder}/manifests/{n}") for n in names]
        for name, docs in zip(names, _documents_of(texts), strict=True):
            if isinstance(docs, ValueError):
                report.findings.append(
                    Finding(comp.name, INVALID_OBJECT, f"manifests/{name}: {docs}", name)
                )
                continue
            objects += [(d, f"manifests/{name}") for d in docs]
        for obj, _where in objects:
            if obj.get("kind") == "CustomResourceDefinition":
                local_crds.add(obj, comp.name)
        report.findings += self._object_checks(comp, objects, crds, local_crds)
        report.objects = len(objects)
        for (group, kind), origin in local_crds.kinds.items():
            crds.kinds.setdefault((group, kind), origin)
        for key, schema in local_crds.schemas._raw.items():
            crds.schemas._raw.setdefault(key, schema)
        return report

    def _chart_checks(
        self,
        comp: VerifyComponent,
        chart: Any,
        data: VerifyInput,
        objects: list[tuple[dict[str, Any], str]],
        local_crds: _Crds,
    ) -> list[Finding]:
        from aicr_tui.core.verify import helm

        out: list[Finding] = []
        name = comp.name
        if chart.kube_version:
            floor = kubeversion.recipe_floor(data.kubernetes_constraint)
            if kubeversion.unreadable_number(data.kubernetes_constraint):
                out.append(
                    Finding(
                        name,
                        KUBE_VERSION,
                        f"the recipe's K8s.server.version {_shown(data.kubernetes_constraint)} "
                        "holds a number no version can have",
                    )
                )
            elif floor is None:
                out.append(
                    Finding(
                        name,
                        KUBE_VERSION,
                        f"chart requires Kubernetes {_shown(chart.kube_version)} but the recipe sets no "
                        "K8s.server.version lower bound",
                    )
                )
            else:
                too_long = kubeversion.unreadable_number(chart.kube_version)
                ok = None if too_long else kubeversion.satisfies(chart.kube_version, floor)
                if too_long:
                    out.append(
                        Finding(
                            name,
                            KUBE_VERSION,
                            f"chart kubeVersion {_shown(chart.kube_version)} is not a version "
                            "constraint Helm can read, so no install would pass its check",
                        )
                    )
                elif ok is False:
                    out.append(
                        Finding(
                            name,
                            KUBE_VERSION,
                            f"chart requires Kubernetes {_shown(chart.kube_version)}; the recipe admits "
                            f"{data.kubernetes_constraint} (K8s.server.version)",
                        )
                    )
        for text in chart.crds:
            try:
                local_crds.add_text(text, name)
            except ValueError as exc:  # a CRD the engine cannot read (too deep, not YAML)
                out.append(Finding(name, INVALID_OBJECT, f"crds/: {_shown(str(exc), 300)}"))
        values = comp.values
        schema = chart.schema_errors(values)
        if schema:
            out.append(Finding(name, SCHEMA, schema))
        try:
            base = chart.render(values, release=name, namespace=comp.namespace)
        except helm.RenderError as exc:
            if not schema or str(exc) not in schema and schema not in str(exc):
                out.append(Finding(name, TEMPLATE, str(exc)))
            return out
        raw = chart.raw_values
        undefined = _undefined_paths(values, chart.defaults, raw)
        if undefined:
            try:
                out += self._inert(comp, chart, values, undefined, base)
            except helm.RenderLimit as exc:
                out.append(
                    Finding(name, TEMPLATE, f"{exc}; values it does not define were not checked")
                )
        for path, got, want in _mismatches(values, _coalesced_with_raw(chart.defaults, raw)):
            out.append(
                Finding(
                    name,
                    TYPE_MISMATCH,
                    f"{_dotted(path)} is a {got} ({_leaf_summary(values, path)}); "
                    f"the chart's default is a {want}",
                    _dotted(path),
                )
            )
        templates = [
            t
            for t in sorted(base)
            if t.endswith((".yaml", ".yml", ".tpl", ".json")) and "/tests/" not in t
        ]
        parsed = _documents_of([(base[t], t) for t in templates])
        for template, docs in zip(templates, parsed, strict=True):
            if isinstance(docs, ValueError):
                out.append(Finding(name, TEMPLATE, f"{template} renders invalid YAML: {docs}"))
                continue
            objects += [(d, template) for d in docs if not _is_test_hook(d)]
        return out

    def _inert(
        self,
        comp: VerifyComponent,
        chart: Any,
        values: dict[str, Any],
        undefined: list[ValuePath],
        base: dict[str, str],
    ) -> list[Finding]:
        from aicr_tui.core.verify import helm

        def same(paths: list[ValuePath]) -> bool:
            try:
                return bool(
                    chart.render(
                        _without(values, paths), release=comp.name, namespace=comp.namespace
                    )
                    == base
                )
            except helm.RenderLimit:
                raise
            except helm.RenderError:
                return False

        if same(undefined):
            inert = list(undefined)
        else:
            inert = [p for p in undefined[:_MAX_SINGLE_RENDERS] if same([p])]
        return [
            Finding(
                comp.name,
                UNDEFINED_VALUE,
                f"{_dotted(p)} ({_leaf_summary(values, p)}) is not a value chart {chart.name} "
                f"{chart.version} defines, and removing it changes nothing it renders",
                _dotted(p),
            )
            for p in inert
        ]

    def _object_checks(
        self,
        comp: VerifyComponent,
        objects: list[tuple[dict[str, Any], str]],
        crds: _Crds,
        local: _Crds,
    ) -> list[Finding]:
        out: list[Finding] = []
        for obj, where in objects:
            api = str(obj.get("apiVersion", ""))
            kind = str(obj.get("kind", ""))
            if not api or not kind:
                out.append(
                    Finding(comp.name, INVALID_OBJECT, f"{where}: object without apiVersion/kind")
                )
                continue
            key = json.dumps(obj, sort_keys=True, default=str)
            group = api.rpartition("/")[0]
            if group in _OFFLINE_CAPABILITY_GAPS and not kubeschema.is_builtin(api, kind):
                obj = {**obj, "apiVersion": f"{group}/{_OFFLINE_CAPABILITY_GAPS[group]}"}
                api = str(obj["apiVersion"])
            if kubeschema.is_builtin(api, kind):
                errors = self._object_cache.get(key)
                if errors is None:
                    errors = kubeschema.validate_builtin(obj)
                    self._object_cache[key] = errors
                out += [
                    Finding(comp.name, INVALID_OBJECT, f"{_ref(obj)} ({where}): {e}", _ref(obj))
                    for e in errors
                ]
                continue
            origin = local.kinds.get((group, kind)) or crds.kinds.get((group, kind))
            if origin is None:
                out.append(
                    Finding(
                        comp.name,
                        MISSING_CRD,
                        f"{_ref(obj)} ({api}, {where}): no earlier step and not this chart "
                        f"installs the CRD for {kind}.{group or 'core'}",
                        _ref(obj),
                    )
                )
                continue
            schemas = local.schemas if (group, kind) in local.kinds else crds.schemas
            errs = schemas.validate(obj)
            if errs is None and schemas is local.schemas:
                errs = crds.schemas.validate(obj)
            out += [
                Finding(comp.name, INVALID_OBJECT, f"{_ref(obj)} ({where}): {e}", _ref(obj))
                for e in errs or []
            ]
        return out


def _shown(text: str, limit: int = 80) -> str:
    """Chart-supplied text quoted in a finding, cut at ``limit`` characters (a finding is
    made terminal-safe as it is built)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _coalesced_with_raw(defaults: Any, raw: Any) -> Any:
    if not isinstance(raw, dict):
        return defaults
    if not isinstance(defaults, dict):
        return raw
    merged = dict(raw)
    for key, value in defaults.items():
        merged[key] = _coalesced_with_raw(value, raw.get(key)) if key in raw else value
    return merged
