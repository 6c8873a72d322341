"""Live cluster capture through the official ``kubernetes`` client (read verbs only).

Three reads, each with its own timeout:

1. ``GET /version`` → ``K8s.server`` (version, platform, goVersion).
2. ``GET /api/v1/nodes`` (every page) → the facts of one GPU node (``K8s.node``), the
   readings the catalog's constraints use (``OS.release.ID``/``VERSION_ID`` mapped from the
   node's OS image, ``OS.sysctl./proc/sys/kernel/osrelease`` from its kernel version),
   ``GPU.hardware`` from its labels and allocatable ``nvidia.com/gpu``, and
   ``NodeTopology.summary`` over all nodes.
3. ONE ``GET`` of ``kube-system/nvidia-gpu-device-plugin`` → the OKE legacy-plugin reading:
   404 reads ``none/absent``; RBAC denial, timeout or a transport error reads
   ``unknown/unknown`` (the cluster could not be consulted, which is never ``none``).

A failure of (1) or (2) fails the capture: a snapshot without the server or node readings
would look complete while missing what qualification needs. The GPU node chosen is the
first by name among nodes that advertise or are labelled with NVIDIA GPUs (the node the
upstream agent would run on); without GPU nodes the first node gives the node facts.

The whole capture has a total deadline (``deadline``, default ``DEFAULT_DEADLINE_S``) on top
of the per-call timeout: a server trickling its answer, an exec credential plugin that never
returns (each run is also killed after the per-call timeout) or a node list that never ends
(``MAX_PAGES``) ends in one TIMEOUT line.

RBAC needed (a ClusterRole, read verbs only): ``get`` on the non-resource URL ``/version``,
``get``/``list`` on ``nodes``, ``get`` on ``apps/daemonsets`` (kube-system).
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from aicr_tui.core.capture.oke_legacy import (
    NAME,
    NAMESPACE,
    LegacyPluginProjection,
    classify_legacy_daemonset,
)
from aicr_tui.core.documents.snapshot import Measurement, Scalar, Snapshot, Subtype, new_snapshot
from aicr_tui.core.foundation.deadline import MAX_PAGES, Deadline, run_with_deadline
from aicr_tui.core.foundation.errors import AicrError, ErrorCode, invalid
from aicr_tui.core.foundation.limits import (
    MAX_NODE_KEYS,
)
from aicr_tui.core.live.extras import require_extra
from aicr_tui.core.live.kube_replies import (
    api_error,
    bad_reply,
    check_version,
    decode,
    expect_map,
    expect_text,
    kind_of,
    transport_errors,
)
from aicr_tui.core.live.progress import (
    ProgressCallback,
    check_cancel,
    page_cap,
    positive_timeout,
    report,
)

DEFAULT_TIMEOUT_S = 15.0
DEFAULT_DEADLINE_S = 120.0
NODE_PAGE_SIZE = 100  # a page stays far below MAX_API_RESPONSE_BYTES
# The longest label or taint key Kubernetes accepts: a 253-character DNS prefix, "/", and
# a 63-character name (a longer one is no real API answer).
MAX_KEY_CHARS = 317
SOURCE = "kubernetes"
GPU_RESOURCE = "nvidia.com/gpu"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
# The node's VM size or shape (Standard_ND96isr_H100_v5, BM.GPU.GB200.4): kept in the GPU
# context so a stated accelerator can be checked against it.
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
GPU_PRESENT_LABELS = ("nvidia.com/gpu.present", "feature.node.kubernetes.io/pci-10de.present")
DRIVER_LABELS = ("nvidia.com/cuda.driver-version.full", "nvidia.com/cuda.driver.major")
DETECTION_SOURCE = "kubernetes-api"
OSRELEASE_SYSCTL = "/proc/sys/kernel/osrelease"

# (pattern over the kubelet's osImage, os-release ID). The first group, when present, is
# the VERSION_ID; Ubuntu keeps major.minor ("24.04"), as its /etc/os-release does.
_OS_IMAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^Ubuntu (\d+\.\d+)"), "ubuntu"),
    (re.compile(r"^Oracle Linux Server (\d+(?:\.\d+)?)"), "ol"),
    (re.compile(r"^Red Hat Enterprise Linux CoreOS\b"), "rhcos"),
    (re.compile(r"^Red Hat Enterprise Linux(?: Server)? (\d+(?:\.\d+)?)"), "rhel"),
    (re.compile(r"^Rocky Linux (\d+(?:\.\d+)?)"), "rocky"),
    (re.compile(r"^AlmaLinux (\d+(?:\.\d+)?)"), "almalinux"),
    (re.compile(r"^CentOS Stream (\d+)"), "centos"),
    (re.compile(r"^Debian GNU/Linux (\d+)"), "debian"),
    (re.compile(r"^(?:Microsoft )?Azure Linux (\d+(?:\.\d+)?)"), "azurelinux"),
    (re.compile(r"^CBL-Mariner/Linux\b"), "mariner"),
    (re.compile(r"^Amazon Linux (\d+)"), "amzn"),
    (re.compile(r"^Bottlerocket OS (\d+\.\d+\.\d+)"), "bottlerocket"),
    (re.compile(r"^Container-Optimized OS\b"), "cos"),
    (re.compile(r"^SUSE Linux Enterprise Server (\d+(?: SP\d+)?)"), "sles"),
    (re.compile(r"^Flatcar Container Linux by Kinvolk (\d+\.\d+\.\d+)"), "flatcar"),
    (re.compile(r"^Talos \(v?(\d+\.\d+\.\d+)"), "talos"),
)


@dataclass(frozen=True)
class ClusterCapture:
    """What a live cluster capture read, beside the snapshot it produced."""

    snapshot: Snapshot
    server: dict[str, str]
    node_count: int
    gpu_node: str | None
    legacy_plugin: LegacyPluginProjection
    warnings: list[str] = field(default_factory=list)


def os_release_from_image(os_image: str) -> dict[str, str]:
    """``/etc/os-release`` keys recoverable from a kubelet ``osImage`` (its PRETTY_NAME).

    ``"Ubuntu 24.04.3 LTS"`` → ``{ID: ubuntu, VERSION_ID: "24.04", PRETTY_NAME: ...}``;
    ``"Oracle Linux Server 8.10"`` → ``{ID: ol, VERSION_ID: "8.10", ...}``. An image we do
    not recognise yields only PRETTY_NAME, so an ``OS.release.ID`` constraint reads
    "unavailable" instead of a guess.
    """
    image = " ".join((os_image or "").split())
    if not image:
        return {}
    out = {"PRETTY_NAME": image}
    for pattern, os_id in _OS_IMAGES:
        match = pattern.match(image)
        if match is None:
            continue
        out["ID"] = os_id
        if match.groups() and match.group(1):
            version = match.group(1)
            if os_id == "sles":
                version = version.replace(" SP", ".")
            out["VERSION_ID"] = version
        break
    return out


def split_runtime(version: str) -> tuple[str, str]:
    """``containerd://1.7.27`` → (``containerd``, ``1.7.27``)."""
    name, sep, rest = (version or "").partition("://")
    return (name, rest) if sep else ("", version or "")


def provider_of(provider_id: str) -> str:
    """The cloud provider from a node's ``spec.providerID``."""
    if not provider_id:
        return ""
    scheme, sep, _ = provider_id.partition("://")
    if sep:
        return scheme
    if provider_id.startswith("ocid1."):
        return "oci"
    return ""


def gpu_count(node: dict[str, Any]) -> int:
    status = node.get("status") or {}
    for section in ("allocatable", "capacity"):
        resources = status.get(section) or {}
        value = resources.get(GPU_RESOURCE)
        if value is None:
            continue
        try:
            return max(0, int(str(value)))
        except ValueError:
            continue
    return 0


def _labels(node: dict[str, Any]) -> dict[str, str]:
    labels = (node.get("metadata") or {}).get("labels") or {}
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def is_gpu_node(node: dict[str, Any]) -> bool:
    labels = _labels(node)
    return (
        gpu_count(node) > 0
        or any(labels.get(key) == "true" for key in GPU_PRESENT_LABELS)
        or GPU_PRODUCT_LABEL in labels
    )


def model_from_label(value: str) -> str:
    """GPU Feature Discovery writes the product name with spaces as dashes; undo that.

    ``NVIDIA-H100-80GB-HBM3`` → ``NVIDIA H100 80GB HBM3`` (the name nvidia-smi reports).
    The label itself is kept in the subtype's context.
    """
    return value.replace("-", " ").strip()


def _node_name(node: dict[str, Any]) -> str:
    return str((node.get("metadata") or {}).get("name", ""))


def _slim(node: dict[str, Any]) -> dict[str, Any]:
    """The fields of a node that :func:`build_measurements` reads for the chosen node."""
    status = node.get("status") or {}
    resources = {
        section: {GPU_RESOURCE: (status.get(section) or {})[GPU_RESOURCE]}
        for section in ("allocatable", "capacity")
        if GPU_RESOURCE in (status.get(section) or {})
    }
    info = status.get("nodeInfo") or {}
    return {
        "metadata": {"name": _node_name(node), "labels": _labels(node)},
        "spec": {"providerID": (node.get("spec") or {}).get("providerID")},
        "status": {**resources, "nodeInfo": {k: info[k] for k in _NODE_INFO_FIELDS if k in info}},
    }


class NodeFold:
    """What a capture keeps of a node list read page by page, so memory does not grow
    with the pages: the count, the first GPU node and the first node by name (their
    readings only), and the distinct label and taint keys (at most ``MAX_NODE_KEYS`` of
    each, each no longer than Kubernetes allows a key to be)."""

    def __init__(self) -> None:
        self.count = 0
        self.gpu: dict[str, Any] | None = None
        self.first: dict[str, Any] | None = None
        self.label_keys: set[str] = set()
        self.taint_keys: set[str] = set()

    def add(self, node: dict[str, Any]) -> None:
        self.count += 1
        name = _node_name(node)
        if self.first is None or name < _node_name(self.first):
            self.first = _slim(node)
        if is_gpu_node(node) and (self.gpu is None or name < _node_name(self.gpu)):
            self.gpu = _slim(node)
        self._keys(self.label_keys, _labels(node), "label")
        taints = (node.get("spec") or {}).get("taints") or []
        keys = [str(t["key"]) for t in taints if isinstance(t, dict) and t.get("key")]
        self._keys(self.taint_keys, keys, "taint")

    @staticmethod
    def _keys(into: set[str], keys: Any, what: str) -> None:
        for key in keys:
            if len(key) > MAX_KEY_CHARS:
                raise bad_reply(
                    "GET /api/v1/nodes",
                    f"with a node {what} key of {len(key)} characters; Kubernetes allows "
                    f"{MAX_KEY_CHARS}",
                )
            into.add(key)
        if len(into) > MAX_NODE_KEYS:
            raise bad_reply(
                "GET /api/v1/nodes", f"with more than {MAX_NODE_KEYS} distinct node {what} keys"
            )

    @property
    def chosen(self) -> dict[str, Any] | None:
        return self.gpu if self.gpu is not None else self.first


def build_measurements(
    server: dict[str, Any],
    nodes: list[dict[str, Any]] | NodeFold,
    legacy: LegacyPluginProjection,
) -> tuple[list[Measurement], str | None]:
    """The measurements of a cluster from its /version body, node list (or its fold) and
    legacy reading."""
    if not isinstance(nodes, NodeFold):
        fold = NodeFold()
        for node in nodes:
            fold.add(node)
        nodes = fold
    server_data: dict[str, Scalar] = {
        key: str(server[src])
        for key, src in (
            ("version", "gitVersion"),
            ("platform", "platform"),
            ("goVersion", "goVersion"),
        )
        if server.get(src)
    }
    k8s = [Subtype(subtype="server", data=server_data)]
    chosen = nodes.chosen
    measurements: list[Measurement] = []
    gpu_data: dict[str, Scalar] = {
        "gpu-present": nodes.gpu is not None,
        "gpu-count": 0,
        "detection-source": DETECTION_SOURCE,
    }
    gpu_context: dict[str, str] = {}
    os_subtypes: list[Subtype] = []
    chosen_name: str | None = None
    if chosen is not None:
        chosen_name = str((chosen.get("metadata") or {}).get("name", ""))
        info = (chosen.get("status") or {}).get("nodeInfo") or {}
        provider_id = str((chosen.get("spec") or {}).get("providerID") or "")
        runtime = str(info.get("containerRuntimeVersion") or "")
        runtime_name, runtime_version = split_runtime(runtime)
        node_data = {
            "source-node": chosen_name,
            "provider": provider_of(provider_id),
            "provider-id": provider_id,
            "container-runtime-id": runtime,
            "container-runtime-name": runtime_name,
            "container-runtime-version": runtime_version,
            "kubelet-version": str(info.get("kubeletVersion") or ""),
            "kernel-version": str(info.get("kernelVersion") or ""),
            "operating-system": str(info.get("operatingSystem") or ""),
            "os-image": str(info.get("osImage") or ""),
        }
        k8s.append(Subtype(subtype="node", data={k: v for k, v in node_data.items() if v}))
        release = os_release_from_image(node_data["os-image"])
        if release:
            os_subtypes.append(Subtype(subtype="release", data=dict(release)))
        if node_data["kernel-version"]:
            os_subtypes.append(
                Subtype(subtype="sysctl", data={OSRELEASE_SYSCTL: node_data["kernel-version"]})
            )
        if nodes.gpu is not None:
            labels = _labels(chosen)
            gpu_data["gpu-count"] = gpu_count(chosen)
            product = labels.get(GPU_PRODUCT_LABEL, "")
            if product:
                gpu_data["model"] = model_from_label(product)
                gpu_context[GPU_PRODUCT_LABEL] = product
            if any(labels.get(key) for key in DRIVER_LABELS):
                gpu_data["driver-loaded"] = True
            instance_type = next((labels[k] for k in INSTANCE_TYPE_LABELS if labels.get(k)), "")
            if instance_type:
                gpu_context[INSTANCE_TYPE_LABELS[0]] = instance_type
            gpu_context["node"] = chosen_name
    k8s.append(legacy.subtype)
    measurements.append(Measurement(type="K8s", subtypes=k8s))
    measurements.append(
        Measurement(
            type="GPU",
            subtypes=[Subtype(subtype="hardware", data=gpu_data, context=gpu_context or None)],
        )
    )
    if os_subtypes:
        measurements.append(Measurement(type="OS", subtypes=os_subtypes))
    measurements.append(
        Measurement(
            type="NodeTopology",
            subtypes=[
                Subtype(
                    subtype="summary",
                    data={
                        "node-count": nodes.count,
                        "taint-count": len(nodes.taint_keys),
                        "label-count": len(nodes.label_keys),
                    },
                )
            ],
        )
    )
    return measurements, chosen_name


# -- the client ---------------------------------------------------------------------------


def _existing_paths(value: str) -> list[str]:
    return [os.path.expanduser(p) for p in value.split(os.pathsep) if p]


def kubeconfig_files(kubeconfig: str | None) -> tuple[list[str], str] | None:
    """The kubeconfig files a client would load, and how to name them in messages:
    ``kubeconfig`` (a path or a list joined by ``os.pathsep``), else ``$KUBECONFIG``, else
    ``~/.kube/config``; None when there is none of those (in-cluster or no configuration)."""
    if kubeconfig:
        paths = _existing_paths(kubeconfig)
        missing = [p for p in paths if not os.path.isfile(p)]
        if not paths or missing:
            raise invalid(f'--kubeconfig "{kubeconfig}" does not exist or is not a file')
        return paths, f'kubeconfig "{kubeconfig}"'
    env = os.environ.get("KUBECONFIG", "")
    paths = [p for p in _existing_paths(env) if os.path.isfile(p)] if env else []
    default = os.path.expanduser("~/.kube/config")
    if not paths and os.path.isfile(default):
        paths = [default]
    if not paths:
        return None
    return paths, f'kubeconfig "{os.pathsep.join(paths)}"'


def preflight_kubeconfig(kubeconfig: str | None) -> None:
    """Refuse an unusable kubeconfig (aicr_tui.core.live.kubeconfig) before any other work; nothing
    to check when the configuration comes from the pod's service account or is absent."""
    from aicr_tui.core.live.kubeconfig import check_kubeconfig

    resolved = kubeconfig_files(kubeconfig)
    if resolved is not None:
        check_kubeconfig(resolved[0])


def api_client(
    kubeconfig: str | None, context: str | None, *, exec_timeout: float = DEFAULT_TIMEOUT_S
) -> tuple[Any, str]:
    """A kubernetes ApiClient and a description of where its configuration came from.

    ``kubeconfig`` (or ``$KUBECONFIG``, or ``~/.kube/config``) with an optional context;
    with none of those but a pod's service-account environment, the in-cluster config.
    The kubeconfig is checked first (aicr_tui.core.live.kubeconfig); the client's connections keep
    the limits of aicr_tui.core.live.kube_wire.
    """
    require_extra("kubernetes")
    import yaml  # type: ignore[import-untyped,unused-ignore]
    from kubernetes import client, config  # type: ignore[import-untyped,unused-ignore]
    from kubernetes.config.config_exception import ConfigException  # type: ignore[import-untyped,unused-ignore]

    from aicr_tui.core.live.kube_wire import bounded_client
    from aicr_tui.core.live.kubeconfig import check_kubeconfig

    cfg = client.Configuration()
    resolved = kubeconfig_files(kubeconfig)
    if resolved is None:
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            try:
                config.load_incluster_config(client_configuration=cfg)
            except ConfigException as exc:
                raise AicrError(
                    ErrorCode.UNAUTHORIZED,
                    "the in-cluster service-account configuration is unusable",
                    str(exc),
                ) from exc
            _tune(cfg)
            return bounded_client(client.ApiClient(cfg)), "in-cluster service account"
        raise invalid(
            "no Kubernetes configuration: pass --kubeconfig FILE, set KUBECONFIG, create "
            "~/.kube/config (az aks get-credentials / oci ce cluster create-kubeconfig), "
            "or capture without a cluster (--no-cluster)"
        )
    paths, source = resolved
    check_kubeconfig(paths)
    try:
        with bounded_exec_plugins(exec_timeout):
            config.load_kube_config(
                config_file=os.pathsep.join(paths),
                context=context,
                client_configuration=cfg,
                persist_config=False,
            )
    except ConfigException as exc:
        where = f'--context "{context}" in {source}' if context else source
        raise invalid(f"cannot use {where}", " ".join(str(exc).split())[:300]) from exc
    except (OSError, ValueError, TypeError, KeyError, AttributeError, yaml.YAMLError) as exc:
        raise invalid(f"{source} is not a usable kubeconfig", str(exc)[:300]) from exc
    _tune(cfg)
    if context:
        source = f'{source} context "{context}"'
    return bounded_client(client.ApiClient(cfg)), source


# -- exec credential plugins -----------------------------------------------------------
# The kubernetes client runs a kubeconfig's ``exec`` plugin (az, oci, kubelogin ...) with
# Popen + communicate() and no timeout, and logs (rather than raises) its failure. The
# plugin module's subprocess is replaced, once, by one whose communicate() is bounded by the
# limit of the calling thread; a plugin past it is killed and the caller raises TIMEOUT.
_EXEC = threading.local()
_EXEC_INSTALL_LOCK = threading.Lock()


def _install_exec_bound() -> None:
    import subprocess
    import types

    from kubernetes.config import exec_provider  # type: ignore[import-untyped,unused-ignore]
    from kubernetes.config.config_exception import ConfigException  # type: ignore[import-untyped,unused-ignore]

    if getattr(exec_provider.subprocess, "AICR_BOUNDED", False):
        return

    class BoundedPopen(subprocess.Popen):  # type: ignore[type-arg]
        def communicate(self, input: Any = None, timeout: float | None = None) -> Any:
            limit = getattr(_EXEC, "seconds", None)
            if timeout is None:
                timeout = limit
            try:
                return super().communicate(input, timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                super().communicate()
                args = self.args
                command = str(args[0] if isinstance(args, list | tuple) else args)
                _EXEC.timed_out = (
                    f'the kubeconfig exec credential plugin "{command}" did not answer '
                    f"within {timeout:g}s"
                )
                raise ConfigException(_EXEC.timed_out) from None

    shim = types.SimpleNamespace(**vars(subprocess))
    shim.Popen = BoundedPopen
    shim.AICR_BOUNDED = True
    exec_provider.subprocess = shim


class bounded_exec_plugins:  # noqa: N801 - used as a context manager, like contextlib's
    """Within the block, exec credential plugins of this thread end within ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __enter__(self) -> None:
        import logging

        with _EXEC_INSTALL_LOCK:
            _install_exec_bound()
        _EXEC.seconds = self.seconds
        _EXEC.timed_out = None
        # The client logs a plugin failure on the root logger (a stray stderr line);
        # the failure is raised as one error below instead.
        self._quiet = logging.NullHandler()
        self._root = logging.getLogger()
        self._root.addHandler(self._quiet)

    def __exit__(self, *exc: object) -> None:
        self._root.removeHandler(self._quiet)
        message = getattr(_EXEC, "timed_out", None)
        _EXEC.seconds = None
        _EXEC.timed_out = None
        if message and exc[0] is None:
            raise AicrError(ErrorCode.TIMEOUT, message)


def host_client(host: str, token: str | None = None) -> Any:
    """An ApiClient for an explicit API server address (a bearer token optional)."""
    require_extra("kubernetes")
    from kubernetes import client  # type: ignore[import-untyped,unused-ignore]

    from aicr_tui.core.live.kube_wire import bounded_client

    conf = client.Configuration()
    conf.host = host
    if token:
        conf.api_key = {"authorization": f"Bearer {token}"}
    return bounded_client(client.ApiClient(conf))


@dataclass(frozen=True)
class TypedApis:
    """The typed API groups a validation run calls, over one ApiClient."""

    core: Any
    apps: Any
    batch: Any
    custom: Any


def typed_apis(api: Any) -> TypedApis:
    from kubernetes import client  # type: ignore[import-untyped,unused-ignore]

    return TypedApis(
        core=client.CoreV1Api(api),
        apps=client.AppsV1Api(api),
        batch=client.BatchV1Api(api),
        custom=client.CustomObjectsApi(api),
    )


def _tune(cfg: Any) -> None:
    from urllib3.util.retry import Retry

    # One retry when the connection cannot be made; a slow answer is never re-sent, so the
    # per-call timeout bounds each read.
    # A 429/503 with Retry-After is handed back as it is (not turned into "too many error
    # responses"), so the error line can say what the server answered.
    cfg.retries = Retry(
        total=1,
        connect=1,
        read=0,
        redirect=0,
        status=0,
        other=0,
        respect_retry_after_header=False,
    )


_NODE_INFO_FIELDS = (
    "containerRuntimeVersion",
    "kubeletVersion",
    "kernelVersion",
    "operatingSystem",
    "osImage",
)


def check_node(node: Any, where: str, what: str) -> None:
    """Refuse a node whose fields read by :func:`build_measurements` have the wrong type."""
    node = expect_map(node, where, what)
    metadata = expect_map(node.get("metadata"), f"{where}.metadata", what)
    expect_text(metadata.get("name"), f"{where}.metadata.name", what)
    labels = expect_map(metadata.get("labels"), f"{where}.metadata.labels", what)
    for key, value in labels.items():
        expect_text(value, f"{where}.metadata.labels[{json.dumps(key)[:80]}]", what)
    spec = expect_map(node.get("spec"), f"{where}.spec", what)
    expect_text(spec.get("providerID"), f"{where}.spec.providerID", what)
    taints = spec.get("taints")
    if taints is not None and not isinstance(taints, list):
        raise bad_reply(what, f"with {where}.spec.taints as {kind_of(taints)}, expected a list")
    for index, taint in enumerate(taints or []):
        taint = expect_map(taint, f"{where}.spec.taints[{index}]", what)
        expect_text(taint.get("key"), f"{where}.spec.taints[{index}].key", what)
    status = expect_map(node.get("status"), f"{where}.status", what)
    for section in ("allocatable", "capacity"):
        resources = expect_map(status.get(section), f"{where}.status.{section}", what)
        value = resources.get(GPU_RESOURCE)
        if value is not None and (isinstance(value, bool) or not isinstance(value, str | int)):
            raise bad_reply(
                what,
                f'with {where}.status.{section}["{GPU_RESOURCE}"] as {kind_of(value)}, '
                "expected a quantity",
            )
    info = expect_map(status.get("nodeInfo"), f"{where}.status.nodeInfo", what)
    for key in _NODE_INFO_FIELDS:
        expect_text(info.get(key), f"{where}.status.nodeInfo.{key}", what)


def read_legacy_daemonset(apps: Any, seconds: float, source: str) -> LegacyPluginProjection:
    """ONE GET of kube-system/nvidia-gpu-device-plugin, collapsed by aicr_tui.core.capture.oke_legacy."""
    from kubernetes.client.exceptions import ApiException  # type: ignore[import-untyped,unused-ignore]

    where = f"live {source}"
    try:
        response = apps.read_namespaced_daemon_set(
            NAME, NAMESPACE, _preload_content=False, _request_timeout=(seconds, seconds)
        )
        obj = decode(response, f"the DaemonSet {NAMESPACE}/{NAME}")
    except ApiException as exc:
        if exc.status == 404:
            return classify_legacy_daemonset(None, source=where)
        err = api_error(
            exc, f"get DaemonSet {NAMESPACE}/{NAME}", "get on apps/daemonsets", source, seconds
        )
        return classify_legacy_daemonset(None, error=err.render(), source=where)
    except AicrError as exc:
        return classify_legacy_daemonset(None, error=exc.render(), source=where)
    except transport_errors() as exc:
        err = api_error(
            exc, f"get DaemonSet {NAMESPACE}/{NAME}", "get on apps/daemonsets", source, seconds
        )
        return classify_legacy_daemonset(None, error=err.render(), source=where)
    return classify_legacy_daemonset(obj, source=where)


def collect_cluster(
    kubeconfig: str | None,
    context: str | None,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    cancel: threading.Event | None = None,
    progress: ProgressCallback | None = None,
    deadline: float = DEFAULT_DEADLINE_S,
) -> ClusterCapture:
    """Read the cluster and build the snapshot; see the module docstring for what is read.

    ``timeout`` bounds each call, ``deadline`` the whole capture (seconds).
    """
    seconds = positive_timeout(timeout, "Kubernetes")
    total = positive_timeout(deadline, "Kubernetes capture deadline")
    check_cancel(cancel, "cluster capture")
    stop = cancel if cancel is not None else threading.Event()
    return run_with_deadline(
        lambda: _collect_cluster(kubeconfig, context, seconds, Deadline(total), stop, progress),
        total,
        "the Kubernetes cluster capture",
        cancel=stop,
    )


def _collect_cluster(
    kubeconfig: str | None,
    context: str | None,
    seconds: float,
    deadline: Deadline,
    cancel: threading.Event,
    progress: ProgressCallback | None,
) -> ClusterCapture:
    require_extra("kubernetes")
    from kubernetes import client  # type: ignore[import-untyped,unused-ignore]

    api, source = api_client(kubeconfig, context, exec_timeout=deadline.per_call(seconds))
    per_call = (seconds, seconds)
    try:
        report(progress, SOURCE, f"reading the server version through {source}", done=0, total=3)
        try:
            response = client.VersionApi(api).get_code(
                _preload_content=False, _request_timeout=per_call
            )
            server = decode(response, "GET /version")
            check_version(server, "GET /version")
        except transport_errors() as exc:
            raise api_error(
                exc, "get /version", 'get on the non-resource URL "/version"', source, seconds
            ) from exc
        check_cancel(cancel, "cluster capture")

        core_api = client.CoreV1Api(api)
        nodes = NodeFold()
        token: str | None = None
        page = 0
        while True:
            page += 1
            page_cap(
                page,
                MAX_PAGES,
                "the Kubernetes API kept answering GET /api/v1/nodes with a next page",
            )
            report(progress, SOURCE, f"listing nodes (page {page})", done=1, total=3)
            kwargs: dict[str, Any] = {"limit": NODE_PAGE_SIZE}
            if token:
                kwargs["_continue"] = token
            try:
                response = core_api.list_node(
                    _preload_content=False, _request_timeout=per_call, **kwargs
                )
                body = decode(response, "GET /api/v1/nodes")
            except transport_errors() as exc:
                raise api_error(
                    exc, "list nodes", 'get and list on "nodes"', source, seconds
                ) from exc
            items = body.get("items") or []
            if not isinstance(items, list):
                raise AicrError(
                    ErrorCode.SERVICE_UNAVAILABLE,
                    "the Kubernetes API answered GET /api/v1/nodes without an items list",
                )
            for index, node in enumerate(items):
                check_node(node, f"items[{index}]", "GET /api/v1/nodes")
                nodes.add(node)
            page_meta = expect_map(body.get("metadata"), "metadata", "GET /api/v1/nodes")
            expect_text(page_meta.get("continue"), "metadata.continue", "GET /api/v1/nodes")
            token = str(page_meta.get("continue") or "") or None
            del body, items  # only the fold is kept from one page to the next
            check_cancel(cancel, "cluster capture")
            if not token:
                break

        report(progress, SOURCE, "reading the OKE legacy device-plugin DaemonSet", done=2, total=3)
        legacy = read_legacy_daemonset(client.AppsV1Api(api), seconds, source)
        check_cancel(cancel, "cluster capture")
    finally:
        api.close()

    measurements, chosen = build_measurements(server, nodes, legacy)
    snapshot = new_snapshot(source_node=chosen or "")
    snapshot.measurements = measurements
    warnings: list[str] = []
    if legacy.plugin == "unknown":
        warnings.append(legacy.reason)
    if not nodes.count:
        warnings.append("the cluster reports no nodes: node, OS and GPU readings are empty")
    elif nodes.gpu is None:
        warnings.append("no node advertises nvidia.com/gpu or carries NVIDIA GPU labels")
    report(progress, SOURCE, f"captured {nodes.count} nodes", done=3, total=3)
    server_out = {k: str(v) for k, v in server.items() if isinstance(v, str)}
    return ClusterCapture(
        snapshot=snapshot,
        server=server_out,
        node_count=nodes.count,
        gpu_node=chosen if nodes.gpu is not None else None,
        legacy_plugin=legacy,
        warnings=warnings,
    )


def capture_cluster(
    kubeconfig: str | None,
    context: str | None,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    cancel: threading.Event | None = None,
    progress: ProgressCallback | None = None,
) -> Snapshot:
    """The live cluster snapshot (the contract ``aicr-tui snapshot`` calls)."""
    return collect_cluster(
        kubeconfig, context, timeout=timeout, cancel=cancel, progress=progress
    ).snapshot
