"""Text of the bundle's files: values, install/deploy/undeploy scripts, README, bundle-info.

Everything here is a pure function of the plan, with no clock, host or user names in it,
so the same inputs give a byte-identical bundle.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from aicr_tui.core.bundler import prose, shell
from aicr_tui.core.bundler.model import BundleState, ComponentPlan
from aicr_tui.core.bundler.templates import helm_string
from aicr_tui.core.foundation.digest import sha256_hex
from aicr_tui.core.foundation.tree import PRESENT, observe
from aicr_tui.core.foundation.yamlio import dump_yaml, sort_keys_deep

_DUMPED: dict[str, str] = {}
_DUMPED_MAX = 512


def cached_yaml(data: Any) -> str:
    """:func:`go_yaml` memoised on the data's JSON form (the wizard re-plans per keystroke
    and most components' values do not change between two plans)."""
    try:
        key = "go\0" + json.dumps(data, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return go_yaml(data)
    text = _DUMPED.get(key)
    if text is None:
        text = go_yaml(data)
        if len(_DUMPED) >= _DUMPED_MAX:
            _DUMPED.clear()
        _DUMPED[key] = text
    return text


# Plain scalars Helm's YAML 1.1 reader (go-yaml v2 under sigs.k8s.io/yaml) turns into
# something other than the string written: booleans (yes/no/on/off/y/n in any case
# spelling it knows), nulls, base-prefixed and underscored integers, sexagesimal numbers
# (1:30), floats, .inf/.nan, and the "=" value and "<<" merge indicators. The YAML 1.2
# emitter leaves them plain, so every such string is double-quoted in values files.
_YAML11_WORDS = frozenset(
    "y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF "
    "null Null NULL ~ = <<".split()
)
_YAML11_NUMBER = re.compile(
    r"^[-+]?(?:[0-9][0-9_]*(?::[0-5]?[0-9])*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?"
    r"|\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?"
    r"|0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+"
    r"|\.(?:inf|Inf|INF))$|^\.(?:nan|NaN|NAN)$"
)


def yaml11_ambiguous(text: str) -> bool:
    return text == "" or text in _YAML11_WORDS or _YAML11_NUMBER.match(text) is not None


def _helm_safe(value: Any) -> Any:
    if isinstance(value, str):
        return DoubleQuotedScalarString(value) if yaml11_ambiguous(value) else value
    if isinstance(value, dict):
        return {_helm_safe(k): _helm_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_helm_safe(v) for v in value]
    return value


def go_yaml(data: Any) -> str:
    """A YAML file a Go program reads (Helm, kubectl, Argo CD, Flux, helmfile, kustomize, and
    bundle-info.yaml for tooling): every string Go's YAML 1.1 reader would retype (``yes``,
    ``On``, ``~``, ``0x10``) is double-quoted, so Go reads what was meant."""
    return dump_yaml(_helm_safe(data))


def values_yaml(values: dict[str, Any]) -> str:
    """A chart values file: strings Helm would read as another type are quoted, and a
    ``null`` stays (Helm deletes that chart default)."""
    if not values:
        return "{}\n"
    key = "values\0" + json.dumps(values, ensure_ascii=False, allow_nan=True, default=str)
    text = _DUMPED.get(key)
    if text is None:
        text = dump_yaml(_helm_safe(values))
        if len(_DUMPED) >= _DUMPED_MAX:
            _DUMPED.clear()
        _DUMPED[key] = text
    return text


def cluster_values_yaml(values: dict[str, Any]) -> str:
    header = (
        "# Install-time values declared with --dynamic. Fill these in for the target cluster\n"
        "# before running install.sh / deploy.sh; they are passed after values.yaml and win.\n"
        "# Each key starts at the value the recipe resolved (null when it set none).\n"
    )
    return header + values_yaml(values)


def _command(name: str, **slots: str) -> str:
    return shell.fill(name, **slots).rstrip("\n")


def _chart_source(c: ComponentPlan, prefix: str = "") -> tuple[list[str], str]:
    """(``--repo`` options, chart word) of the pinned chart: an ``oci://`` chart is named by
    its reference, any other by its name in ``--repo``; a vendored chart is its archive in
    the bundle (``prefix`` is the step folder from where the command runs, "" inside it)."""
    q = shell.quote
    if c.vendored:
        return [], q(c.vendored if prefix else f"../{c.vendored}")
    chart_ref = c.chart or c.name
    if c.source.startswith("oci://"):
        return [], q(f"{c.source.rstrip('/')}/{chart_ref}")
    return ["--repo", q(c.source)], q(chart_ref)


CREATED_BY_LABEL = "app.kubernetes.io/created-by"
CREATED_BY_VALUE = "aicr-tui"
BUNDLE_LABEL = "aicr-tui/bundle"
DIGEST_ANNOTATION = "aicr-tui/bundle-digest"
STATE_NAMESPACE = "aicr-tui"
STATE_NAME = "aicr-tui-state"


@dataclass(frozen=True)
class Identity:
    """The bundle's identity on a cluster: ``digest`` (sha256 of everything the bundle
    installs) and ``label``, its first 32 hex digits (a label value holds at most 63)."""

    digest: str

    @property
    def label(self) -> str:
        return self.digest[:32]


def bundle_identity(
    components: list[ComponentPlan], readiness: dict[str, ReadinessStep] | None = None
) -> Identity:
    """What the scripts mark as this bundle's: a digest of every release (namespace, name,
    chart source and version, values) and manifest, so two bundles that would install
    anything differently never share it."""
    data = [
        [c.name, c.namespace, c.source, c.chart, c.version, c.values, c.cluster_values,
         sorted(c.manifests.items())]
        for c in components
    ] + [[r.release, r.namespace, r.folder] for r in (readiness or {}).values()]  # fmt: skip
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return Identity(digest=sha256_hex(text.encode("utf-8")))


def _marks(identity: Identity) -> dict[str, object]:
    return {
        "labels": {CREATED_BY_LABEL: CREATED_BY_VALUE, BUNDLE_LABEL: identity.label},
        "annotations": {DIGEST_ANNOTATION: identity.digest},
    }


def _namespace_document(namespace: str, identity: Identity | None = None) -> str:
    """A Namespace as one JSON line (the name a JSON string, which never reads as an
    option); with ``identity``, carrying this bundle's marks."""
    meta: dict[str, object] = {"name": namespace}
    if identity is not None:
        meta.update(_marks(identity))
    return json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": meta})


def _ensure_namespace_line(namespace: str, identity: Identity) -> str:
    document = _namespace_document(namespace, identity)
    return _command("kubectl-namespace.cmd", namespace_document=shell.quote(document))


def _values_options(c: ComponentPlan, prefix: str) -> list[str]:
    options = ["-f", shell.quote(f"{prefix}values.yaml")]
    if c.cluster_values is not None:
        options += ["-f", shell.quote(f"{prefix}cluster-values.yaml")]
    return options


def _objects_check(c: ComponentPlan, prefix: str) -> str:
    """deploy.sh's preflight for the component's chart (``chart_objects``: what it templates
    that exists and is not this release's), with the options its helm step gives."""
    q = shell.quote
    repo, chart = _chart_source(c, prefix)
    options = ["--version", q(c.version), *_values_options(c, prefix), *repo]
    return _command(
        "chart-objects.cmd",
        namespace=q(c.namespace),
        release=q(c.name),
        options=" ".join(options),
        chart=chart,
    )


def _helm_lines(c: ComponentPlan, prefix: str, identity: Identity) -> list[str]:
    q = shell.quote
    options = _values_options(c, prefix)
    repo, chart = _chart_source(c, prefix)
    where = {"namespace": q(c.namespace), "release": q(c.name), "number": f"{c.index:03d}"}
    line = _command(
        "helm-install.cmd",
        version=q(c.version),
        namespace=q(c.namespace),
        options=" ".join(options + repo),
        release=q(c.name),
        chart=chart,
    )
    # The namespace is made (marked) before helm, and helm is not given --create-namespace:
    # Helm 4 server-side applies the namespace even when it exists, so it relabelled another
    # team's namespace (found on the cluster tier);
    # the release is checked (ours? left pending?) before and verified after; the chart's
    # crds/ CRDs go in first (chart_crds: one another team installed is left as it is).
    crds = _command(
        "chart-crds.cmd", options=" ".join(["--version", q(c.version), *repo]), chart=chart
    )
    return [
        _ensure_namespace_line(c.namespace, identity),
        _command("release-ready.cmd", **where),
        crds,
        line,
        _command("release-verify.cmd", **where),
    ]


def manifest_objects(text: str, source: str) -> list[dict[str, Any]]:
    """apiVersion, kind, name (and namespace) of each object of a rendered manifest."""
    from aicr_tui.core.bundler.templates import parse_manifest_documents
    from aicr_tui.core.foundation.errors import AicrError

    try:
        docs = parse_manifest_documents(text, source)
    except AicrError:
        return []
    out: list[dict[str, Any]] = []
    for doc in docs:
        meta: dict[str, Any] = {"name": str(doc["metadata"]["name"])}
        ns = doc["metadata"].get("namespace")
        if isinstance(ns, str) and ns:
            meta["namespace"] = ns
        out.append(
            {"apiVersion": str(doc["apiVersion"]), "kind": str(doc["kind"]), "metadata": meta}
        )
    return out


def _objects_word(text: str, source: str) -> str:
    """The objects of a manifest as one shell word: a JSON document a line."""
    return shell.quote("\n".join(json.dumps(o) for o in manifest_objects(text, source)))


# API groups the API server serves itself; any other group's kind comes from a CRD.
BUILTIN_GROUPS = frozenset(
    {
        "", "apps", "batch", "autoscaling", "policy", "rbac.authorization.k8s.io",
        "networking.k8s.io", "storage.k8s.io", "scheduling.k8s.io", "node.k8s.io",
        "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io",
        "coordination.k8s.io", "discovery.k8s.io", "certificates.k8s.io", "events.k8s.io",
        "flowcontrol.apiserver.k8s.io", "resource.k8s.io", "authentication.k8s.io",
        "authorization.k8s.io", "internal.apiserver.k8s.io", "storagemigration.k8s.io",
    }
)  # fmt: skip


def custom_kinds(text: str, source: str) -> list[tuple[str, str]]:
    """(group/version, kind) of every custom resource in a rendered manifest, in order."""
    from aicr_tui.core.bundler.templates import parse_manifest_documents
    from aicr_tui.core.foundation.errors import AicrError

    try:
        docs = parse_manifest_documents(text, source)
    except AicrError:
        return []  # not Kubernetes objects: nothing to wait for (the plan checked real ones)
    defined = {
        (
            str(doc.get("spec", {}).get("group", "")),
            str(doc.get("spec", {}).get("names", {}).get("kind", "")),
        )
        for doc in docs
        if doc.get("kind") == "CustomResourceDefinition" and isinstance(doc.get("spec"), dict)
    }
    out: list[tuple[str, str]] = []
    for doc in docs:
        api, kind = str(doc["apiVersion"]), str(doc["kind"])
        if (api.split("/", 1)[0], kind) in defined:
            continue  # its CRD is in the same file: kubectl's retries cover that race
        group = api.split("/", 1)[0] if "/" in api else ""
        if group not in BUILTIN_GROUPS and (api, kind) not in out:
            out.append((api, kind))
    return out


def _manifest_lines(
    c: ComponentPlan, prefix: str, identity: Identity, *, wait_kinds: bool = False
) -> list[str]:
    lines: list[str] = []
    if not c.manifests:
        return lines
    if not c.has_chart:
        # `kubectl create namespace ... -- NAME` is refused by a real kubectl (it reads NAME
        # only before a `--`), so the Namespace goes in as a document on stdin.
        lines.append(_ensure_namespace_line(c.namespace, identity))
    waited: set[tuple[str, str]] = set()
    for name in sorted(c.manifests):
        body = c.manifests[name]
        if wait_kinds:
            for gv, kind in custom_kinds(body, name):
                if (gv, kind) not in waited:
                    waited.add((gv, kind))
                    lines.append(
                        _command(
                            "wait-for-kind.cmd",
                            group_version=shell.quote(gv),
                            kind=shell.quote(kind),
                        )
                    )
        # Server-side, with our field manager and marks (a CRD larger than the 256 KiB
        # last-applied annotation, Gateway API's HTTPRoute ~330 KiB, could not go
        # client-side anyway), after checking that every object that exists is ours.
        lines.append(
            _command(
                "apply-ours.cmd",
                file=shell.quote(f"{prefix}manifests/{name}"),
                objects=_objects_word(body, name),
            )
        )
    return lines


def install_commands(
    c: ComponentPlan, prefix: str, identity: Identity, *, wait_kinds: bool = False
) -> list[str]:
    """Helm release first (chart source and version pinned), then the raw manifests (each
    custom resource's kind waited for first, with ``wait_kinds``)."""
    lines = _helm_lines(c, prefix, identity) if c.has_chart else []
    return lines + _manifest_lines(c, prefix, identity, wait_kinds=wait_kinds)


# Namespaces a bundle never deletes, even when a component is installed into one.
PROTECTED_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


def uninstall_commands(c: ComponentPlan) -> list[str]:
    """Manifests (reverse order; only objects carrying this bundle's label), then the
    release (only when its release record is this bundle's). CRDs, namespaces and the state
    record are the end of the run (``finish_undeploy``): a CRD goes only with
    ``--delete-crds``, a namespace only when it is ours and holds nothing else."""
    q = shell.quote
    lines = [
        _command("delete-ours.cmd", objects=_objects_word(c.manifests[name], name))
        for name in sorted(c.manifests, reverse=True)
    ]
    if c.has_chart:
        lines.append(_command("helm-uninstall.cmd", namespace=q(c.namespace), release=q(c.name)))
    return lines


_INVENTORY_SAFE = re.compile(r"[A-Za-z0-9._/:-]")


def _field(value: str) -> str:
    """One inventory field: every character outside ``[A-Za-z0-9._/:-]`` as ``\\xHH`` (its
    UTF-8 bytes), which the scripts decode with ``printf %b``: a value never splits a line."""
    return "".join(
        ch if _INVENTORY_SAFE.fullmatch(ch) else "".join(f"\\x{b:02x}" for b in ch.encode())
        for ch in value
    )


def inventory(
    components: list[ComponentPlan], readiness: dict[str, ReadinessStep] | None = None
) -> str:
    """What the bundle deploys, a line each (``release NS NAME``, ``object <JSON document>``,
    ``namespace NAME <JSON document>``; names encoded by :func:`_field`): the state record
    keeps it, so the next bundle can list what it no longer contains."""
    lines: list[str] = []
    for c in components:
        if c.has_chart:
            lines.append(f"release {_field(c.namespace)} {_field(c.name)}")
        r = (readiness or {}).get(c.name)
        if r is not None:
            lines.append(f"release {_field(r.namespace)} {_field(r.release)}")
        for name in sorted(c.manifests):
            for o in manifest_objects(c.manifests[name], name):
                lines.append(f"object {json.dumps(o, separators=(',', ':'))}")
    for ns in dict.fromkeys(c.namespace for c in components):
        if ns not in PROTECTED_NAMESPACES:
            lines.append(f"namespace {_field(ns)} {_namespace_document(ns)}")
    return "\n".join(lines)


def _identity_lines(
    identity: Identity,
    components: list[ComponentPlan],
    readiness: dict[str, ReadinessStep] | None = None,
) -> str:
    """The shell variables the runner's ownership functions read."""
    q = shell.quote
    text = inventory(components, readiness)
    state_meta: dict[str, object] = {"name": STATE_NAME, "namespace": STATE_NAMESPACE}
    state = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": state_meta,
        "data": {"bundle": identity.label, "digest": identity.digest, "inventory": text},
    }
    return "\n".join(
        [
            f"BUNDLE_ID={identity.label}",
            f"BUNDLE_DIGEST={identity.digest}",
            f"INVENTORY={q(text)}",
            f"STATE_DOC={q(json.dumps(state))}",
            f"STATE_NAMESPACE_DOC={q(_namespace_document(STATE_NAMESPACE, identity))}",
        ]
    )


def install_sh(c: ComponentPlan, identity: Identity | None = None) -> str:
    """``NNN-<component>/install.sh``: that one component as a one-step run of the step
    runner (the same time limit, retries, --dry-run, --help and summary as deploy.sh), with
    the same marks as deploy.sh gives it."""
    identity = identity or bundle_identity([c])
    step = (c.index, c.name, f"==> [{c.index:03d}] {c.name}", install_commands(c, "", identity))
    return shell.fill(
        "install.sh",
        final_word=shell.quote(f"{c.name} installed"),
        number=_numbers([step]),
        identity=_identity_lines(identity, [c]),
        runner=shell.template("runner.sh").rstrip("\n"),
        step=_steps([step]),
    )


@dataclass(frozen=True)
class ReadinessStep:
    """A ``--readiness-hooks`` folder: a local chart installed (and waited for) after its
    component, before anything later in the order."""

    index: int
    folder: str
    release: str
    namespace: str


def _steps(steps: list[tuple[int, str, str, list[str]]]) -> str:
    """Each step as a function whose every command stops it on failure, then its call."""
    return "".join(
        shell.fill(
            "step.sh",
            number=f"{number:03d}",
            step_name=shell.quote(name),
            banner=shell.quote(banner),
            commands="\n".join(f"{line} || return" for line in commands) or ":",
        )
        for number, name, banner, commands in steps
    ).rstrip("\n")


def _numbers(steps: list[tuple[int, str, str, list[str]]]) -> str:
    return " ".join(f"{number:03d}" for number, *_ in steps)


def _readiness_install(r: ReadinessStep, identity: Identity) -> list[str]:
    q = shell.quote
    where = {"namespace": q(r.namespace), "release": q(r.release), "number": f"{r.index:03d}"}
    return [
        _ensure_namespace_line(r.namespace, identity),
        _command("release-ready.cmd", **where),
        _command(
            "helm-install-local.cmd",
            namespace=q(r.namespace),
            release=q(r.release),
            chart=q(f"./{r.folder}"),
        ),
        _command("release-verify.cmd", **where),
    ]


def _readiness_uninstall(r: ReadinessStep) -> list[str]:
    q = shell.quote
    return [_command("helm-uninstall.cmd", namespace=q(r.namespace), release=q(r.release))]


def deploy_sh(
    components: list[ComponentPlan],
    readiness: dict[str, ReadinessStep] | None = None,
    identity: Identity | None = None,
) -> str:
    """``deploy.sh``: one step per component (and readiness hook) in deploymentOrder, run by
    the step runner (timeouts, retries, --no-wait, --best-effort, --from, --dry-run), after
    reading and writing the state record (``state_begin``)."""
    identity = identity or bundle_identity(components, readiness)
    steps: list[tuple[int, str, str, list[str]]] = []
    checks: list[str] = []
    for c in components:
        commands = install_commands(c, f"{c.folder}/", identity, wait_kinds=True)
        steps.append((c.index, c.name, f"==> [{c.index:03d}] {c.name}", commands))
        if c.has_chart:
            checks.append(f"_objects_{c.index:03d}() {{\n{_objects_check(c, f'{c.folder}/')}\n}}")
        r = (readiness or {}).get(c.name)
        if r is not None:
            banner = f"==> [{r.index:03d}] {r.release}"
            steps.append((r.index, r.release, banner, _readiness_install(r, identity)))
    return shell.fill(
        "deploy.sh",
        numbers=_numbers(steps),
        identity=_identity_lines(identity, components, readiness),
        runner=shell.template("runner.sh").rstrip("\n"),
        objects="\n".join(checks) or ":",
        steps=_steps(steps),
    )


def undeploy_sh(
    components: list[ComponentPlan],
    readiness: dict[str, ReadinessStep] | None = None,
    identity: Identity | None = None,
) -> str:
    """``undeploy.sh``: every step in reverse, then (``finish_undeploy``) the CRDs this
    bundle created (kept unless ``--delete-crds``), its namespaces, in reverse order of
    first use, and the state record."""
    identity = identity or bundle_identity(components, readiness)
    q = shell.quote
    steps: list[tuple[int, str, str, list[str]]] = []
    for c in reversed(components):
        r = (readiness or {}).get(c.name)
        if r is not None:
            banner = f"==> removing [{r.index:03d}] {r.release}"
            steps.append((r.index, r.release, banner, _readiness_uninstall(r)))
        banner = f"==> removing [{c.index:03d}] {c.name}"
        steps.append((c.index, c.name, banner, uninstall_commands(c)))
    namespaces = [
        ns
        for ns in reversed(list(dict.fromkeys(c.namespace for c in components)))
        if ns not in PROTECTED_NAMESPACES
    ]
    lines = [
        _command(
            "kubectl-delete-namespace.cmd",
            namespace=q(ns),
            namespace_document=q(_namespace_document(ns)),
        )
        + " || rc=1"
        for ns in namespaces
    ]
    function = (
        "_bundle_namespaces() {\n  local rc=0\n"
        + "".join(f"  {line}\n" for line in lines)
        + '  return "$rc"\n}'
    )
    return shell.fill(
        "undeploy.sh",
        numbers=_numbers(steps),
        identity=_identity_lines(identity, components, readiness),
        runner=shell.template("runner.sh").rstrip("\n"),
        steps=_steps(steps),
        namespaces=function,
    )


def operational_notes(state: BundleState, components: list[ComponentPlan]) -> list[str]:
    """The briefs' operational notes that apply to this recipe and profile."""
    notes: list[str] = []
    by_name = {c.name: c for c in components}
    profile = state.recipe.metadata.selectedProfile
    gpu = by_name.get("gpu-operator")
    if gpu is not None and "nvidia-toolkit-hardening-aks.yaml" in gpu.manifests:
        notes.append(
            "Toolkit hardening scope: the nvidia-toolkit-hardening DaemonSet sets "
            "accept-nvidia-visible-devices-envvar-when-unprivileged=false, closing the "
            "NVIDIA_VISIBLE_DEVICES env-var path, and keeps "
            "accept-nvidia-visible-devices-as-volume-mounts=true for the device plugin. The "
            "volume-mount device path stays open, so full multi-tenant isolation also needs an "
            "admission policy that rejects /dev/null-backed mounts whose destination is under "
            "/var/run/nvidia-container-devices. Its readiness is fail-closed: a node where "
            "nvidia-ctk cannot harden the config stays NotReady."
        )
    nw = by_name.get("nodewright-customizations")
    if nw is not None:
        st, tuning = observe(nw.values, "tuningEnabled")
        if st == PRESENT and helm_string(tuning) == "false":
            notes.append(
                "Tuning is off (nodewright-customizations tuningEnabled=false): nvidia-tuned is "
                "not rendered into the Skyhook CR and nvidia-setup-full chains off "
                "nvidia-setup-kernel. An in-place upgrade does not revert tuning a node already "
                "applied (isolcpus, hugepages, GRUB changes stay until the node is reimaged or "
                "recreated; recreating the GPU pool is the clean path, #1820). Re-enable with "
                "--set nodewrightcustomizations:tuningEnabled=true."
            )
    if gpu is not None:
        driver_on = observe(gpu.values, "driver.enabled") != (PRESENT, False)
        gdr = observe(gpu.values, "gdrcopy.enabled") == (PRESENT, True)
        other = _other_profile_value(state)
        if not driver_on:
            notes.append(
                "GDRCopy: the GPU Operator runs GDRCopy as a sidecar of its driver pod, which "
                "this profile does not deploy (driver.enabled=false), so gdrcopy.enabled is inert "
                "against the preinstalled driver; whether the node image ships the gdrdrv module "
                "is unverified. For operator-deployed GDRCopy regenerate with "
                f"`aicr-tui recipe --profile {other}` and bundle with "
                "--set gpuoperator:gdrcopy.enabled=true (not a profile-owned path). Workloads "
                "also need the GDRCopy userspace library in their image."
            )
        elif gdr:
            notes.append(
                "GDRCopy: deployed by the GPU Operator as a sidecar of its driver pod; workloads "
                "also need the GDRCopy userspace library in their image."
            )
        else:
            notes.append(
                "GDRCopy: off; the GPU Operator installs the driver here, so "
                "--set gpuoperator:gdrcopy.enabled=true enables it (not a profile-owned path)."
            )
    perf = state.recipe.validation.phase("performance") if state.recipe.validation else None
    if perf is not None and any(c.startswith("nccl-all-reduce-bw") for c in perf.checks or []):
        notes.append(
            "NCCL benchmark image: the performance phase pulls the nccl-tests image from "
            "public.ecr.aws, a cross-cloud pull. Private or egress-restricted clusters must allow "
            "egress to public.ecr.aws or mirror the image into a reachable registry (e.g. ACR or "
            "OCIR) first; otherwise the benchmark fails at image pull without measuring anything."
        )
    net = by_name.get("network-operator")
    if net is not None and "nvidia-peermem-reloader.yaml" in net.manifests:
        notes.append(
            "nvidia-peermem reloader: re-asserts modprobe nvidia-peermem every 30 s on "
            "InfiniBand nodes (pci-15b3) and reports Ready immediately by design. On node images "
            "with a stub nvidia-peermem build it logs 'not loadable yet' indefinitely; GPUDirect "
            "RDMA then relies on the kernel DMA-BUF path."
        )
    dra = next(
        (c for c in ("nvidia-dra-driver-gpu", "nvidia-dra-driver-gpu-ocp") if c in by_name), None
    )
    if dra is not None and observe(by_name[dra].values, "resources.gpus.enabled") == (
        PRESENT,
        True,
    ):
        notes.append(
            "DRA-only GPU allocation is experimental (#1327): whole GPUs are allocated through "
            "ResourceClaims, and manifests that request scalar nvidia.com/gpu are unschedulable."
        )
    if profile is not None:
        notes.append(
            f"Profile {profile.name}={profile.value}: its owned paths are locked; to change GPU "
            f"stack ownership regenerate the recipe with `aicr-tui recipe --profile {profile.name}=<value>`."
        )
    return notes


def _other_profile_value(state: BundleState) -> str:
    from aicr_tui.core.bundler.lock import find_declaration

    profile = state.recipe.metadata.selectedProfile
    if profile is None:
        return "gpuStack=operator-managed"
    decl = find_declaration(state, profile.name, profile.value)
    others = [v for v in (decl.value_names() if decl else []) if v != profile.value]
    return f"{profile.name}={others[0] if others else 'operator-managed'}"


def readme(
    state: BundleState,
    components: list[ComponentPlan],
    warnings: list[str],
    notes: list[str],
    *,
    deployer: str = "helm",
    deploy_text: str | None = None,
) -> str:
    c = state.recipe.criteria
    profile = state.recipe.metadata.selectedProfile
    out: list[str] = ["# AICR deployment bundle\n\n"]
    out.append(
        f"Recipe: service `{c.service}`, accelerator `{c.accelerator}`, intent `{c.intent}`, "
        f"os `{c.os}`, platform `{c.platform}`"
    )
    if profile is not None:
        out.append(f"; profile `{profile.name}={profile.value}`")
    out.append(
        f".\n\nGenerated by `aicr-tui bundle` ({deployer} deployer). `recipe.yaml` is the effective "
        "recipe, `bundle-info.yaml` describes the build, `checksums.txt` covers every other file.\n"
    )
    out.append("\n## Components (deployment order)\n\n")
    out.append(
        "| # | folder | chart | version | namespace | manifests |\n|---|---|---|---|---|---|\n"
    )
    for comp in components:
        chart = f"`{comp.chart}` from {comp.source}" if comp.has_chart else "(manifest-only)"
        manifests = ", ".join(f"`{m}`" for m in sorted(comp.manifests)) or "-"
        out.append(
            f"| {comp.index} | `{comp.folder}/` | {chart} | {comp.version or '-'} | "
            f"`{comp.namespace}` | {manifests} |\n"
        )
    if state.skipped:
        out.append("\nLeft out of this bundle:\n\n")
        for name in sorted(state.skipped):
            out.append(f"- `{name}`: {state.skipped[name]}\n")
    out.append("\n## Deploy\n\n")
    out.append(deploy_text if deploy_text is not None else prose.section("default"))
    dyn = [comp for comp in components if comp.cluster_values is not None]
    if dyn:
        out.append("\n## Install-time values (--dynamic)\n\n")
        for comp in dyn:
            keys = ", ".join(f"`{k}`" for k in _flat_keys(comp.cluster_values or {}))
            out.append(f"- `{comp.folder}/cluster-values.yaml`: {keys}\n")
        out.append("\nFill these in before deploying; they are passed after `values.yaml`.\n")
    out.append("\n## Warnings\n\n")
    out += [f"- {w}\n" for w in warnings] or ["None.\n"]
    out.append("\n## Notes\n\n")
    out += [f"- {n}\n" for n in notes] or ["None.\n"]
    return "".join(out)


def _flat_keys(tree: dict[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for k, v in tree.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out += _flat_keys(v, f"{path}.")
        else:
            out.append(path)
    return out


def component_release(comp: ComponentPlan) -> dict[str, Any]:
    """One component's entry in bundle-info's release list: its numbered folder and the
    manifests its install applies."""
    rel: dict[str, Any] = {
        "component": comp.name,
        "name": comp.name,
        "namespace": comp.namespace,
        "path": comp.folder,
    }
    if comp.manifests:
        rel["manifest"] = [f"{comp.folder}/manifests/{m}" for m in sorted(comp.manifests)]
    return rel


def bundle_info(
    state: BundleState,
    components: list[ComponentPlan],
    recipe_bytes: bytes,
    settings: dict[str, Any],
    *,
    deployer: str = "helm",
    entrypoint: str = "deploy.sh",
    releases: list[dict[str, Any]] | None = None,
) -> str:

    if releases is not None:
        return _bundle_info_doc(state, recipe_bytes, settings, deployer, entrypoint, releases)
    releases = [component_release(comp) for comp in components]
    return _bundle_info_doc(state, recipe_bytes, settings, deployer, entrypoint, releases)


def _bundle_info_doc(
    state: BundleState,
    recipe_bytes: bytes,
    settings: dict[str, Any],
    deployer: str,
    entrypoint: str,
    releases: list[dict[str, Any]],
) -> str:
    from aicr_tui.core import __version__

    doc = {
        "apiVersion": "aicr.run/v1",
        "kind": "BundleInfo",
        "build": {
            "deployer": deployer,
            "recipe": {
                "digest": "sha256:" + sha256_hex(recipe_bytes),
                "path": "recipe.yaml",
                "version": state.recipe.metadata.version or "",
            },
            "settings": {k: v for k, v in settings.items() if v},
        },
        "layout": {"entrypoint": entrypoint, "releases": releases},
        "metadata": {"version": __version__},
    }
    return cached_yaml(sort_keys_deep(doc))


def checksums(files: dict[str, bytes]) -> str:
    return "".join(f"{sha256_hex(files[p])}  {p}\n" for p in sorted(files))
