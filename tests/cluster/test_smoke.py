"""The local control plane answers like a real v1.34 cluster: the server version, a kwok
fake node going Ready, a Deployment's pods running on it, ServiceAccount tokens and RBAC,
and a real ``helm install --wait`` / ``helm uninstall`` of a small chart."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from tests.cluster.conftest import Cluster, condition_true


def _gpu_node(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true"}},
        "status": {
            "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110", "nvidia.com/gpu": "2"},
            "allocatable": {"cpu": "15", "memory": "60Gi", "pods": "110", "nvidia.com/gpu": "2"},
            "nodeInfo": {
                "kernelVersion": "5.15.0-1089-azure",
                "osImage": "Ubuntu 22.04.5 LTS",
                "kubeletVersion": "v1.34.4",
            },
        },
    }


def test_kubectl_reports_a_v1_34_server(cluster: Cluster) -> None:
    version = json.loads(cluster.kubectl("version", "-o", "json").stdout)
    server = version["serverVersion"]
    assert server["gitVersion"].startswith("v1.34."), server
    assert (server["major"], server["minor"]) == ("1", "34")
    assert version["clientVersion"]["gitVersion"].startswith("v1.34.")


def test_a_kwok_node_becomes_ready_and_keeps_its_modelled_status(
    cluster: Cluster, kwok_nodes: Any
) -> None:
    (node,) = kwok_nodes(_gpu_node("smoke-gpu-0"))
    assert condition_true(node, "Ready")
    status = node["status"]
    # kwok's node stage keeps what the fixture modelled instead of writing its defaults.
    assert status["capacity"]["nvidia.com/gpu"] == "2"
    assert status["allocatable"]["cpu"] == "15"
    assert status["nodeInfo"]["kernelVersion"] == "5.15.0-1089-azure"
    assert status["nodeInfo"]["osImage"] == "Ubuntu 22.04.5 LTS"
    assert node["metadata"]["labels"]["nvidia.com/gpu.present"] == "true"
    assert "smoke-gpu-0" in cluster.names("nodes", selector="type=kwok")


def test_a_deployment_runs_ready_pods_on_a_kwok_node(
    cluster: Cluster, kwok_nodes: Any, namespace: str
) -> None:
    kwok_nodes(_gpu_node("smoke-gpu-1"))
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "nodeSelector": {"kubernetes.io/hostname": "smoke-gpu-1"},
                    "initContainers": [{"name": "init", "image": "busybox:1.36"}],
                    "containers": [
                        {
                            "name": "web",
                            "image": "nginx:1.27",
                            "resources": {"limits": {"nvidia.com/gpu": "1"}},
                        }
                    ],
                },
            },
        },
    }
    cluster.apply(deployment, server_side=True)
    cluster.kubectl(
        "rollout", "status", "deployment/web", "-n", namespace, "--timeout=90s", timeout=120
    )
    pods = cluster.list_objects("pods", namespace, selector="app=web")
    assert len(pods) == 2
    for pod in pods:
        assert pod["spec"]["nodeName"] == "smoke-gpu-1"
        assert pod["status"]["phase"] == "Running"
        assert condition_true(pod, "Ready")
        assert pod["status"]["containerStatuses"][0]["ready"] is True
        assert pod["status"]["initContainerStatuses"][0]["state"]["terminated"]["exitCode"] == 0
    # The node's two GPUs are taken: a third GPU replica stays Pending (the scheduler counts
    # the extended resource the node was modelled with).
    cluster.kubectl("scale", "deployment/web", "-n", namespace, "--replicas=3")
    pending = cluster.wait_until(
        "a third GPU pod Unschedulable",
        lambda: [
            p
            for p in cluster.list_objects("pods", namespace, selector="app=web")
            if any(
                c.get("reason") == "Unschedulable"
                for c in (p.get("status") or {}).get("conditions") or []
            )
        ],
    )
    assert len(pending) == 1


def test_a_service_account_token_carries_only_its_rbac(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    # The controller manager's root-CA publisher runs (--root-ca-file).
    cluster.wait_until(
        "kube-root-ca.crt published",
        lambda: cluster.get("configmap", "kube-root-ca.crt", namespace),
    )
    cluster.kubectl("create", "serviceaccount", "reader", "-n", namespace)
    kubeconfig = cluster.service_account_kubeconfig(namespace, "reader", tmp_path / "sa.kubeconfig")
    as_sa = {"KUBECONFIG": str(kubeconfig)}
    whoami = json.loads(cluster.kubectl("auth", "whoami", "-o", "json", env=as_sa).stdout)
    assert whoami["status"]["userInfo"]["username"] == f"system:serviceaccount:{namespace}:reader"
    denied = cluster.kubectl("get", "nodes", env=as_sa, check=False)
    assert denied.returncode != 0
    assert "forbidden" in denied.stderr.lower()
    role = f"{namespace}-node-reader"
    cluster.kubectl("create", "clusterrole", role, "--verb=get,list", "--resource=nodes")
    try:
        cluster.kubectl(
            "create",
            "clusterrolebinding",
            role,
            f"--clusterrole={role}",
            f"--serviceaccount={namespace}:reader",
        )
        cluster.wait_until(
            "the binding takes effect",
            lambda: cluster.kubectl("get", "nodes", env=as_sa, check=False).returncode == 0,
        )
        still_denied = cluster.kubectl("get", "daemonsets", "-A", env=as_sa, check=False)
        assert "forbidden" in still_denied.stderr.lower()
    finally:
        cluster.kubectl("delete", "clusterrolebinding,clusterrole", role, "--ignore-not-found")


def _write_chart(root: Path) -> Path:
    chart = root / "smoke"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(
        "apiVersion: v2\nname: smoke\nversion: 0.1.0\nappVersion: '1.0'\n", encoding="utf-8"
    )
    (chart / "values.yaml").write_text("replicas: 2\n", encoding="utf-8")
    (chart / "templates" / "all.yaml").write_text(
        textwrap.dedent(
            """\
            apiVersion: v1
            kind: ConfigMap
            metadata:
              name: {{ .Release.Name }}-config
            data:
              greeting: hello
            ---
            apiVersion: v1
            kind: Service
            metadata:
              name: {{ .Release.Name }}
            spec:
              selector: {app: {{ .Release.Name }}}
              ports: [{port: 80}]
            ---
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: {{ .Release.Name }}
            spec:
              replicas: {{ .Values.replicas }}
              selector:
                matchLabels: {app: {{ .Release.Name }}}
              template:
                metadata:
                  labels: {app: {{ .Release.Name }}}
                spec:
                  containers:
                  - name: app
                    image: nginx:1.27
                    readinessProbe:
                      httpGet: {path: /, port: 80}
            ---
            apiVersion: batch/v1
            kind: Job
            metadata:
              name: {{ .Release.Name }}-post-install
              annotations:
                helm.sh/hook: post-install
                helm.sh/hook-delete-policy: hook-succeeded
            spec:
              backoffLimit: 0
              template:
                spec:
                  restartPolicy: Never
                  containers:
                  - name: hook
                    image: busybox:1.36
                    command: ["true"]
            """
        ),
        encoding="utf-8",
    )
    return chart


def test_helm_install_wait_and_uninstall_for_real(
    cluster: Cluster, kwok_nodes: Any, namespace: str, tmp_path: Path
) -> None:
    kwok_nodes({"metadata": {"name": "smoke-cpu-0"}})
    chart = _write_chart(tmp_path)
    version = cluster.helm("version", "--short").stdout
    assert version.startswith("v4."), version
    cluster.helm(
        "install", "smoke", str(chart), "-n", namespace, "--wait", "--timeout", "2m", timeout=180
    )
    (release,) = json.loads(cluster.helm("list", "-n", namespace, "-o", "json").stdout)
    assert (release["name"], release["status"]) == ("smoke", "deployed")
    deployment = cluster.get("deployment", "smoke", namespace)
    assert deployment is not None
    assert deployment["status"].get("readyReplicas") == 2
    assert cluster.get("configmap", "smoke-config", namespace) is not None
    # The post-install hook Job ran to completion (kwok finished its pod) and was deleted.
    assert cluster.get("job", "smoke-post-install", namespace) is None

    cluster.helm("uninstall", "smoke", "-n", namespace, "--wait", "--timeout", "2m", timeout=180)
    # helm v4 has no --all: every state is asked for by name.
    states = ["--deployed", "--failed", "--pending", "--superseded", "--uninstalled"]
    listed = cluster.helm("list", "-n", namespace, *states, "--uninstalling", "-o", "json")
    assert json.loads(listed.stdout) == []
    for kind, name in (
        ("deployment", "smoke"),
        ("configmap", "smoke-config"),
        ("service", "smoke"),
    ):
        assert cluster.get(kind, name, namespace) is None, (kind, name)
    # No helm release secret is left either.
    assert cluster.names("secrets", namespace, selector="owner=helm") == set()
