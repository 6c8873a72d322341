"""Live AKS capture against a loopback Azure Resource Manager.

Every test here starts a small HTTPS server on 127.0.0.1 (a throwaway CA trusted through
REQUESTS_CA_BUNDLE) that answers the AgentPools list path azure-mgmt-containerservice
calls, with bodies in the ARM REST shape, and points the SDK at it through ``base_url``.
The credential is a static token credential.
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.capture.aks_pools import load_aks_pools
from aicr_tui.core.foundation.errors import AicrError, ErrorCode
from aicr_tui.core.live import CaptureProgress
from aicr_tui.core.live.azure import (
    AGENT_POOLS_READ_ACTION,
    agent_pool_to_az_json,
    capture_aks_pools,
    cluster_ref,
)
from tests.conftest import TEST_DATA
from tests.unit.live_fakes import (
    FailingCredential,
    LoopbackServer,
    Reply,
    Request,
    StaticTokenCredential,
    assert_saved_dump_captures_alike,
    make_tls_files,
)

SUB = "11111111-2222-3333-4444-555555555555"
RG = "gpu-rg"
CLUSTER = "gpu-aks"
LIST_PATH = (
    f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.ContainerService"
    f"/managedClusters/{CLUSTER}/agentPools"
)
DATA = TEST_DATA / "live"
REST_POOLS: list[dict[str, Any]] = json.loads((DATA / "aks-agentpools-rest.json").read_text())


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return make_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture(autouse=True)
def _trust_ca(monkeypatch: pytest.MonkeyPatch, tls: tuple[Path, Path, Path]) -> None:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tls[0]))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for var in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(var, raising=False)


def paged_pools(pools: list[dict[str, Any]], per_page: int = 2):
    """A handler serving ``pools`` as ARM pages linked by nextLink ($skipToken)."""

    def handler(request: Request) -> Reply:
        if request.path != LIST_PATH:
            return Reply(404, {"error": {"code": "ResourceNotFound", "message": request.path}})
        start = int(request.param("$skipToken") or 0)
        page = pools[start : start + per_page]
        body: dict[str, Any] = {"value": page}
        if start + per_page < len(pools):
            host = request.headers["host"]
            body["nextLink"] = (
                f"https://{host}{LIST_PATH}?api-version=2026-08-01&$skipToken={start + per_page}"
            )
        return Reply(200, body)

    return handler


def arm(handler, tls: tuple[Path, Path, Path]) -> LoopbackServer:
    return LoopbackServer(handler, tls=(tls[1], tls[2]))


def _refused(tls: tuple[Path, Path, Path], answer: Reply, **kwargs: Any) -> AicrError:
    """The error a capture with no retries raises when ARM answers every request with
    ``answer``."""
    with arm(lambda _: answer, tls) as server, pytest.raises(AicrError) as info:
        _capture(server.url, retries=0, **kwargs)
    return info.value


def _capture(endpoint: str | None, **kwargs: Any) -> Any:
    """``capture_aks_pools`` of the test cluster at ``endpoint``, with a static token unless
    ``credential`` says otherwise."""
    kwargs.setdefault("credential", StaticTokenCredential())
    return capture_aks_pools(SUB, RG, CLUSTER, arm_endpoint=endpoint, **kwargs)


def test_live_pools_read_like_the_az_dump(tls: tuple[Path, Path, Path], tmp_path: Path) -> None:
    credential = StaticTokenCredential()
    steps: list[CaptureProgress] = []
    with arm(paged_pools(REST_POOLS), tls) as server:
        live = _capture(server.url, credential=credential, timeout=5, progress=steps.append)
    # Both pages were read, with the api-version the SDK pins and the bearer token.
    assert [r.param("$skipToken") for r in server.requests] == [None, "2"]
    assert all(r.param("api-version") for r in server.requests)
    assert all(r.headers.get("authorization") == "Bearer test-token" for r in server.requests)
    assert [p["name"] for p in live.pools] == ["system", "gpupool1", "gpupool2"]
    assert live.pools[2]["gpuProfile"] == {
        "driver": "Install",
        "nvidia": {"managementMode": "Unmanaged"},
    }
    assert live.pools[1]["resourceGroup"] == RG
    assert any("page 2" in s.message for s in steps)

    offline = load_aks_pools(DATA / "aks-nodepool-list.json")
    assert live.projection.subtype == offline.subtype
    assert live.projection.subtype.data == {
        "gpu-driver": "Install",
        "gpu-pool-count": 2,
        "gpu-pools": "gpupool1=Install,gpupool2=Install",
    }
    assert [(p.name, p.mode) for p in live.projection.pools] == [
        (p.name, p.mode) for p in offline.pools
    ]

    # The saved dump is a valid offline input giving the same readings again.
    saved = tmp_path / "pools.json"
    live.save(str(saved))
    assert load_aks_pools(saved).subtype == live.projection.subtype
    assert_saved_dump_captures_alike(live, aks_pools=str(saved))


@pytest.mark.parametrize(
    ("profiles", "expected"),
    [
        ([{"driver": "None"}, {"driver": "None"}], "None"),
        ([{"driver": "Install", "nvidia": {"managementMode": "Managed"}}, None], "Mixed"),
        (
            [{"nvidia": {"managementMode": "Managed"}}, {"nvidia": {"managementMode": "managed"}}],
            "Managed",
        ),
        (
            [{"driver": "None", "nvidia": {"managementMode": "unmanaged"}}, {"driver": "None"}],
            "None",
        ),
        ([None, {}], "Install"),
    ],
)
def test_each_pool_mode_survives_the_sdk(
    tls: tuple[Path, Path, Path], profiles: list[Any], expected: str
) -> None:
    pools = copy.deepcopy(REST_POOLS[1:])
    az_dump = []
    for pool, profile in zip(pools, profiles, strict=True):
        pool["properties"].pop("gpuProfile", None)
        if profile is not None:
            pool["properties"]["gpuProfile"] = profile
        # What `az aks nodepool list -o json` prints for the same pool, written out by hand.
        az_dump.append(
            {"name": pool["name"], "vmSize": pool["properties"]["vmSize"], "gpuProfile": profile}
        )
    with arm(paged_pools(pools, per_page=1), tls) as server:
        live = _capture(server.url, timeout=5)
    from aicr_tui.core.capture.aks_pools import project_aks_pools

    offline = project_aks_pools(json.dumps(az_dump).encode(), "az dump")
    assert live.projection.subtype.data == offline.subtype.data
    assert live.projection.subtype.data["gpu-driver"] == expected


def test_unknown_fields_are_kept_in_the_dump() -> None:
    pool = {
        "id": "x",
        "name": "p",
        "properties": {"vmSize": "Standard_NC6s_v3", "futureField": {"a": 1}},
    }
    out = agent_pool_to_az_json(pool, RG)
    assert out == {
        "id": "x",
        "name": "p",
        "vmSize": "Standard_NC6s_v3",
        "futureField": {"a": 1},
        "resourceGroup": RG,
    }


def _error(status: int, code: str, message: str) -> Reply:
    return Reply(status, {"error": {"code": code, "message": message}})


def test_403_names_the_rbac_action(tls: tuple[Path, Path, Path]) -> None:
    err = _refused(
        tls,
        _error(
            403,
            "AuthorizationFailed",
            "The client 'x' does not have authorization to perform action "
            f"'{AGENT_POOLS_READ_ACTION}' over scope '/subscriptions/{SUB}'.",
        ),
    )
    assert err.code is ErrorCode.UNAUTHORIZED
    assert AGENT_POOLS_READ_ACTION in err.message
    assert "AuthorizationFailed" in err.render()
    assert "\n" not in err.render()


def test_401_names_the_credential(tls: tuple[Path, Path, Path]) -> None:
    err = _refused(tls, _error(401, "InvalidAuthenticationToken", "The access token is invalid."))
    assert err.code is ErrorCode.UNAUTHORIZED
    assert "az login" in err.message
    assert "InvalidAuthenticationToken" in err.render()


def test_404_names_the_cluster(tls: tuple[Path, Path, Path]) -> None:
    err = _refused(tls, _error(404, "ResourceNotFound", "The Resource was not found."))
    assert err.code is ErrorCode.NOT_FOUND
    assert f'"{CLUSTER}"' in err.message and RG in err.message


def test_slow_answer_is_a_timeout(tls: tuple[Path, Path, Path]) -> None:
    err = _refused(tls, Reply(200, {"value": []}, delay_s=5), timeout=0.4)
    assert err.code is ErrorCode.TIMEOUT
    assert "0.4s" in err.message


def test_missing_credential_is_named() -> None:
    with pytest.raises(AicrError) as info:
        _capture("https://127.0.0.1:9", credential=FailingCredential(), retries=0)
    assert info.value.code is ErrorCode.UNAUTHORIZED
    assert "DefaultAzureCredential" in info.value.message
    assert "az login" in info.value.message


def test_unreachable_endpoint_is_one_line() -> None:
    with pytest.raises(AicrError) as info:
        _capture("https://127.0.0.1:9", retries=0, timeout=2)
    assert info.value.code in (ErrorCode.SERVICE_UNAVAILABLE, ErrorCode.TIMEOUT)
    assert "\n" not in info.value.render()


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("my-sub", RG, CLUSTER), "--aks-subscription"),
        ((SUB, "bad/rg", CLUSTER), "--aks-resource-group"),
        ((SUB, RG, "-bad"), "--aks-cluster"),
        ((SUB, RG, ""), "--aks-cluster"),
    ],
)
def test_bad_coordinates_fail_before_any_request(args: tuple[str, str, str], flag: str) -> None:
    with pytest.raises(AicrError) as info:
        cluster_ref(*args)
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert flag in info.value.message


def test_cancel_before_start_makes_no_request(tls: tuple[Path, Path, Path]) -> None:
    cancel = threading.Event()
    cancel.set()
    with arm(paged_pools(REST_POOLS), tls) as server, pytest.raises(AicrError) as info:
        _capture(server.url, cancel=cancel)
    assert info.value.code is ErrorCode.TIMEOUT
    assert "canceled" in info.value.message
    assert server.requests == []


def test_cancel_between_pages_stops_the_listing(tls: tuple[Path, Path, Path]) -> None:
    cancel = threading.Event()

    def on_progress(step: CaptureProgress) -> None:
        if "page 1" in step.message:
            cancel.set()

    with arm(paged_pools(REST_POOLS, per_page=1), tls) as server, pytest.raises(AicrError):
        _capture(server.url, cancel=cancel, progress=on_progress)
    assert len(server.requests) == 1


def test_server_error_without_body_is_one_line(tls: tuple[Path, Path, Path]) -> None:
    err = _refused(tls, Reply(500, b""))
    assert err.code is ErrorCode.SERVICE_UNAVAILABLE
    assert "HTTP 500" in err.message
    assert "\n" not in err.render()


def test_body_that_is_not_a_pool_list(tls: tuple[Path, Path, Path]) -> None:
    err = _refused(tls, Reply(200, b"<html>captive portal</html>"))
    assert err.code is ErrorCode.SERVICE_UNAVAILABLE
    assert "\n" not in err.render()


def test_bad_cloud_setting_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_SDK_CLOUD_CONF", "AZURE_MARS")
    with pytest.raises(AicrError) as info:
        _capture(None, retries=0)
    assert info.value.code is ErrorCode.INVALID_REQUEST
    assert "AZURE_SDK_CLOUD_CONF" in info.value.message
