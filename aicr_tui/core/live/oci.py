"""Live OKE capture: the cluster's add-ons through the ``oci`` SDK's container engine client.

Every page of ``ListAddons`` is read (following ``opc-next-page``), each add-on summary is
rendered the way ``oci ce cluster list-addons --all --output json`` prints it (a
``{"data": [...]}`` object with kebab-case keys), and those bytes go through the same
``project_oke_addons`` the offline ``--oke-addons FILE`` path uses.

Authentication: an API-key profile from the OCI config file (``config``, the default),
an instance principal, or a resource principal. Permission needed: an IAM policy such as
``Allow group <group> to read clusters in compartment <compartment>`` (for an instance
principal, ``Allow dynamic-group <dynamic-group> to read clusters in compartment ...``).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import Any

from aicr_tui.core.capture.oke_addons import OkeAddonsProjection, project_oke_addons
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

AUTH_METHODS = ("config", "instance_principal", "resource_principal")
READ_CLUSTERS_POLICY = "Allow group <group> to read clusters in compartment <compartment>"
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_DEADLINE_S = 120.0
SOURCE = "oke"

# ocid1.<type>.<realm>.[region][.future use].<unique id>
_CLUSTER_OCID = re.compile(r"^ocid1\.cluster\.[a-z0-9]+\.[a-z0-9-]*(\.[a-z0-9-]*)?\.[a-z0-9]+$")


@dataclass(frozen=True)
class LiveOkeAddons:
    """A live add-on capture: the CLI-shaped dump and its projection."""

    cluster_id: str
    addons: list[dict[str, Any]]
    raw: bytes
    projection: OkeAddonsProjection

    def save(self, path: str) -> None:
        """Write the dump (the bytes the projection read) atomically to ``path``."""
        atomic_write_bytes(path, self.raw)


def check_cluster_id(cluster_id: str) -> str:
    value = (cluster_id or "").strip()
    if not value.startswith("ocid1.cluster.") or not _CLUSTER_OCID.match(value):
        raise invalid(
            f'--oke-cluster-id "{cluster_id}" is not a cluster OCID: expected '
            "ocid1.cluster.oc1.<region>.<id> (see `oci ce cluster list`)"
        )
    return value


def kebab_keys(value: Any) -> Any:
    """Rename snake_case keys to the kebab-case the OCI CLI prints, recursively."""
    if isinstance(value, dict):
        return {str(k).replace("_", "-"): kebab_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [kebab_keys(v) for v in value]
    return value


def serialise_addons(addons: list[dict[str, Any]]) -> bytes:
    """The dump as the OCI CLI writes it: ``{"data": [...]}``, four-space indent."""
    return (json.dumps({"data": addons}, indent=4, ensure_ascii=False) + "\n").encode("utf-8")


def _client_config(
    auth: str, profile: str | None, config_file: str | None, region: str | None
) -> tuple[dict[str, Any], Any]:
    """The SDK config dict and signer (None: the client signs with the config's API key)."""
    require_extra("oci")
    import oci  # type: ignore[import-untyped,unused-ignore]

    if auth == "config":
        location = config_file or oci.config.DEFAULT_LOCATION
        name = profile or oci.config.DEFAULT_PROFILE
        try:
            config = oci.config.from_file(file_location=location, profile_name=name)
        except oci.exceptions.ConfigFileNotFound as exc:
            raise AicrError(
                ErrorCode.UNAUTHORIZED,
                f'no OCI config file at "{location}": run `oci setup config`, or pass '
                "--oci-auth instance_principal / resource_principal",
                exc,
            ) from exc
        except oci.exceptions.ProfileNotFound as exc:
            raise invalid(
                f'--oci-profile "{name}" is not a profile in the OCI config file "{location}"'
            ) from exc
        except (oci.exceptions.InvalidConfig, oci.exceptions.ClientError) as exc:
            raise invalid(
                f'OCI config file "{location}" profile "{name}" is incomplete: it needs user, '
                "tenancy, fingerprint, key_file and region",
                str(exc),
            ) from exc
        if region:
            config["region"] = region
        return config, None
    if auth == "instance_principal":
        try:
            signer = oci.auth.signers.InstancePrincipalsSecurityTokenSigner()
        except Exception as exc:  # the SDK raises assorted errors off an OCI instance
            raise AicrError(
                ErrorCode.UNAUTHORIZED,
                "no OCI instance principal: --oci-auth instance_principal works only on an OCI "
                "compute instance in a dynamic group with a policy such as "
                "`Allow dynamic-group <dynamic-group> to read clusters in compartment "
                "<compartment>`",
                " ".join(str(exc).split())[:300],
            ) from exc
        return {"region": region or signer.region}, signer
    if auth == "resource_principal":
        try:
            signer = oci.auth.signers.get_resource_principals_signer()
        except Exception as exc:
            raise AicrError(
                ErrorCode.UNAUTHORIZED,
                "no OCI resource principal: --oci-auth resource_principal needs "
                "OCI_RESOURCE_PRINCIPAL_VERSION and its companion variables (set inside "
                "OCI Functions, Container Instances and similar services)",
                " ".join(str(exc).split())[:300],
            ) from exc
        return {"region": region or signer.region}, signer
    raise invalid(
        f'--oci-auth "{auth}" is not supported; expected one of {", ".join(AUTH_METHODS)}'
    )


def list_addons(
    cluster_id: str,
    *,
    auth: str = "config",
    profile: str | None = None,
    config_file: str | None = None,
    region: str | None = None,
    service_endpoint: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    cancel: threading.Event | None = None,
    progress: ProgressCallback | None = None,
    signer: Any | None = None,
    config: dict[str, Any] | None = None,
    deadline: float = DEFAULT_DEADLINE_S,
) -> list[dict[str, Any]]:
    """Every add-on of the cluster (all pages), each in the CLI's kebab-case shape.

    ``service_endpoint`` overrides the regional endpoint; ``config``/``signer`` replace the
    ones ``auth`` would build (an embedding application that already holds them).
    ``timeout`` bounds each call, ``deadline`` the whole listing (a server trickling its
    answer or paging for ever ends there; pages are also capped at ``MAX_PAGES``).
    """
    total = positive_timeout(deadline, "OCI capture deadline")
    stop = cancel if cancel is not None else threading.Event()
    return run_with_deadline(
        lambda: _list_addons(
            cluster_id, auth, profile, config_file, region, service_endpoint, timeout, stop,
            progress, signer, config,
        ),
        total,
        "the OKE add-on listing",
        cancel=stop,
    )  # fmt: skip


def _list_addons(
    cluster_id: str,
    auth: str,
    profile: str | None,
    config_file: str | None,
    region: str | None,
    service_endpoint: str | None,
    timeout: float,
    cancel: threading.Event,
    progress: ProgressCallback | None,
    signer: Any | None,
    config: dict[str, Any] | None,
) -> list[dict[str, Any]]:
    seconds = positive_timeout(timeout, "OCI")
    ocid = check_cluster_id(cluster_id)
    if auth not in AUTH_METHODS:
        raise invalid(
            f'--oci-auth "{auth}" is not supported; expected one of {", ".join(AUTH_METHODS)}'
        )
    check_cancel(cancel, "OKE add-on capture")
    require_extra("oci")
    import oci  # type: ignore[import-untyped,unused-ignore]

    if config is None:
        config, built_signer = _client_config(auth, profile, config_file, region)
        signer = signer if signer is not None else built_signer
    client_kwargs: dict[str, Any] = {
        "timeout": (seconds, seconds),
        "retry_strategy": oci.retry.NoneRetryStrategy(),
    }
    if service_endpoint:
        client_kwargs["service_endpoint"] = service_endpoint.rstrip("/")
    if signer is not None:
        client_kwargs["signer"] = signer
    report(progress, SOURCE, f"listing add-ons of OKE cluster {ocid}")
    try:
        client = oci.container_engine.ContainerEngineClient(config, **client_kwargs)
        addons: list[dict[str, Any]] = []
        # Pages are followed here rather than with oci.pagination's helpers: those wrap
        # every call in the SDK's default retry strategy (minutes of back-off), which
        # would make the per-call timeout and the cancel token meaningless.
        page: str | None = None
        number = 0
        while True:
            number += 1
            page_cap(
                number,
                MAX_PAGES,
                "the OCI Container Engine API kept answering opc-next-page for the add-ons of "
                f"cluster {ocid}",
            )
            kwargs: dict[str, Any] = {"page": page} if page else {}
            response = client.list_addons(ocid, **kwargs)
            for summary in response.data or []:
                addons.append(kebab_keys(oci.util.to_dict(summary)))
            report(
                progress,
                SOURCE,
                f"read page {number} of add-ons ({len(addons)} so far)",
                done=len(addons),
            )
            check_cancel(cancel, "OKE add-on capture")
            page = response.next_page if response.has_next_page else None
            if not page:
                break
    except AicrError:
        raise
    except oci.exceptions.ServiceError as exc:
        raise _map_service_error(exc, ocid) from exc
    except (oci.exceptions.ClientError, ValueError) as exc:
        raise invalid(
            "the OCI SDK rejected the client configuration for the add-on list",
            " ".join(str(exc).split())[:300],
        ) from exc
    except Exception as exc:  # requests/urllib3 transport errors surface unwrapped
        text = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        if "timeout" in text.lower() or "timed out" in text.lower():
            raise AicrError(
                ErrorCode.TIMEOUT,
                f"the OCI Container Engine API did not answer within {seconds:g}s listing "
                f"the add-ons of cluster {ocid}",
            ) from exc
        raise AicrError(
            ErrorCode.SERVICE_UNAVAILABLE,
            f"could not reach the OCI Container Engine API to list the add-ons of cluster {ocid}",
            text,
        ) from exc
    return addons


def capture_oke_addons(
    cluster_id: str,
    *,
    auth: str = "config",
    profile: str | None = None,
    config_file: str | None = None,
    region: str | None = None,
    service_endpoint: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    cancel: threading.Event | None = None,
    progress: ProgressCallback | None = None,
    deadline: float = DEFAULT_DEADLINE_S,
    signer: Any | None = None,
    config: dict[str, Any] | None = None,
) -> LiveOkeAddons:
    """List the add-ons live, serialise them as the CLI dump and project them."""

    addons = list_addons(
        cluster_id,
        auth=auth,
        profile=profile,
        config_file=config_file,
        region=region,
        service_endpoint=service_endpoint,
        timeout=timeout,
        deadline=deadline,
        cancel=cancel,
        progress=progress,
        signer=signer,
        config=config,
    )
    ocid = check_cluster_id(cluster_id)
    raw = serialise_addons(addons)
    if len(raw) > MAX_PROVIDER_DUMP_BYTES:
        raise invalid(
            f"the add-on list of OKE cluster {ocid} is {len(raw)} bytes, over the "
            f"{MAX_PROVIDER_DUMP_BYTES}-byte cap a saved OKE add-ons dump may have"
        )
    projection = project_oke_addons(raw, f"live add-ons of {ocid}")
    report(progress, SOURCE, f"projected {len(addons)} add-ons", done=len(addons))
    return LiveOkeAddons(cluster_id=ocid, addons=addons, raw=raw, projection=projection)


def _map_service_error(exc: Any, ocid: str) -> AicrError:
    status = int(getattr(exc, "status", 0) or 0)
    code = str(getattr(exc, "code", "") or "")
    message = " ".join(str(getattr(exc, "message", "") or "").split())[:300]
    detail = f"{code}: {message}" if code else message
    if status == 401:
        return AicrError(
            ErrorCode.UNAUTHORIZED,
            "OCI rejected the request signature (HTTP 401 NotAuthenticated) listing the add-ons "
            f"of cluster {ocid}: check the API key, fingerprint, user and tenancy of the "
            "--oci-profile, or the instance/resource principal",
            detail or None,
        )
    if status in (403, 404):
        return AicrError(
            ErrorCode.NOT_FOUND if status == 404 else ErrorCode.UNAUTHORIZED,
            f"OKE cluster {ocid} was not found or the principal may not read it "
            f"(HTTP {status} {code or 'NotFound'}): check --oke-cluster-id and the region, and "
            f"grant a policy such as `{READ_CLUSTERS_POLICY}`",
            message or None,
        )
    if status == 409 and "basic" in message.lower():
        return AicrError(
            ErrorCode.INVALID_REQUEST,
            f"OKE cluster {ocid} is a basic cluster: add-ons exist only on enhanced clusters; "
            "upgrade it to enhanced in place",
            detail or None,
        )
    if status == 429:
        return AicrError(
            ErrorCode.RATE_LIMIT_EXCEEDED,
            f"OCI throttled the add-on list of cluster {ocid} (HTTP 429); retry later",
            detail or None,
        )
    return AicrError(
        ErrorCode.SERVICE_UNAVAILABLE,
        f"the OCI Container Engine API answered HTTP {status} listing the add-ons of cluster {ocid}",
        detail or None,
    )
