"""Registry-wired bundle checks (``validations`` in aicr_tui/recipes/registry.yaml).

Each function reads the exact final values and returns ``(warnings, errors)``. The registry
entry decides what they mean: severity ``error`` turns every warning into a blocking error
(``<warning>. <message>``); other severities make warnings notes, while returned errors
still block. Conditions are ANDed across criteria fields and ORed within one.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import Any

from aicr_tui.core.bundler.model import BlockingError, BundleState
from aicr_tui.core.bundler.policy import DEVICE_PLUGIN_COMPONENTS, DRA_COMPONENTS
from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.tree import PRESENT, observe, paths_intersect

Result = tuple[list[str], list[str]]
CheckFn = Callable[[BundleState, str], Result]

OPERATOR_INSTALL_DIR = "/run/nvidia/driver"
NVSENTINEL_CONSUMERS = (
    ("global.metadataCollector.enabled", ("metadata-collector",)),
    (
        "global.syslogHealthMonitor.enabled",
        ("syslog-health-monitor-regular", "syslog-health-monitor-kata"),
    ),
)


def _is_aks(state: BundleState) -> bool:
    return state.recipe.criteria.service == "aks"


def _dynamic_hits(state: BundleState, component: str, paths: tuple[str, ...]) -> list[str]:
    return [d for d in state.dynamic_paths(component) if any(paths_intersect(d, p) for p in paths)]


# ------------------------------------------------------------------- driver ownership
def check_driver_ownership_coherence(state: BundleState, component: str) -> Result:
    errors: list[str] = []
    values = state.values.get(component)
    if values is None:
        return [], []
    dyn = _dynamic_hits(
        state, component, ("driver.enabled", "toolkit.enabled", "hostPaths.driverInstallDir")
    )
    if dyn:
        return [], [
            f"--dynamic {component}:{d} moves a driver-ownership value into the operator-editable "
            "cluster-values.yaml, where driver/toolkit ownership and the DRA driver root can no "
            "longer be checked for coherence; set it in the recipe instead"
            for d in dyn
        ]
    drv_state = state.recipe.metadata.gpuDriverState
    if drv_state and drv_state not in ("preinstalled", "absent"):
        errors.append(
            f'recipe metadata.gpuDriverState is "{drv_state}"; expected "preinstalled" or "absent"'
        )
    toggles: dict[str, Any] = {}
    for key in ("driver", "toolkit"):
        st, node = observe(values, key)
        if st != PRESENT:
            toggles[key] = None
            continue
        if not isinstance(node, dict):
            errors.append(
                f"{component} {key} is {'null' if node is None else 'not a map'}; "
                f"{key}.enabled must be a bare boolean"
            )
            return [], errors
        enabled = node.get("enabled")
        if "enabled" in node and not isinstance(enabled, bool):
            errors.append(
                f"{component} {key}.enabled is {enabled!r} ({type(enabled).__name__}), not a "
                "boolean: an unquoted interpolation or a quoted value was retyped; use a bare "
                "true or false"
            )
            return [], errors
        toggles[key] = enabled
    driver_on = toggles["driver"] is not False
    toolkit_off = toggles["toolkit"] is False
    profiled = state.recipe.metadata.selectedProfile is not None
    if drv_state == "absent" and (not driver_on or toolkit_off):
        msg = (
            f"{component}: the values assume a platform-preinstalled driver and toolkit "
            "(driver.enabled=false or toolkit.enabled=false), but the snapshot saw no NVIDIA "
            "kernel driver on the sampled GPU node (metadata.gpuDriverState: absent), so the "
            "GPU nodes would be left driverless"
        )
        if _is_aks(state) and profiled:
            msg += (
                "; repair the AKS-managed driver install and recapture the snapshot, or recreate "
                "the pools with --gpu-driver none, recapture, and regenerate with "
                "`aicr-tui recipe --profile gpuStack=operator-managed` (regenerating against the "
                "current snapshot alone fails: that value expects pools reading None); per-path "
                "--set overrides of the owned driver paths are rejected on profiled recipes"
            )
        elif _is_aks(state):
            msg += (
                "; recreate the pools without --gpu-driver none and recapture, or bundle this "
                "legacy recipe with the full GPU Operator-managed set: --set "
                "gpuoperator:driver.enabled=true --set gpuoperator:toolkit.enabled=true --set "
                "gpuoperator:operator.runtimeClass=nvidia --set "
                "dradriver:nvidiaDriverRoot=/run/nvidia/driver"
            )
        else:
            msg += (
                "; repair the node image driver and recapture, or select operator-managed ownership"
            )
        errors.append(msg)
    st, host_paths = observe(values, "hostPaths")
    install_dir = OPERATOR_INSTALL_DIR
    if st == PRESENT:
        if not isinstance(host_paths, dict):
            errors.append(
                f"{component} hostPaths is not a map; expected hostPaths.driverInstallDir"
            )
            return [], errors
        if "driverInstallDir" in host_paths:
            raw = host_paths["driverInstallDir"]
            if raw is None or not isinstance(raw, str):
                errors.append(
                    f"{component} hostPaths.driverInstallDir is {raw!r}; expected an absolute path"
                )
                return [], errors
            if raw:
                if not raw.startswith("/"):
                    errors.append(
                        f'{component} hostPaths.driverInstallDir "{raw}" is relative; expected an '
                        "absolute path"
                    )
                    return [], errors
                install_dir = posixpath.normpath(raw)
                if install_dir == "/":
                    errors.append(
                        f'{component} hostPaths.driverInstallDir "{raw}" resolves to the host root '
                        '"/": mounting the driver over the root filesystem breaks runc (#1106); '
                        f"keep {OPERATOR_INSTALL_DIR}"
                    )
                    return [], errors
    dra = next((c for c in DRA_COMPONENTS if state.is_rendered(c)), None)
    if dra is None:
        return [], errors
    if _dynamic_hits(state, dra, ("nvidiaDriverRoot",)):
        errors.append(
            f"--dynamic {dra}:nvidiaDriverRoot takes the DRA driver root out of lockstep checking "
            f"with {component} hostPaths.driverInstallDir; set it in the recipe instead"
        )
        return [], errors
    dra_values = state.values[dra]
    st, root = observe(dra_values, "nvidiaDriverRoot")
    declared = st == PRESENT
    if declared and (not isinstance(root, str) or not root or not root.startswith("/")):
        errors.append(f"{dra} nvidiaDriverRoot is {root!r}; expected an absolute path")
        return [], errors
    alias = _alias(state, dra)
    fix = f"set --set {alias}:nvidiaDriverRoot={install_dir}"
    selected = state.recipe.metadata.selectedProfile
    if selected is not None and "nvidiaDriverRoot" in (selected.ownedPaths.get(dra) or ()):
        # The profile lock refuses a --set of an owned path: the fix is the profile value.
        label = f"{selected.name}={selected.value}"
        if selected.value == "operator-managed":
            fix = (
                f"{dra} nvidiaDriverRoot is owned by profile {label}, which sets it: drop the "
                "--set overrides of the driver paths"
            )
        else:
            fix = (
                f"{dra} nvidiaDriverRoot is owned by profile {label}, so --set cannot change it: "
                "drop the --set overrides of the driver paths, or, for a GPU Operator-installed "
                f"driver, regenerate with `aicr-tui recipe --profile {selected.name}=operator-managed`"
            )
    if driver_on:
        if not declared:
            errors.append(
                f"{component} installs the driver (driver.enabled=true) under {install_dir}, but "
                f"{dra} nvidiaDriverRoot is not set and the chart default / cannot match: CDI "
                f"spec generation fails and DRA pods stall in ContainerCreating; {fix}"
            )
        elif posixpath.normpath(root) != install_dir:
            errors.append(
                f"{component} installs the driver (driver.enabled=true) under {install_dir}, but "
                f'{dra} nvidiaDriverRoot is "{root}": CDI spec generation fails and DRA pods '
                f"stall in ContainerCreating; {fix}"
            )
    elif declared and posixpath.normpath(root) == OPERATOR_INSTALL_DIR:
        errors.append(
            f"{component} leaves the driver to the platform (driver.enabled=false), but {dra} "
            f'nvidiaDriverRoot is still the operator container root "{OPERATOR_INSTALL_DIR}" '
            "(the legacy pre-flip signature, #1757): regenerate the recipe with `aicr-tui recipe`, "
            "or supply the complete GPU Operator-managed override set on a legacy recipe"
        )
    return [], errors


def _alias(state: BundleState, component: str) -> str:
    entry = state.registry_entry(component)
    return entry.valueOverrideKeys[0] if entry and entry.valueOverrideKeys else component


# ----------------------------------------------------------------------- NVSentinel
def _gpu_operator(state: BundleState) -> str | None:
    return next((c for c in DEVICE_PLUGIN_COMPONENTS if state.active(c)), None)


def _helm_truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str | list | dict):
        return len(value) > 0
    return False


def _nvsentinel_inputs(
    state: BundleState, component: str
) -> tuple[dict[str, Any], str, dict[str, Any]] | None:
    """NVSentinel's values, the active GPU operator and its effective values; None when
    either is not part of the bundle (nothing to check)."""
    values = state.values.get(component)
    operator = _gpu_operator(state)
    if values is None or operator is None:
        return None
    return values, operator, state.effective_values(operator) or {}


def check_nvsentinel_driver_label(state: BundleState, component: str) -> Result:
    inputs = _nvsentinel_inputs(state, component)
    if inputs is None:
        return [], []
    values, operator, op_values = inputs
    st, driver = observe(op_values, "driver")
    if st != PRESENT:
        return [], []
    if not isinstance(driver, dict) or (
        "enabled" in driver and not isinstance(driver["enabled"], bool)
    ):
        if state.is_rendered(operator):
            return [], []  # CheckDriverOwnershipCoherence reports the unreadable toggle
    elif driver.get("enabled", True) is not False:
        return [], []
    rendering = [
        ds
        for path, daemonsets in NVSENTINEL_CONSUMERS
        if observe(values, path) != (PRESENT, False)
        for ds in daemonsets
    ]
    errors: list[str] = []
    if rendering and _dynamic_hits(state, component, ("labeler.assumeDriverInstalled",)):
        errors.append(
            f"--dynamic {component}:labeler.assumeDriverInstalled leaves the driver label "
            "undecidable at bundle time while its consumers render; set it statically"
        )
    if not rendering:
        consumer_dyn = _dynamic_hits(state, component, tuple(p for p, _ in NVSENTINEL_CONSUMERS))
        if consumer_dyn:
            st_flag, flag = observe(values, "labeler.assumeDriverInstalled")
            if not (st_flag == PRESENT and _helm_truthy(flag)):
                errors.append(
                    f"--dynamic {component}:{consumer_dyn[0]} can re-enable a consumer of the "
                    "driver label without labeler.assumeDriverInstalled set statically"
                )
        return [], errors
    st_flag, flag = observe(values, "labeler.assumeDriverInstalled")
    if st_flag == PRESENT and _helm_truthy(flag):
        return [], errors
    errors.append(
        f"{component}: the GPU driver is host-installed ({operator} driver.enabled=false) and "
        "labeler.assumeDriverInstalled is not set, so the labeler never applies "
        "nvsentinel.dgxc.nvidia.com/driver.installed and "
        f"{', '.join(rendering)} sit at 0 desired pods with no error or event (#2175); set "
        "--set nv-sentinel:labeler.assumeDriverInstalled=true (labelling nodes by hand is "
        "reverted by the labeler; do not set the flag where the GPU Operator installs the driver)"
    )
    return [], errors


def check_nvsentinel_runtime_class(state: BundleState, component: str) -> Result:
    inputs = _nvsentinel_inputs(state, component)
    if inputs is None:
        return [], []
    values, operator, op_values = inputs
    st_op, op_class = observe(op_values, "operator.runtimeClass")
    st_col, col_class = observe(values, "metadata-collector.runtimeClassName")
    if (st_op == PRESENT and not isinstance(op_class, str)) or (
        st_col == PRESENT and not isinstance(col_class, str)
    ):
        return [], []
    if observe(values, "global.metadataCollector.enabled") == (PRESENT, False):
        return [], []
    errors: list[str] = []
    dyn = _dynamic_hits(state, component, ("metadata-collector.runtimeClassName",))
    dyn += [f"{operator}:{p}" for p in _dynamic_hits(state, operator, ("operator.runtimeClass",))]
    for d in dyn:
        errors.append(
            f"--dynamic {d} makes the RuntimeClass names unverifiable at bundle time; set "
            "them statically"
        )
    operator_class = op_class if st_op == PRESENT and op_class else "nvidia"
    collector_class = col_class if st_col == PRESENT else "nvidia"
    if collector_class and collector_class != operator_class:
        errors.append(
            f'{component} metadata-collector.runtimeClassName is "{collector_class}" but '
            f'{operator} creates its RuntimeClass as "{operator_class}" (operator.runtimeClass): '
            f'every metadata-collector pod is rejected at admission (RuntimeClass "{collector_class}" '
            "not found), the DaemonSet shows N desired / 0 created and only a FailedCreate event "
            f"(#2176); set --set nv-sentinel:metadata-collector.runtimeClassName={operator_class}"
        )
    return [], errors


# --------------------------------------------------------------- nodewright / network
def _component_tolerations(state: BundleState, component: str) -> list[Any]:
    entry = state.registry_entry(component)
    values = state.values.get(component, {})
    paths = []
    if entry and entry.nodeScheduling and entry.nodeScheduling.accelerated:
        paths = entry.nodeScheduling.accelerated.tolerationPaths
    found: list[Any] = []
    seen = False
    for p in paths:
        st, value = observe(values, p)
        if st == PRESENT:
            seen = True
            if isinstance(value, list):
                found.extend(value)
            elif value is not None:
                found.append(value)
    return found if seen else list(state.injected_tolerations)


def check_wildcard_accelerated_toleration(state: BundleState, component: str) -> Result:
    if component not in state.values:
        return [], []
    tolerations = _component_tolerations(state, component)
    keyless = [t for t in tolerations if not (isinstance(t, dict) and t.get("key"))]
    if tolerations and not keyless:
        return [], []
    how = "an empty list" if not tolerations else "a keyless entry"
    return [
        f"{component} renders a wildcard (keyless) accelerated-node toleration ({how}"
        + ("" if state.tolerations_given else "; no --accelerated-node-toleration was given")
        + ")"
    ], []


def check_host_mofed_without_network_operator(state: BundleState, component: str) -> Result:
    """Network-operator left out while the GPU Operator may expect a host MOFED.

    Fires when network-operator is dropped with ``--set <c>:enabled=false`` and
    ``driver.rdma.useHostMofed=false`` was not restated, or whenever network-operator does
    not render while the final values ask for a host MOFED.
    """
    if "network-operator" not in state.declared or state.is_rendered("network-operator"):
        return [], []
    values = state.values.get(component, {})
    uses_host = observe(values, "driver.rdma.useHostMofed") == (PRESENT, True)
    dropped_by_flag = state.recipe_enabled("network-operator")
    restated = any(
        e.kind == "set" and e.path == "driver.rdma.useHostMofed" and e.value is False
        for e in state.entries_for(component)
    )
    if not uses_host and (restated or not dropped_by_flag):
        return [], []
    return [
        "network-operator is disabled, so nothing installs MOFED for the GPU Operator; add "
        "--set gpuoperator:driver.rdma.useHostMofed=false"
        + (" (it is currently true)" if uses_host else "")
    ], []


def check_workload_selector_missing(state: BundleState, component: str) -> Result:
    if state.workload_selector:
        return [], []
    return [f"{component} is enabled but --workload-selector is not set"], []


def check_accelerated_selector_missing(state: BundleState, component: str) -> Result:
    if state.accelerated_selector:
        return [], []
    return [f"{component} is enabled but --accelerated-node-selector is not set"], []


def check_slinky_slurm_values(state: BundleState, component: str) -> Result:
    """What this port of upstream's Slurm bundle cannot honour is refused, not shipped:
    ``accounting.enabled`` belongs to the recipe's accounting mode (upstream ADR-016: only
    ``disabled`` is resolved here), and ``storage.enabled`` needs the claims mounted into
    the login and compute pods, which upstream's bundler does and this one does not."""
    values = state.values.get(component, {})
    errors: list[str] = []
    mode = ((state.recipe.configuration or {}).get("slurm") or {}).get("accounting") or {}
    st, acct = observe(values, "accounting.enabled")
    if st == PRESENT and acct is not False:
        errors.append(
            f"{component} accounting.enabled is {acct!r}, but it is owned by the recipe's Slurm "
            f"accounting mode ({mode.get('mode', 'disabled')}); drop the override"
        )
    st, shared = observe(values, "storage.enabled")
    if st == PRESENT and shared is True:
        errors.append(
            f"{component} storage.enabled=true is not supported by aicr-tui yet: the shared "
            "claims would be created but not mounted into the login and compute pods"
        )
    return [], errors


CHECKS: dict[str, CheckFn] = {
    "CheckSlinkySlurmValues": check_slinky_slurm_values,
    "CheckDriverOwnershipCoherence": check_driver_ownership_coherence,
    "CheckHostMofedWithoutNetworkOperator": check_host_mofed_without_network_operator,
    "CheckWorkloadSelectorMissing": check_workload_selector_missing,
    "CheckAcceleratedSelectorMissing": check_accelerated_selector_missing,
    "CheckWildcardAcceleratedToleration": check_wildcard_accelerated_toleration,
    "CheckNVSentinelDriverLabelDetectable": check_nvsentinel_driver_label,
    "CheckNVSentinelRuntimeClassCoherence": check_nvsentinel_runtime_class,
}


def conditions_met(conditions: dict[str, list[str]], criteria: dict[str, str]) -> bool:
    for field, allowed in conditions.items():
        actual = criteria.get(field)
        if actual is None:
            return False
        if not any(a == actual or a == "any" for a in allowed):
            return False
    return True


def run_registry_checks(state: BundleState) -> None:
    criteria = state.criteria
    for name in state.rendered:
        entry = state.registry_entry(name)
        if entry is None:
            continue
        for validation in entry.validations:
            fn = CHECKS.get(validation.function)
            if fn is None:
                raise invalid(
                    f'registry component "{name}" names unknown bundle check '
                    f'"{validation.function}"; known: {", ".join(sorted(CHECKS))}'
                )
            if not conditions_met(validation.conditions, criteria):
                continue
            warnings, errors = fn(state, name)
            suffix = f". {validation.message.strip()}" if validation.message.strip() else ""
            blocking = validation.severity == "error"
            for w in warnings:
                if blocking:
                    state.errors.append(BlockingError(validation.function, w + suffix, name))
                elif validation.severity == "warning":
                    state.warnings.append(f"{validation.function}: {w}{suffix}")
                else:
                    state.notes.append(f"{w}{suffix}")
            for e in errors:
                state.errors.append(BlockingError(validation.function, e + suffix, name))


__all__ = ["CHECKS", "conditions_met", "run_registry_checks"]
