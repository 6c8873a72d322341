"""Live OKE capture against a loopback OCI Container Engine API.

Every test here starts a small HTTP server on 127.0.0.1 that answers the ListAddons path
the ``oci`` SDK calls (``GET /20180222/clusters/{clusterId}/addons``), with bodies in the
real response shape and ``opc-next-page`` paging, and points ContainerEngineClient at it
through ``service_endpoint``. Requests are signed with a freshly generated API key from a
temporary OCI config file.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.capture.oke_addons import load_oke_addons, project_oke_addons
from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.live.oci import capture_oke_addons, check_cluster_id
from tests.conftest import TEST_DATA
from tests.unit.live_fakes import (
    LoopbackServer,
    Reply,
    Request,
    assert_saved_dump_captures_alike,
    write_oci_config,
)

CLUSTER = "ocid1.cluster.oc1.iad.aaaaaaaaexamplecluster"
ADDONS_PATH = f"/20180222/clusters/{CLUSTER}/addons"
DATA = TEST_DATA / "live"
REST_ADDONS: list[dict[str, Any]] = json.loads((DATA / "oke-addons-rest.json").read_text())


@pytest.fixture(scope="module")
def oci_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_oci_config(tmp_path_factory.mktemp("oci"))


def paged_addons(addons: list[dict[str, Any]], per_page: int = 2):
    def handler(request: Request) -> Reply:
        if request.path != ADDONS_PATH:
            return Reply(
                404,
                {
                    "code": "NotAuthorizedOrNotFound",
                    "message": "Authorization failed or requested resource not found.",
                },
            )
        start = int(request.param("page") or 0)
        headers = {"opc-request-id": f"req-{start}"}
        if start + per_page < len(addons):
            headers["opc-next-page"] = str(start + per_page)
        return Reply(200, addons[start : start + per_page], headers)

    return handler


def capture(server: LoopbackServer, config: Path, **kwargs: Any):
    return capture_oke_addons(
        CLUSTER,
        config_file=str(config),
        service_endpoint=server.url,
        timeout=kwargs.pop("timeout", 5),
        **kwargs,
    )


def test_live_addons_read_like_the_cli_dump(oci_config: Path, tmp_path: Path) -> None:
    steps: list[Any] = []
    with LoopbackServer(paged_addons(REST_ADDONS)) as server:
        live = capture(server, oci_config, progress=steps.append)
    # All three pages, each signed with the config's key id.
    assert [r.param("page") for r in server.requests] == [None, "2", "4"]
    auth = server.requests[0].headers["authorization"]
    assert auth.startswith("Signature ") and 'algorithm="rsa-sha256"' in auth
    assert (
        'keyId="ocid1.tenancy.oc1..aaaaaaaatesttenancy/ocid1.user.oc1..aaaaaaaatestuser/'
        '12:34:56:78:90:ab:cd:ef:12:34:56:78:90:ab:cd:ef"' in auth
    )
    assert [a["name"] for a in live.addons] == [a["name"] for a in REST_ADDONS]
    assert live.addons[3]["lifecycle-state"] == "ACTIVE"
    assert live.addons[4]["addon-error"]["code"] == "AddonInstallFailed"
    assert len(steps) >= 3

    offline = load_oke_addons(DATA / "oke-list-addons.json")
    assert live.projection.subtype == offline.subtype
    assert live.projection.subtype.data == {"addon-count": 5, "nvidia-gpu-plugin": "installed"}

    saved = tmp_path / "addons.json"
    live.save(str(saved))
    assert json.loads(saved.read_text()) == json.loads((DATA / "oke-list-addons.json").read_text())
    assert_saved_dump_captures_alike(live, oke_addons=str(saved))


@pytest.mark.parametrize(
    ("addons", "expected"),
    [
        ([{"name": "CoreDNS", "lifecycleState": "ACTIVE"}], "absent"),
        ([{"name": "NvidiaGpuPlugin", "lifecycleState": "DELETING"}], "addon-deleting"),
        (
            [{"name": "NvidiaGpuPlugin", "lifecycleState": "NEEDS_ATTENTION"}],
            "addon-needs_attention",
        ),
        ([], "absent"),
    ],
)
def test_plugin_states_match_the_file_projection(
    oci_config: Path, addons: list[dict[str, Any]], expected: str
) -> None:
    with LoopbackServer(paged_addons(addons)) as server:
        live = capture(server, oci_config)
    cli_shape = {
        "data": [{"name": a["name"], "lifecycle-state": a["lifecycleState"]} for a in addons]
    }
    offline = project_oke_addons(json.dumps(cli_shape).encode(), "cli dump")
    assert live.projection.subtype.data == offline.subtype.data
    assert live.projection.nvidia_gpu_plugin == expected


def _error(status: int, code: str, message: str):
    def handler(_: Request) -> Reply:
        return Reply(status, {"code": code, "message": message})

    return handler


def test_401_names_the_signing_key(oci_config: Path) -> None:
    with LoopbackServer(
        _error(
            401,
            "NotAuthenticated",
            "The required information to complete authentication was not provided or was incorrect.",
        )
    ) as server:
        with pytest.raises(AicrError) as info:
            capture(server, oci_config)
    assert info.value.code is ErrorCode.UNAUTHORIZED
    assert "API key" in info.value.message
    assert "NotAuthenticated" in info.value.render()


def test_404_names_the_policy(oci_config: Path) -> None:
    with LoopbackServer(
        _error(
            404, "NotAuthorizedOrNotFound", "Authorization failed or requested resource not found."
        )
    ) as server:
        with pytest.raises(AicrError) as info:
            capture(server, oci_config)
    assert info.value.code is ErrorCode.NOT_FOUND
    assert "read clusters in compartment" in info.value.message
    assert CLUSTER in info.value.message


def test_slow_answer_is_a_timeout(oci_config: Path) -> None:
    def handler(_: Request) -> Reply:
        return Reply(200, [], delay_s=5)

    with LoopbackServer(handler) as server, pytest.raises(AicrError) as info:
        capture(server, oci_config, timeout=0.4)
    assert info.value.code is ErrorCode.TIMEOUT
    assert "0.4s" in info.value.message


def test_missing_config_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "config"
    with pytest.raises(AicrError) as info:
        capture_oke_addons(CLUSTER, config_file=str(missing), service_endpoint="http://127.0.0.1:9")
    assert info.value.code is ErrorCode.UNAUTHORIZED
    assert str(missing) in info.value.message
    assert "oci setup config" in info.value.message


def test_unknown_profile_is_named(oci_config: Path) -> None:
    with pytest.raises(AicrError) as info:
        capture_oke_addons(
            CLUSTER,
            config_file=str(oci_config),
            profile="PROD",
            service_endpoint="http://127.0.0.1:9",
        )
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert '--oci-profile "PROD"' in info.value.message


def test_resource_principal_without_its_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OCI_RESOURCE_PRINCIPAL_VERSION", raising=False)
    with pytest.raises(AicrError) as info:
        capture_oke_addons(
            CLUSTER, auth="resource_principal", service_endpoint="http://127.0.0.1:9"
        )
    assert info.value.code is ErrorCode.UNAUTHORIZED
    assert "OCI_RESOURCE_PRINCIPAL_VERSION" in info.value.message


@pytest.mark.parametrize(
    "value", ["", "ocid1.instance.oc1.iad.aaaa", "cluster-1", "ocid1.cluster.oc1.iad."]
)
def test_bad_cluster_id_fails_before_any_request(value: str) -> None:
    with pytest.raises(AicrError) as info:
        check_cluster_id(value)
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert "--oke-cluster-id" in info.value.message


def test_unknown_auth_method() -> None:
    with pytest.raises(AicrError) as info:
        capture_oke_addons(CLUSTER, auth="password")
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert "--oci-auth" in info.value.message


def test_cancel_between_pages(oci_config: Path) -> None:
    cancel = threading.Event()

    def on_progress(step: Any) -> None:
        if "page 1" in step.message:
            cancel.set()

    with LoopbackServer(paged_addons(REST_ADDONS)) as server, pytest.raises(AicrError) as info:
        capture(server, oci_config, cancel=cancel, progress=on_progress)
    assert info.value.code is ErrorCode.TIMEOUT
    assert len(server.requests) == 1
