"""Live AKS capture: the cluster's agent pools through azure-mgmt-containerservice.

The pools are listed with ``DefaultAzureCredential`` (environment, workload identity,
managed identity, Azure CLI sign-in, ...), every page followed, and each pool is turned
into the element shape ``az aks nodepool list -o json`` prints: the ARM resource with its
``properties`` flattened to the top level (camelCase keys such as ``vmSize`` and
``gpuProfile``) plus ``resourceGroup``. Those bytes are exactly what the offline path
reads from a saved dump, and they go through the same ``project_aks_pools``; the dump can
be saved for later offline use.

Permission needed: the Azure RBAC action
``Microsoft.ContainerService/managedClusters/agentPools/read`` on the cluster (the built-in
"Reader" role or "Azure Kubernetes Service Cluster User Role" carry it).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aicr_tui.core.capture.aks_pools import AksPoolsProjection, project_aks_pools
from aicr_tui.core.foundation.deadline import MAX_PAGES, run_with_deadline
from aicr_tui.core.foundation.errors import AicrError, ErrorCode, invalid
from aicr_tui.core.foundation.fileio import MAX_PROVIDER_DUMP_BYTES, atomic_write_bytes
from aicr_tui.core.live.extras import require_extra
from aicr_tui.core.live.progress import (
    ProgressCallback,
    check_cancel,
    page_cap,
    positive_timeout,
    report,
)

AGENT_POOLS_READ_ACTION = "Microsoft.ContainerService/managedClusters/agentPools/read"
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_DEADLINE_S = 120.0
DEFAULT_RETRIES = 2
SOURCE = "aks"

_GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
# ARM naming rules: resource groups 1-90 chars of letters, digits, _ - . ( ); clusters
# 1-63 chars of letters, digits, _ -.
_RESOURCE_GROUP = re.compile(r"^[-\w.()]{1,90}$")
_CLUSTER = re.compile(r"^[A-Za-z0-9][-\w]{0,62}$")

_CREDENTIAL_HINT = (
    "sign in with `az login`, or provide AZURE_TENANT_ID/AZURE_CLIENT_ID with "
    "AZURE_CLIENT_SECRET or a federated token (workload identity), or run with a managed identity"
)


@dataclass(frozen=True)
class AksClusterRef:
    subscription: str
    resource_group: str
    cluster: str

    def describe(self) -> str:
        return (
            f'AKS cluster "{self.cluster}" (resource group "{self.resource_group}", '
            f"subscription {self.subscription})"
        )

    def resource_id(self) -> str:
        return (
            f"/subscriptions/{self.subscription}/resourceGroups/{self.resource_group}"
            f"/providers/Microsoft.ContainerService/managedClusters/{self.cluster}"
        )


@dataclass(frozen=True)
class LiveAksPools:
    """A live agent-pool capture: the az-shaped dump and its projection."""

    cluster: AksClusterRef
    pools: list[dict[str, Any]]
    raw: bytes
    projection: AksPoolsProjection

    def save(self, path: str) -> None:
        """Write the dump (the bytes the projection read) atomically to ``path``."""
        atomic_write_bytes(path, self.raw)


def cluster_ref(subscription: str, resource_group: str, cluster: str) -> AksClusterRef:
    """Check the three coordinates before any network call; bad input is exit 2."""
    sub = (subscription or "").strip()
    if not _GUID.match(sub):
        raise invalid(
            f'--aks-subscription "{subscription}" is not a subscription ID: expected a GUID '
            "such as 00000000-0000-0000-0000-000000000000 (see `az account show --query id`)"
        )
    rg = (resource_group or "").strip()
    if not _RESOURCE_GROUP.match(rg) or rg.endswith("."):
        raise invalid(
            f'--aks-resource-group "{resource_group}" is not a resource group name: expected '
            "1-90 letters, digits, _ - . ( ) not ending in a period"
        )
    name = (cluster or "").strip()
    if not _CLUSTER.match(name):
        raise invalid(
            f'--aks-cluster "{cluster}" is not an AKS cluster name: expected 1-63 letters, '
            "digits, _ or - starting with a letter or digit"
        )
    return AksClusterRef(sub, rg, name)


def agent_pool_to_az_json(pool: Mapping[str, Any], resource_group: str) -> dict[str, Any]:
    """One AgentPool in the shape ``az aks nodepool list -o json`` prints.

    ``pool`` is the REST representation (``{id, name, type, properties: {...}}``); the
    CLI flattens ``properties`` into the top level and adds ``resourceGroup``. Keys are
    the REST (camelCase) names, so ``vmSize`` and ``gpuProfile.nvidia.managementMode``
    come out exactly as the CLI writes them; fields the SDK does not model are kept.
    """
    out: dict[str, Any] = {}
    for key, value in pool.items():
        if key != "properties":
            out[key] = value
    props = pool.get("properties")
    if isinstance(props, Mapping):
        for key, value in props.items():
            out.setdefault(key, value)
    out.setdefault("resourceGroup", resource_group)
    return out


def serialise_pools(pools: list[dict[str, Any]]) -> bytes:
    """The dump as the CLI writes it: a JSON array, two-space indent, trailing newline."""
    return (json.dumps(pools, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def list_agent_pools(
    ref: AksClusterRef,
    *,
    credential: Any | None = None,
    arm_endpoint: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    retries: int = DEFAULT_RETRIES,
    cancel: threading.Event | None = None,
    progress: ProgressCallback | None = None,
    deadline: float = DEFAULT_DEADLINE_S,
) -> list[dict[str, Any]]:
    """List every agent pool of the cluster (all pages), each in the az JSON shape.

    ``credential`` defaults to ``DefaultAzureCredential``; ``arm_endpoint`` overrides the
    Azure Resource Manager endpoint (sovereign clouds, tests). ``timeout`` bounds each call,
    ``deadline`` the whole listing (credential acquisition and every page; pages are also
    capped at ``MAX_PAGES``).
    """
    total = positive_timeout(deadline, "Azure capture deadline")
    stop = cancel if cancel is not None else threading.Event()
    return run_with_deadline(
        lambda: _list_agent_pools(ref, credential, arm_endpoint, timeout, retries, stop, progress),
        total,
        "the AKS agent-pool listing",
        cancel=stop,
    )


def _list_agent_pools(
    ref: AksClusterRef,
    credential: Any | None,
    arm_endpoint: str | None,
    timeout: float,
    retries: int,
    cancel: threading.Event,
    progress: ProgressCallback | None,
) -> list[dict[str, Any]]:
    seconds = positive_timeout(timeout, "Azure")
    check_cancel(cancel, "AKS agent-pool capture")
    require_extra("azure")
    from azure.core.exceptions import AzureError
    from azure.mgmt.containerservice import ContainerServiceClient

    owned_credential = None
    if credential is None:
        from azure.identity import DefaultAzureCredential

        owned_credential = DefaultAzureCredential(process_timeout=max(1, int(seconds)))
        credential = owned_credential
    client_kwargs: dict[str, Any] = {
        "connection_timeout": seconds,
        "read_timeout": seconds,
        "retry_total": max(0, retries),
        "retry_backoff_factor": 0.4,
        "retry_backoff_max": 5,
    }
    if arm_endpoint:
        # Tokens keep the public-cloud ARM audience; only the host changes.
        client_kwargs["base_url"] = arm_endpoint.rstrip("/")
    report(progress, SOURCE, f"listing agent pools of {ref.describe()}")
    pools: list[dict[str, Any]] = []
    try:
        try:
            client = ContainerServiceClient(credential, ref.subscription, **client_kwargs)
        except ValueError as exc:
            raise invalid(
                "the Azure SDK rejected its cloud setting: AZURE_SDK_CLOUD_CONF must be "
                "AZURE_PUBLIC_CLOUD, AZURE_CHINA_CLOUD or AZURE_US_GOVERNMENT",
                str(exc),
            ) from exc
        with client:
            pages = client.agent_pools.list(ref.resource_group, ref.cluster).by_page()
            for number, page in enumerate(pages, start=1):
                page_cap(
                    number,
                    MAX_PAGES,
                    "Azure Resource Manager kept answering nextLink for the agent pools of "
                    + ref.describe(),
                )
                for pool in page:
                    pools.append(agent_pool_to_az_json(_rest_dict(pool), ref.resource_group))
                report(
                    progress,
                    SOURCE,
                    f"read page {number} of agent pools ({len(pools)} so far)",
                    done=len(pools),
                )
                check_cancel(cancel, "AKS agent-pool capture")
    except AicrError:
        raise
    except AzureError as exc:
        raise _map_azure_error(exc, ref, seconds) from exc
    except ValueError as exc:
        raise AicrError(
            ErrorCode.SERVICE_UNAVAILABLE,
            f"Azure Resource Manager answered the agent-pool list of {ref.describe()} with a "
            "body that is not an AgentPools list",
            exc,
        ) from exc
    finally:
        if owned_credential is not None:
            owned_credential.close()
    return pools


def capture_aks_pools(
    subscription: str,
    resource_group: str,
    cluster: str,
    *,
    credential: Any | None = None,
    arm_endpoint: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    retries: int = DEFAULT_RETRIES,
    cancel: threading.Event | None = None,
    progress: ProgressCallback | None = None,
    deadline: float = DEFAULT_DEADLINE_S,
) -> LiveAksPools:
    """List the pools live, serialise them as the az dump and project them.

    The projection is the one the offline ``--aks-gpu-pools FILE`` path uses, fed the same
    bytes a saved dump would hold, so the two captures give identical readings.
    """

    ref = cluster_ref(subscription, resource_group, cluster)
    pools = list_agent_pools(
        ref,
        credential=credential,
        arm_endpoint=arm_endpoint,
        timeout=timeout,
        retries=retries,
        cancel=cancel,
        progress=progress,
        deadline=deadline,
    )
    raw = serialise_pools(pools)
    if len(raw) > MAX_PROVIDER_DUMP_BYTES:
        raise invalid(
            f"the agent-pool list of {ref.describe()} is {len(raw)} bytes, over the "
            f"{MAX_PROVIDER_DUMP_BYTES}-byte cap a saved AKS GPU pools dump may have"
        )
    projection = project_aks_pools(raw, f"live agent pools of {ref.resource_id()}")
    report(progress, SOURCE, f"projected {len(pools)} agent pools", done=len(pools))
    return LiveAksPools(cluster=ref, pools=pools, raw=raw, projection=projection)


def _rest_dict(pool: Any) -> dict[str, Any]:
    """The REST JSON of one SDK AgentPool (the model is a mapping over that JSON)."""
    as_dict = getattr(pool, "as_dict", None)
    if callable(as_dict):
        data = as_dict()
        if isinstance(data, dict):
            return data
    if isinstance(pool, Mapping):
        return dict(pool)
    raise ValueError(f"unexpected agent-pool item of type {type(pool).__name__}")


def _body_error(exc: Any) -> tuple[str, str]:
    """The ARM error code and message from an HttpResponseError, when the body had one."""
    err = getattr(exc, "error", None)
    code = str(getattr(err, "code", "") or "")
    message = str(getattr(err, "message", "") or "")
    if not message:
        lines = str(getattr(exc, "message", "") or "").splitlines()
        message = lines[0] if lines else ""
    return code, " ".join(message.split())[:300]


def _map_azure_error(exc: Exception, ref: AksClusterRef, seconds: float) -> AicrError:
    from azure.core.exceptions import (
        ClientAuthenticationError,
        HttpResponseError,
        ServiceRequestError,
        ServiceRequestTimeoutError,
        ServiceResponseError,
        ServiceResponseTimeoutError,
    )

    if isinstance(exc, ClientAuthenticationError) and getattr(exc, "status_code", None) is None:
        first = " ".join(str(exc).split())[:300]
        return AicrError(
            ErrorCode.UNAUTHORIZED,
            "no usable Azure credential: DefaultAzureCredential could not get a token for "
            f"Azure Resource Manager ({_CREDENTIAL_HINT})",
            first,
        )
    if isinstance(exc, HttpResponseError) and exc.status_code is not None:
        status = int(exc.status_code)
        code, message = _body_error(exc)
        detail = f"{code}: {message}" if code else message
        if status == 401:
            return AicrError(
                ErrorCode.UNAUTHORIZED,
                f"Azure Resource Manager rejected the credential (HTTP 401) listing the agent "
                f"pools of {ref.describe()}; {_CREDENTIAL_HINT}",
                detail or None,
            )
        if status == 403:
            return AicrError(
                ErrorCode.UNAUTHORIZED,
                f"the Azure identity may not read the agent pools of {ref.describe()} (HTTP 403): "
                f"grant it the RBAC action {AGENT_POOLS_READ_ACTION} (e.g. the Reader role) "
                "on the cluster",
                detail or None,
            )
        if status == 404:
            return AicrError(
                ErrorCode.NOT_FOUND,
                f"{ref.describe()} was not found (HTTP 404): check --aks-subscription, "
                "--aks-resource-group and --aks-cluster",
                detail or None,
            )
        if status == 429:
            return AicrError(
                ErrorCode.RATE_LIMIT_EXCEEDED,
                f"Azure Resource Manager throttled the agent-pool list of {ref.describe()} "
                "(HTTP 429); retry later",
                detail or None,
            )
        return AicrError(
            ErrorCode.SERVICE_UNAVAILABLE,
            f"Azure Resource Manager answered HTTP {status} listing the agent pools of "
            f"{ref.describe()}",
            detail or None,
        )
    if isinstance(exc, ServiceRequestTimeoutError | ServiceResponseTimeoutError):
        return AicrError(
            ErrorCode.TIMEOUT,
            f"Azure Resource Manager did not answer within {seconds:g}s listing the agent pools "
            f"of {ref.describe()}",
        )
    if isinstance(exc, ServiceRequestError | ServiceResponseError):
        text = " ".join(str(exc).split())[:300]
        if "timed out" in text.lower():
            return AicrError(
                ErrorCode.TIMEOUT,
                f"Azure Resource Manager did not answer within {seconds:g}s listing the agent "
                f"pools of {ref.describe()}",
            )
        return AicrError(
            ErrorCode.SERVICE_UNAVAILABLE,
            f"could not reach Azure Resource Manager to list the agent pools of {ref.describe()}",
            text,
        )
    return AicrError(
        ErrorCode.SERVICE_UNAVAILABLE,
        f"listing the agent pools of {ref.describe()} failed",
        " ".join(str(exc).split())[:300],
    )
