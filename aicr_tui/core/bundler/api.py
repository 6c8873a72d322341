"""The bundler's public calls: :func:`plan_bundle`, :func:`write_bundle`,
:func:`check_override_entry`.

``plan_bundle`` is pure and in memory (the wizard calls it on every keystroke in its
overrides editor). Pipeline, in upstream order:

1. resolve override prefixes (name or registry alias) and the ``enabled`` toggles; refuse
   overrides that cannot take effect (unknown component, component not in the bundle);
2. the #1327 override policy (``--dynamic`` refused, static overrides deprecated);
3. values per rendered component: recipe values (base < valuesFile < inline overrides, which
   carry the profile fragment) < scalar ``--set`` < node-scheduling injection <
   ``--set-file`` < ``--set-json``;
4. the profile lock, the allocation-policy verdict, the registry-wired checks;
5. render: values, ``cluster-values.yaml`` for ``--dynamic``, manifests, scripts, README,
   ``recipe.yaml``, ``bundle-info.yaml``, ``checksums.txt``.

Input problems raise :class:`~aicr_tui.core.foundation.errors.AicrError`; policy refusals become
``plan.errors`` (shown, never written).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aicr_tui.core.bundler import checks, lock, policy, prose, render
from aicr_tui.core.bundler.deployers.common import DeployContext, render_deployer
from aicr_tui.core.bundler.deployers.config import (
    DeployerConfig,
    split_deployer_options,
    with_options,
)
from aicr_tui.core.bundler.model import (
    BlockingError,
    BundlePlan,
    BundleState,
    BundleWriteResult,
    ComponentPlan,
    Feedback,
    ResolvedOverride,
)
from aicr_tui.core.bundler.overrides import (
    BundleOverrides,
    OverrideEntry,
    parse_bool_go,
    parse_entry,
)
from aicr_tui.core.bundler.policy import POLICY_VERDICT_PREFIX
from aicr_tui.core.bundler.templates import (
    TemplateContext,
    parse_manifest_documents,
    render_template,
)
from aicr_tui.core.bundler.tolerations import WILDCARD, Toleration, toleration_identity
from aicr_tui.core.bundler.vendor import (
    VendoredChart,
    readme_section,
    vendored_files,
)
from aicr_tui.core.foundation import names
from aicr_tui.core.foundation.errors import AicrError, invalid
from aicr_tui.core.foundation.tree import (
    PRESENT,
    copy_tree,
    deep_merge_typed,
    delete_path,
    observe,
    paths_intersect,
    set_path,
    split_path,
)
from aicr_tui.core.recipe.values import resolve_component_values

if TYPE_CHECKING:
    from aicr_tui.core.documents.recipe_result import ComponentRef, RecipeResult
    from aicr_tui.core.recipe.catalog import Catalog
    from aicr_tui.core.recipe.catalog_models import RegistryComponent


def plan_bundle(
    recipe: RecipeResult,
    overrides: BundleOverrides | None = None,
    *,
    accelerated_tolerations: list[Toleration] | None = None,
    accelerated_node_selector: dict[str, str] | None = None,
    workload_selector: dict[str, str] | None = None,
    system_tolerations: list[Toleration] | None = None,
    system_node_selector: dict[str, str] | None = None,
    storage_class: str | None = None,
    catalog: Catalog | None = None,
    deployer: DeployerConfig | None = None,
    vendored: Mapping[str, VendoredChart] | None = None,
) -> BundlePlan:
    """Plan a bundle in memory.

    ``vendored`` (``--vendor-charts``): the checked archive of every rendered chart, by
    component; the bundle carries them and its scripts install from them.

    A toleration list of ``None`` (flag absent) injects upstream's default, the single
    wildcard ``{operator: Exists}``, for the accelerated and the system paths alike.
    ``deployer`` (from :func:`~aicr_tui.core.bundler.deployers.config.deployer_config`) picks the
    layout; ``--set deployer:<key>=<value>`` entries are taken out of ``overrides`` here.
    ``storage_class`` (``--storage-class``) is written at each rendered component's
    registry ``storageClassPaths`` unless ``--set`` names the same path; it must be a
    DNS-1123 subdomain, as a StorageClass name is.
    """
    if catalog is None:
        # Import cost: aicr_tui.core.validation reads aicr_tui.core.bundler.policy, which loads this module;
        # the catalog (and its models) loads only when a bundle is planned.
        from aicr_tui.core.recipe.catalog import load_catalog

        catalog = load_catalog()
    if storage_class is not None:
        _check_storage_class(storage_class)
    overrides, options = split_deployer_options(overrides or BundleOverrides())
    config = with_options(deployer or DeployerConfig(), options)
    if config.name == "argocd" and overrides.dynamic:
        first = overrides.dynamic[0]
        raise invalid(
            f"{first.display()}: --dynamic is not supported with --deployer argocd (Argo CD "
            "has no install-time values file); use --deployer argocd-helm"
        )
    if not recipe.componentRefs:
        raise invalid("recipe has no componentRefs; nothing to bundle")
    declared = {ref.name: ref for ref in recipe.componentRefs}
    resolved = _resolve_keys(recipe, catalog, overrides)
    skipped = _apply_toggles(declared, resolved)
    rendered = [
        n
        for n in recipe.deploymentOrder
        if n in declared and declared[n].enabled and n not in skipped
    ]
    missing = [n for n in recipe.deploymentOrder if n not in declared]
    if missing:
        raise invalid(f"recipe deploymentOrder names undeclared component {missing[0]}")
    if not rendered:
        raise invalid("recipe has no enabled components after filtering")
    _reject_ineffective(resolved, declared, skipped, set(rendered))

    given = accelerated_tolerations is not None and len(accelerated_tolerations) > 0
    injected = [t.to_values() for t in (accelerated_tolerations or [WILDCARD])]
    state = BundleState(
        recipe=recipe,
        catalog=catalog,
        overrides=overrides,
        resolved=resolved,
        declared=declared,
        rendered=rendered,
        skipped=skipped,
        recipe_values={},
        values={},
        injected_tolerations=injected,
        tolerations_given=given,
        accelerated_selector=dict(accelerated_node_selector or {}),
        workload_selector=dict(workload_selector or {}),
        system_tolerations=[t.to_values() for t in (system_tolerations or [WILDCARD])],
        system_selector=dict(system_node_selector or {}),
        storage_class=storage_class or "",
    )
    state.warnings.extend(config.warnings)
    policy.apply_override_policy(state)

    problems: list[str] = []
    for name, ref in declared.items():
        if not ref.enabled:
            continue
        base = resolve_component_values(catalog, ref, keep_nulls=True)
        base.pop("enabled", None)
        state.recipe_values[name] = base
        if name in rendered:
            try:
                state.values[name] = _final_values(state, ref, base)
            except _ApplyError as exc:
                problems.extend(exc.problems)
    if problems:
        raise invalid("bundle-time overrides cannot be applied", "; ".join(sorted(problems)))

    _check_required_selectors(state)
    lock.check_profile_lock(state)
    policy.check_allocation_policy(state)
    checks.run_registry_checks(state)
    if "gpu-operator" in skipped and recipe.metadata.gpuDriverState == "absent":
        state.warnings.append(
            "gpu-operator is left out while the recipe records gpuDriverState: absent; "
            "nothing will install a GPU driver on these nodes"
        )
    return _render(state, config, vendored)


class _ApplyError(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


# ------------------------------------------------------------------ override resolution
def _key_index(recipe: RecipeResult, catalog: Catalog) -> dict[str, str]:
    index: dict[str, str] = {ref.name: ref.name for ref in recipe.componentRefs}
    for ref in recipe.componentRefs:
        entry = catalog.registry.get(ref.name)
        aliases = entry.valueOverrideKeys if entry is not None else [ref.name.replace("-", "")]
        for alias in aliases:
            index.setdefault(alias, ref.name)
    return index


def _resolve_keys(
    recipe: RecipeResult, catalog: Catalog, overrides: BundleOverrides
) -> list[ResolvedOverride]:
    index = _key_index(recipe, catalog)
    declared = ", ".join(sorted(ref.name for ref in recipe.componentRefs))
    out: list[ResolvedOverride] = []
    groups = (overrides.sets, overrides.typed_entries(), overrides.dynamic)
    for group in groups:
        for entry in sorted(group, key=lambda e: e.key):
            if entry.key not in index:
                raise invalid(
                    f'{entry.display()}: unknown component "{entry.key}"; recipe declares: {declared}'
                )
        out += [ResolvedOverride(e, index[e.key]) for e in group]
    return out


def _apply_toggles(
    declared: dict[str, ComponentRef], resolved: list[ResolvedOverride]
) -> dict[str, str]:
    chosen: dict[str, tuple[bool, OverrideEntry]] = {}
    for r in resolved:
        e = r.entry
        if e.kind != "set" or e.path != "enabled":
            continue
        value = parse_bool_go(e.text)
        if value is None:
            raise invalid(f"{e.display()}: enabled must be a boolean (true/false, 1/0, t/f)")
        prev = chosen.get(r.component)
        if prev is not None and prev[1].key == r.component and e.key != r.component:
            continue  # the exact component name wins over an alias
        chosen[r.component] = (value, e)
    skipped: dict[str, str] = {}
    for name, ref in declared.items():
        if not ref.enabled:
            skipped[name] = "the recipe disables it (overrides.enabled: false)"
    for name in sorted(chosen):
        value, e = chosen[name]
        if value and not declared[name].enabled:
            raise invalid(
                f"{e.display()}: component {name} is disabled by the recipe and cannot be re-enabled"
            )
        if not value:
            skipped[name] = f"it is disabled with {e.display()}"
    return skipped


def _reject_ineffective(
    resolved: list[ResolvedOverride],
    declared: dict[str, ComponentRef],
    skipped: dict[str, str],
    rendered: set[str],
) -> None:
    for r in resolved:
        if r.component in rendered:
            continue
        e = r.entry
        if e.kind == "set" and e.path == "enabled" and parse_bool_go(e.text) is False:
            continue
        reason = skipped.get(r.component, "it is not in the recipe's deploymentOrder")
        raise invalid(
            f"{e.display()}: {e.key}:{e.path} cannot take effect: component {r.component} is not "
            f"in the generated bundle because {reason}"
        )


# ---------------------------------------------------------------------------- values
def _ordered(entries: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    last: dict[str, Any] = {}
    for path, value in entries:
        last[path] = value
    return sorted(last.items(), key=lambda kv: (len(split_path(kv[0])), kv[0]))


def _entries_exact_last(
    state: BundleState, component: str, kinds: tuple[str, ...]
) -> list[OverrideEntry]:
    """Alias entries first and exact-name entries last, so the exact name wins a collision."""
    entries = state.entries_for(component, kinds)
    return [e for e in entries if e.key != component] + [e for e in entries if e.key == component]


def _final_values(state: BundleState, ref: ComponentRef, base: dict[str, Any]) -> dict[str, Any]:
    name = ref.name
    values: dict[str, Any] = copy_tree(base)
    problems: list[str] = []
    scalar = [
        (e.path, e.value) for e in _entries_exact_last(state, name, ("set",)) if e.path != "enabled"
    ]
    for path, value in _ordered(scalar):
        try:
            set_path(values, path, value, where=f"--set {name}:{path}")
        except Exception as exc:
            problems.append(getattr(exc, "message", str(exc)))
    _inject_scheduling(state, ref, values)
    typed: list[tuple[str, Any]] = []
    for kinds in (("set-file",), ("set-json",)):
        typed += [(e.path, e.value) for e in _entries_exact_last(state, name, kinds)]
    for path, value in _ordered(typed):
        try:
            _apply_typed(values, path, value, name)
        except Exception as exc:
            problems.append(getattr(exc, "message", str(exc)))
    values.pop("enabled", None)
    if problems:
        raise _ApplyError(problems)
    return values


def _apply_typed(values: dict[str, Any], path: str, value: Any, component: str) -> None:
    where = f"typed override {component}:{path}"
    if value is None:
        delete_path(values, path)
        return
    st, current = observe(values, path)
    if st == "blocked":
        set_path(values, path, None, where=where)  # raises naming the non-map ancestor
    if isinstance(value, dict) and st == PRESENT and isinstance(current, dict):
        deep_merge_typed(current, value)
        return
    if isinstance(value, dict):
        fresh: dict[str, Any] = {}
        deep_merge_typed(fresh, value)
        value = fresh
    set_path(values, path, value, where=where)


def _force_set(values: dict[str, Any], path: str, value: Any) -> None:
    node = values
    parts = split_path(path)
    for seg in parts[:-1]:
        nxt = node.get(seg)
        if not isinstance(nxt, dict):
            nxt = {}
            node[seg] = nxt
        node = nxt
    node[parts[-1]] = value


def _inject_scheduling(state: BundleState, ref: ComponentRef, values: dict[str, Any]) -> None:
    """Upstream order: system selector, system tolerations, accelerated selector, accelerated
    tolerations (so on a shared path the accelerated entries win), workload selector."""
    entry: RegistryComponent | None = state.registry_entry(ref.name)
    if entry is None:
        return
    dynamic = state.dynamic_paths(ref.name)
    set_paths = {e.path: e.value for e in state.entries_for(ref.name, ("set",))}
    scheduling = entry.nodeScheduling

    def mode(path: str) -> str:
        if any(paths_intersect(d, path) for d in dynamic):
            return "opt-out"
        st, inline = observe(ref.overrides, path)
        if st == PRESENT and (inline is None or inline == [] or inline == {}):
            return "opt-out"
        if (st == PRESENT and inline) or set_paths.get(path) not in (None, "", [], {}):
            return "append"
        return "replace"

    def selectors(paths: list[str], selector: dict[str, str]) -> None:
        if selector:
            for path in paths:
                if mode(path) != "opt-out":
                    _force_set(values, path, dict(selector))

    def tolerations(paths: list[str], injected: list[dict[str, Any]]) -> None:
        for path in paths:
            how = mode(path)
            if how == "opt-out":
                continue
            if how == "append":
                st, existing = observe(values, path)
                merged = list(existing) if st == PRESENT and isinstance(existing, list) else []
                seen = {toleration_identity(t) for t in merged}
                merged += [t for t in injected if toleration_identity(t) not in seen]
                _force_set(values, path, merged)
            else:
                _force_set(values, path, [dict(t) for t in injected])

    if scheduling is not None and scheduling.system is not None:
        selectors(scheduling.system.nodeSelectorPaths, state.system_selector)
        tolerations(scheduling.system.tolerationPaths, state.system_tolerations)
    if scheduling is not None and scheduling.accelerated is not None:
        selectors(scheduling.accelerated.nodeSelectorPaths, state.accelerated_selector)
        tolerations(scheduling.accelerated.tolerationPaths, state.injected_tolerations)
    selectors(entry.workload_selector_paths, state.workload_selector)
    if state.storage_class:
        for path in entry.storageClassPaths:
            if path not in set_paths and mode(path) != "opt-out":
                _force_set(values, path, state.storage_class)


def _check_storage_class(name: str) -> None:
    if not name.strip():
        raise invalid("--storage-class must not be blank", "expected a StorageClass name")
    names.NameRule(
        "StorageClass name",
        "a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', at most 253 characters)",
        names.is_dns1123_subdomain,
    ).check(name, "--storage-class")


def _check_required_selectors(state: BundleState) -> None:
    """``requireNodeSelector`` paths must hold a non-empty map in the final values."""
    for name in state.rendered:
        entry = state.registry_entry(name)
        scheduling = entry.nodeScheduling if entry is not None else None
        if scheduling is None:
            continue
        for group, flag in ((scheduling.system, "--system-node-selector"),
                            (scheduling.accelerated, "--accelerated-node-selector")):  # fmt: skip
            if group is None:
                continue
            required = group.requireNodeSelector or (
                group.requireNodeSelectorIfStorageClassSet and bool(state.storage_class)
            )
            if not required:
                continue
            for dyn in state.dynamic_paths(name):
                hit = next((p for p in group.nodeSelectorPaths if paths_intersect(p, dyn)), None)
                if hit is not None:
                    state.errors.append(
                        BlockingError(
                            "RequiredNodeSelector",
                            f"--dynamic {name}:{dyn} intersects the required node-selector path "
                            f"{hit}; set it with {flag}",
                            name,
                        )
                    )
            missing = [
                p
                for p in group.nodeSelectorPaths
                if not isinstance(observe(state.values[name], p)[1], dict)
                or not observe(state.values[name], p)[1]
            ]
            if missing:
                state.errors.append(
                    BlockingError(
                        "RequiredNodeSelector",
                        f"component {name} requires {flag} to be set (paths: {', '.join(missing)})",
                        name,
                    )
                )


# ---------------------------------------------------------------------------- render
def _render(
    state: BundleState,
    config: DeployerConfig,
    vendored: Mapping[str, VendoredChart] | None = None,
) -> BundlePlan:
    # Import cost, as for the catalog above: the recipe models load only to render.
    from aicr_tui.core.documents.recipe_result import render_recipe

    catalog = state.catalog
    components: list[ComponentPlan] = []
    for index, name in enumerate(state.rendered, 1):
        ref = state.declared[name]
        entry = state.registry_entry(name)
        namespace = ref.namespace or (entry.namespace if entry else "") or name
        chart = ref.chart
        if not chart and entry is not None and entry.helm and entry.helm.defaultChart:
            chart = entry.helm.defaultChart.rsplit("/", 1)[-1]
        values = state.values[name]
        written = copy_tree(values)
        cluster: dict[str, Any] | None = None
        dyn = state.dynamic_paths(name)
        if dyn:
            cluster = {}
            for path in sorted(set(dyn)):
                st, current = observe(values, path)
                _force_set(cluster, path, copy_tree(current) if st == PRESENT else None)
                delete_path(written, path)
        # Values only the manifests read (the registry's manifestValueKeys) are not the
        # chart's: the manifests below render with them, values.yaml leaves them out.
        for key in entry.manifestValueKeys if entry is not None else []:
            written.pop(key, None)
            if cluster is not None:
                cluster.pop(key, None)
        _check_plan_names(name, namespace, chart or name, ref)
        ctx = TemplateContext(state.values, namespace)
        manifests: dict[str, str] = {}
        for i, rel in enumerate(ref.manifestFiles):
            names.CATALOG_PATH.check(rel, f"component {name} manifestFiles[{i}]")
            file_name = names.MANIFEST_FILE.check(
                rel.rsplit("/", 1)[-1], f"component {name} manifestFiles[{i}]"
            )
            text = catalog.read_text(rel)
            body = render_template(text, ctx, rel)
            if body is None:
                continue
            parse_manifest_documents(body, rel)
            if file_name in manifests:
                raise invalid(
                    f"component {name} manifestFiles[{i}] {names.shown(rel)}: another manifest "
                    f"of this component is also named {names.shown(file_name)}; the bundle "
                    "writes both to one file"
                )
            manifests[file_name] = body
        components.append(
            ComponentPlan(
                name=name,
                index=index,
                folder=f"{index:03d}-{name}",
                namespace=namespace,
                chart=chart or name,
                source=ref.source,
                version=ref.version,
                values=written,
                cluster_values=cluster,
                manifests=manifests,
                dependencies=[d for d in ref.dependencyRefs if d in state.rendered],
                expected_resources=[dict(r) for r in ref.expectedResources],
            )
        )
    if vendored is not None:
        _attach_vendored(components, vendored)
    warnings = list(state.warnings)
    notes = render.operational_notes(state, components) + list(state.notes)

    refs = [
        ref.model_copy(update={"overrides": {**ref.overrides, "enabled": False}})
        if ref.name in state.skipped and ref.enabled
        else ref
        for ref in state.recipe.componentRefs
    ]
    effective = state.recipe.model_copy(
        update={"deploymentOrder": list(state.rendered), "componentRefs": refs}
    )
    recipe_bytes = _recipe_text(effective, render_recipe).encode("utf-8")

    profile = state.recipe.metadata.selectedProfile
    out = render_deployer(
        DeployContext(
            components=components,
            config=config,
            locks=lock.effective_lock_set(state),
            recipe_version=state.recipe.metadata.version or "",
            vendored={c.name: vendored[c.name] for c in components if c.vendored}
            if vendored is not None
            else {},
        ),
        profile=(profile.name, profile.value) if profile is not None else None,
    )
    for comp in components:
        comp.folder = out.folders.get(comp.name, comp.folder)
    files: dict[str, bytes] = dict(out.files)
    files["recipe.yaml"] = recipe_bytes
    files["README.md"] = render.readme(
        state,
        components,
        warnings,
        notes,
        deployer=config.name,
        deploy_text=out.deploy_text
        if config.name == "helm"
        else prose.phrase("entry-point", "line", entrypoint=config.entrypoint) + out.deploy_text,
    ).encode()
    files["bundle-info.yaml"] = render.bundle_info(
        state,
        components,
        recipe_bytes,
        {**_settings(state), **config.settings()},
        deployer=config.name,
        entrypoint=config.entrypoint,
        releases=out.releases,
    ).encode()
    if vendored is not None:
        carried = {c.name: vendored[c.name] for c in components if c.vendored}
        files.update(vendored_files(carried))
        files["README.md"] += readme_section(carried, config.name).encode()
    files["checksums.txt"] = render.checksums(files).encode()
    return BundlePlan(
        recipe=state.recipe,
        components=components,
        warnings=warnings,
        notes=notes,
        errors=list(state.errors),
        files=dict(sorted(files.items())),
        executables=frozenset(out.executables),
        skipped=dict(state.skipped),
        deployer=config.name,
        entrypoint=config.entrypoint,
    )


def _attach_vendored(
    components: list[ComponentPlan],
    vendored: Mapping[str, VendoredChart],
) -> None:
    """Point every chart step at its vendored archive; every chart must have one."""
    for comp in components:
        if not comp.has_chart:
            continue
        archive = vendored.get(comp.name)
        if archive is None:
            raise invalid(
                f"--vendor-charts: no archive for {comp.name} ({comp.chart} {comp.version})"
            )
        comp.vendored = archive.file


def _check_plan_names(name: str, namespace: str, chart: str, ref: ComponentRef) -> None:
    """The last gate before names become folders and script arguments: whatever built the
    recipe (a file, the catalog, the wizard), a value that is no Kubernetes/Helm name is
    refused here, naming the component and the field."""
    where = f"component {names.shown(name)}"
    names.COMPONENT_NAME.check(name, f"{where} name")
    names.NAMESPACE.check(namespace, f"{where} namespace")
    if ref.source:
        names.RELEASE_NAME.check(name, f"{where} release name")
        names.CHART_NAME.check(chart, f"{where} chart")
        names.CHART_REPOSITORY.check(ref.source, f"{where} source")
        names.CHART_VERSION.check(ref.version, f"{where} version")


_RECIPES: dict[str, str] = {}


def _recipe_text(recipe: RecipeResult, renderer: Any) -> str:
    """``render_recipe`` memoised on the document (it is the same on every wizard re-plan)."""
    import json

    key = json.dumps(recipe.to_document(), sort_keys=False, default=str)
    text = _RECIPES.get(key)
    if text is None:
        text = str(renderer(recipe))
        if len(_RECIPES) >= 32:
            _RECIPES.clear()
        _RECIPES[key] = text
    return text


def _settings(state: BundleState) -> dict[str, Any]:
    o = state.overrides
    return {
        "acceleratedNodeTolerations": list(state.injected_tolerations)
        if state.tolerations_given
        else [],
        "acceleratedNodeSelector": dict(state.accelerated_selector),
        "systemNodeTolerations": list(state.system_tolerations)
        if state.system_tolerations != [WILDCARD.to_values()]
        else [],
        "systemNodeSelector": dict(state.system_selector),
        "workloadSelector": dict(state.workload_selector),
        "storageClass": state.storage_class,
        "set": [e.display() for e in o.sets],
        "setJson": [e.display() for e in o.set_json],
        "setFile": [e.display() for e in o.set_file],
        "dynamic": [e.display() for e in o.dynamic],
    }


# ---------------------------------------------------------------------- live feedback
def check_override_entry(
    recipe: RecipeResult,
    kind: str,
    text: str,
    *,
    catalog: Catalog | None = None,
    base_dir: Path | None = None,
    deployer: DeployerConfig | None = None,
) -> list[Feedback]:
    """Feedback on ONE override entry: parse errors, refusals, lock/policy verdicts, warnings.

    ``deployer`` is the layout being previewed (``deployer:`` options and ``--dynamic`` are
    judged against it)."""
    try:
        entry = parse_entry(kind, text, base_dir=base_dir)
    except AicrError as err:
        return [Feedback("error", err.render())]
    buckets: dict[str, tuple[OverrideEntry, ...]] = {
        "sets": (),
        "set_json": (),
        "set_file": (),
        "dynamic": (),
    }
    field = {"set": "sets", "set-json": "set_json", "set-file": "set_file", "dynamic": "dynamic"}[
        kind
    ]
    buckets[field] = (entry,)
    keyed = [Toleration(key="aicr-tui.check/placeholder", operator="Exists", effect="NoSchedule")]
    try:
        baseline = plan_bundle(
            recipe,
            BundleOverrides(),
            accelerated_tolerations=keyed,
            catalog=catalog,
            deployer=deployer,
        )
    except AicrError as err:
        return [Feedback("error", f"the recipe itself cannot be bundled: {err.render()}")]
    try:
        plan = plan_bundle(
            recipe,
            BundleOverrides(**buckets),
            accelerated_tolerations=keyed,
            catalog=catalog,
            deployer=deployer,
        )
    except AicrError as err:
        return [Feedback("error", err.render())]
    before = {e.render() for e in baseline.errors}
    out = [Feedback("error", e.render()) for e in plan.errors if e.render() not in before]
    seen = set(baseline.warnings)
    # The #1327 coherence verdict is about all the entries together (the DRA-only overlay
    # is three entries, each incoherent alone): the caller takes it from the whole plan.
    out += [
        Feedback("warning", w)
        for w in plan.warnings
        if w not in seen and not w.startswith(POLICY_VERDICT_PREFIX)
    ]
    if not out:
        out.append(Feedback("ok", f"{entry.display()} is accepted"))
    return out


__all__ = [
    "BlockingError",
    "BundlePlan",
    "BundleWriteResult",
    "check_override_entry",
    "plan_bundle",
]
