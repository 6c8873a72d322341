"""``aicr-tui validate`` against the real API server (issue 24, item 4).

The deployed state is real objects (livevalid_support): Deployments and DaemonSets whose
status the kube-controller-manager, the scheduler and kwok make true, so the deployment
phase reads what a cluster reports. Under kwok nothing executes: no GPU, no pod log, no
operator reconciling its ClusterPolicy, a probe pod never ends. Those checks must end
``failed`` or ``not measured`` with the reason, never ``passed``; every object a check
creates must be gone when the command exits, Ctrl-C included; and the recording of the
live run replays to the same CTRF.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster import livevalid_support as S
from tests.cluster.conftest import Cluster

VALIDATION_NS = f"{S.PREFIX}validation"
# A kwok probe pod runs for ever: its budget is the wait, so keep it short.
BUDGETS = {
    "check-nvidia-smi": "12s",
    "secure-accelerator-access": "12s",
    "nccl-all-reduce-bw": "15s",
}
# Checks that need something kwok does not run: a GPU, a pod's log, an operator's
# reconcile, the DCGM exporter / Prometheus answering, an autoscaler.
UNMEASURABLE = (
    "check-nvidia-smi",
    "gpu-operator-health",
    "accelerator-metrics",
    "ai-service-metrics",
    "pod-autoscaling",
    "gang-scheduling",
    "cluster-autoscaling",
    "secure-accelerator-access",
    "nccl-all-reduce-bw",
)

CLUSTER_POLICY_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": S.CLUSTER_POLICY_CRD, "labels": {"aicr-val/owner": "livevalid"}},
    "spec": {
        "group": "nvidia.com",
        "names": {
            "kind": "ClusterPolicy",
            "listKind": "ClusterPolicyList",
            "plural": "clusterpolicies",
            "singular": "clusterpolicy",
        },
        "scope": "Cluster",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}


@dataclass
class Deployed:
    recipe: Path
    doc: dict[str, Any]
    data: Path
    work: Path


def _services(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The Services the charts put in front of the DCGM exporter and Prometheus."""
    gpu_ns = next(r["namespace"] for r in doc["componentRefs"] if r["name"] == "gpu-operator")
    mon_ns = next(
        r["namespace"] for r in doc["componentRefs"] if r["name"] == "kube-prometheus-stack"
    )
    return [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"app": app}, "ports": [{"name": "http", "port": port}]},
        }
        for name, ns, app, port in (
            ("nvidia-dcgm-exporter", gpu_ns, "nvidia-dcgm-exporter", 9400),
            ("kube-prometheus-prometheus", mon_ns, "kube-prometheus-operator", 9090),
        )
    ]


@pytest.fixture(scope="module")
def deployed(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    work = tmp_path_factory.mktemp("livevalid")
    recipe, doc = S.prefixed_recipe(work)
    data = S.short_catalog(work / "data", BUDGETS)
    made_nodes: list[str] = []
    own_crd = False
    try:
        S.ensure_nodes(cluster, made_nodes)
        cluster.apply(S.deployed_state(doc), server_side=True)
        cluster.apply(_services(doc), server_side=True)
        # The GPU Operator's CRD with no controller: its ClusterPolicy never gets a status.
        # Cluster-scoped and shared: created only when nobody else's is there.
        if cluster.get("crd", S.CLUSTER_POLICY_CRD) is None:
            cluster.apply(CLUSTER_POLICY_CRD, server_side=True)
            own_crd = True
            cluster.wait_established(S.CLUSTER_POLICY_CRD)
            cluster.apply(
                {
                    "apiVersion": "nvidia.com/v1",
                    "kind": "ClusterPolicy",
                    "metadata": {"name": "cluster-policy"},
                    "spec": {"operator": {"defaultRuntime": "containerd"}},
                },
                server_side=True,
            )
        S.wait_deployed(cluster, doc)
        yield Deployed(recipe, doc, data, work)
    finally:
        if own_crd:
            cluster.kubectl(
                "delete", "crd", S.CLUSTER_POLICY_CRD, "--ignore-not-found", "--wait=true"
            )
        S.delete_namespaces(cluster, [*S.namespaces_of(doc), VALIDATION_NS])
        cluster.delete_nodes(made_nodes)


def _watched(doc: dict[str, Any]) -> list[str]:
    return sorted({*S.namespaces_of(doc), VALIDATION_NS, "default"})


def _base_args(d: Deployed, *more: str) -> list[str]:
    return ["-r", str(d.recipe), "-s", str(S.SNAPSHOT), "--data", str(d.data), *more]


def _tests(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in report["results"]["tests"]}


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# -- the deployment phase reads the real objects ------------------------------------------------


def _deployment_phase(
    cluster: Cluster, deployed: Deployed, report: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, dict[str, Any]]]:
    """The deployment phase, the GPU probe withheld (kwok runs no nvidia-smi)."""
    out = deployed.work / report
    args = _base_args(
        deployed, "--phase", "deployment", "--skip-check", "check-nvidia-smi",
        "-n", VALIDATION_NS, "-o", str(out),
    )  # fmt: skip
    proc = S.validate(cluster, *args)
    return proc, _tests(S.ctrf(out)) if out.is_file() else {}


def test_the_deployment_phase_reads_the_real_objects(cluster: Cluster, deployed: Deployed) -> None:
    """Ready workloads pass from their real status; a deleted Deployment and one whose pods
    cannot be scheduled fail expected-resources, each named, read from the API server."""
    proc, tests = _deployment_phase(cluster, deployed, "deployment-ok.json")
    assert proc.returncode == 0, proc.stderr  # a withheld check is waived (--skip-check)
    assert tests["expected-resources"]["status"] == "passed", tests["expected-resources"]
    assert (
        tests["expected-resources"]["message"] == "all 20 expected resources healthy"
    )  # the regenerated demo recipe's 20
    assert tests["operator-health"]["status"] == "passed"
    assert any(line.endswith(": Running") for line in tests["operator-health"]["stdout"])
    version = tests["gpu-operator-version"]
    assert version["status"] == "passed" and S.OPERATOR_VERSION in version["message"]

    gone = ("Deployment", f"{S.PREFIX}cert-manager", "cert-manager-webhook")
    stuck = ("Deployment", f"{S.PREFIX}monitoring", "kube-prometheus-operator")
    try:
        cluster.kubectl("delete", "deployment", gone[2], "-n", gone[1], "--wait=true")
        cluster.kubectl("delete", "deployment", stuck[2], "-n", stuck[1], "--wait=true")
        cluster.apply(S.workload(*stuck, schedulable=False), server_side=True)
        cluster.wait_until(
            "the unschedulable Deployment's pod exists and is Pending",
            lambda: any(
                (p.get("status") or {}).get("phase") == "Pending"
                for p in cluster.list_objects("pods", stuck[1], selector=f"app={stuck[2]}")
            ),
        )
        proc, tests = _deployment_phase(cluster, deployed, "deployment-broken.json")
        assert proc.returncode == 8, proc.stderr  # a check failed
        er = tests["expected-resources"]
        assert er["status"] == "failed", er
        assert er["message"].startswith("2 of 20 expected resources unhealthy"), er["message"]
        assert f"Deployment {gone[1]}/{gone[2]}: not found" in er["message"]
        assert (
            f"Deployment {stuck[1]}/{stuck[2]}: not ready (ready 0/1, available 0)" in er["message"]
        )
        assert tests["operator-health"]["status"] == "passed"  # the rest still reads healthy
    finally:
        cluster.kubectl(
            "delete", "deployment", stuck[2], "-n", stuck[1], "--ignore-not-found", "--wait=true"
        )
        cluster.apply([S.workload(*gone), S.workload(*stuck)], server_side=True)
        S.wait_deployed(cluster, deployed.doc)


# -- one full run: verdicts, cleanup, recording -------------------------------------------------


@dataclass
class FullRun:
    returncode: int
    stderr: str
    report: dict[str, Any]
    report_path: Path
    recording: Path
    before: dict[str, set[str]]
    after: dict[str, set[str]]
    leftovers: list[str]


@pytest.fixture(scope="module")
def full_run(cluster: Cluster, deployed: Deployed) -> FullRun:
    """Every phase, in a validation namespace the run creates (and must remove)."""
    S.delete_namespaces(cluster, [VALIDATION_NS])
    watched = _watched(deployed.doc)
    before = S.api_state(cluster, watched)
    out = deployed.work / "full.json"
    rec = deployed.work / "full.jsonl"
    proc = S.validate(
        cluster, *_base_args(deployed, "-n", VALIDATION_NS, "-o", str(out), "--record", str(rec))
    )
    # read straight after the exit: what the run left is what a user finds
    after = S.api_state(cluster, watched)
    leftovers = S.labelled_leftovers(cluster)
    assert out.is_file() and rec.is_file(), proc.stderr
    return FullRun(proc.returncode, proc.stderr, S.ctrf(out), out, rec, before, after, leftovers)


def test_checks_kwok_cannot_serve_end_failed_or_not_measured_with_the_reason(
    full_run: FullRun,
) -> None:
    assert full_run.returncode == 8, full_run.stderr
    tests = _tests(full_run.report)
    for name in UNMEASURABLE:
        t = tests[name]
        assert t["status"] in ("failed", "other"), (name, t)
        assert t["extra"]["verdict"] in ("failed", "not measured"), (name, t)
        assert t.get("message", "").strip(), f"{name} ended {t['status']} without a reason"
    # the ClusterPolicy exists (no controller gives it a status) or not: either way named
    policy = tests["gpu-operator-health"]["message"]
    assert "ClusterPolicy cluster-policy" in policy, policy
    # a probe pod that never ends, and a pod log kwok cannot serve, are said as such
    assert "pod Running" in " ".join(tests["check-nvidia-smi"]["stdout"])
    assert "did not finish" in tests["secure-accelerator-access"]["message"]
    # the launcher's log cannot be read while it "runs": that is said, the wait goes on, and
    # the gate ends not measured by the budget (it used to end at the first log read)
    nccl = tests["nccl-all-reduce-bw"]
    assert nccl["message"] == "timeout: NCCL launcher did not complete within 15s", nccl
    assert any("not readable yet, still waiting" in line for line in nccl["stdout"]), nccl
    gates = [
        e for e in _events(full_run.recording)
        if e["type"] == "Measurement" and e["check"] == "nccl-all-reduce-bw"
    ]  # fmt: skip
    assert [g["verdict"] for g in gates] == ["not measured"], gates
    # nothing the cluster cannot show passed; what it can show did
    for name in (
        "operator-health",
        "expected-resources",
        "gpu-operator-version",
        "platform-health",
    ):
        assert tests[name]["status"] == "passed", tests[name]
    # each stderr line names a declared check that was not measured
    unmeasured = [n for n, t in tests.items() if t["status"] == "other"]
    for name in unmeasured:
        assert f"/{name}: " in full_run.stderr, name


def test_no_phase_without_a_measured_pass_reads_passed(full_run: FullRun) -> None:
    """Over the CTRF (suite of each test) and the recording's PhaseFinished events."""
    suites: dict[str, list[str]] = {}
    for t in full_run.report["results"]["tests"]:
        suites.setdefault(t["suite"][0], []).append(t["extra"]["verdict"])
    finished = {e["phase"]: e for e in _events(full_run.recording) if e["type"] == "PhaseFinished"}
    assert set(suites) == {"deployment", "conformance", "performance"}
    for phase, verdicts in suites.items():
        status = finished[phase]["status"]
        if status == "passed":
            assert "passed" in verdicts and not {"failed", "not measured"} & set(verdicts)
        assert status != "passed", (
            phase,
            verdicts,
        )  # kwok: every phase holds an unmeasurable check
    assert finished["performance"]["status"] == "not measured"  # nothing in it was measured
    run = next(e for e in _events(full_run.recording) if e["type"] == "RunFinished")
    assert run["exit_code"] == 8 and run["passed"] < run["tests"]


def test_a_run_leaves_nothing_behind(full_run: FullRun) -> None:
    """Listed through the API right after the command exits: the validation namespace the
    run created is gone (not Terminating), no object of the run is anywhere."""
    assert VALIDATION_NS not in full_run.after["namespaces"], (
        f"{VALIDATION_NS} still exists after the run"
    )
    assert full_run.after == full_run.before
    assert full_run.leftovers == []


def test_the_recording_of_the_live_run_replays_to_the_same_ctrf(
    cluster: Cluster, deployed: Deployed, full_run: FullRun
) -> None:
    """CTRF's times all come from the events (reports/ctrf.py): byte for byte equal."""
    replayed = deployed.work / "replayed.json"
    proc = S.validate(
        cluster, "--replay", str(full_run.recording), "--replay-speed", "0", "-o", str(replayed)
    )
    assert proc.returncode == full_run.returncode, proc.stderr
    assert replayed.read_bytes() == full_run.report_path.read_bytes()


# -- an existing validation namespace: only the run's objects go ---------------------------------


def test_in_an_existing_namespace_only_the_objects_the_checks_made_are_removed(
    cluster: Cluster, deployed: Deployed
) -> None:
    ns = f"{S.PREFIX}keep"
    cluster.kubectl("create", "namespace", ns)
    try:
        cluster.kubectl("create", "configmap", "mine", "-n", ns, "--from-literal=a=b")
        before = S.api_state(cluster, [ns])
        out = deployed.work / "keep.json"
        args = _base_args(
            deployed, "--phase", "conformance", "-n", ns, "-o", str(out),
        )  # fmt: skip
        proc = S.validate(cluster, *args)
        assert proc.returncode == 8, proc.stderr
        probe = _tests(S.ctrf(out))["secure-accelerator-access"]
        assert "did not finish" in probe["message"], probe  # its pod existed, then was deleted
        assert S.api_state(cluster, [ns]) == before
        assert S.labelled_leftovers(cluster) == []
    finally:
        S.delete_namespaces(cluster, [ns])


# -- Ctrl-C ---------------------------------------------------------------------------------------


def _probe_pod(cluster: Cluster, ns: str) -> str | None:
    if ns not in cluster.names("namespaces"):
        return None
    pods = cluster.names("pods", ns, selector="aicr.nvidia.com/validator=secure-accelerator-access")
    return next(iter(pods), None)


@pytest.mark.parametrize(
    "existing", [False, True], ids=["run-creates-namespace", "existing-namespace"]
)
def test_ctrl_c_while_a_probe_pod_waits_cleans_up_and_exits_130(
    cluster: Cluster, deployed: Deployed, existing: bool
) -> None:
    """SIGINT while secure-accelerator-access waits on its probe pod (a kwok pod never ends;
    the shipped 10-minute budget is kept) removes the pod (and the namespace the run made)."""
    ns = f"{S.PREFIX}intr"
    S.delete_namespaces(cluster, [ns])
    if existing:
        cluster.kubectl("create", "namespace", ns)
    try:
        before = S.api_state(cluster, [ns])
        others = [
            n for n in ("dra-support", "gang-scheduling", "accelerator-metrics", "ai-service-metrics",
                        "pod-autoscaling", "cluster-autoscaling", "robust-controller")
        ]  # fmt: skip
        skips = [a for n in others for a in ("--skip-check", n)]
        record = deployed.work / f"intr-{existing}.jsonl"
        args = [
            "-r", str(deployed.recipe), "-s", str(S.SNAPSHOT), "--phase", "conformance",
            "-n", ns, *skips, "--record", str(record), "-o", str(deployed.work / "intr.json"),
        ]  # fmt: skip
        proc, pod = S.interrupt_when(cluster, args, lambda: _probe_pod(cluster, ns))
        assert pod, f"the probe pod never appeared\n{proc.stderr}"
        assert proc.returncode == 130, proc.stderr
        assert proc.stderr.rstrip().endswith("aicr-tui: interrupted"), proc.stderr
        after = S.api_state(cluster, [ns])
        assert after == before, f"left behind: {after}"
        assert S.labelled_leftovers(cluster) == []
        assert not record.exists()  # an interrupted run records nothing half-way
        assert not (deployed.work / "intr.json").exists()
    finally:
        S.delete_namespaces(cluster, [ns])


# -- a namespace still being deleted -----------------------------------------------------------


def test_a_run_waits_for_a_terminating_validation_namespace_instead_of_failing_in_it(
    cluster: Cluster, deployed: Deployed
) -> None:
    """The previous run's namespace may still be Terminating (a finalizer, pods with a
    grace period): the run waits until it is gone and creates its own, rather than taking
    it as usable and having every pod it creates refused (403, "being terminated")."""
    ns = f"{S.PREFIX}term"
    S.delete_namespaces(cluster, [ns])
    cluster.kubectl("create", "namespace", ns)
    cluster.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "hold", "namespace": ns, "finalizers": ["aicr-val/hold"]},
        }
    )
    cluster.kubectl("delete", "namespace", ns, "--wait=false")
    cluster.wait_until(
        "namespace Terminating",
        lambda: (
            (cluster.get("namespace", ns) or {}).get("status", {}).get("phase") == "Terminating"
        ),
    )

    def release() -> None:
        time.sleep(6)
        cluster.kubectl(
            "patch", "configmap", "hold", "-n", ns, "--type=merge",
            "-p", '{"metadata":{"finalizers":null}}',
        )  # fmt: skip

    releaser = threading.Thread(target=release)
    releaser.start()
    try:
        out = deployed.work / "term.json"
        args = _base_args(deployed, "--phase", "conformance", "-n", ns, "-o", str(out))
        proc = S.validate(cluster, *args)
        assert proc.returncode == 8, proc.stderr
        tests = _tests(S.ctrf(out))
        probe = tests["secure-accelerator-access"]
        assert "being terminated" not in probe.get("message", ""), probe
        assert "did not finish" in probe["message"], probe
        assert f"cleanup: deleted namespace {ns}" in proc.stderr
        assert ns not in cluster.names("namespaces")
    finally:
        releaser.join()
        S.delete_namespaces(cluster, [ns])


def test_the_prefixed_recipe_keeps_every_check_and_constraint(deployed: Deployed) -> None:
    """The tests validate the shipped sample, only its namespaces moved."""
    shipped = yaml.safe_load(S.TRAINING_RECIPE.read_text(encoding="utf-8"))
    assert deployed.doc["validation"] == shipped["validation"]
    assert all(
        r["namespace"].startswith(S.PREFIX)
        for r in deployed.doc["componentRefs"]
        if r.get("namespace")
    )


# -- isolation: concurrent runs, a killed run, a large cluster (issue 32) -------------------------

LEASE_SECONDS = 15  # aicr_tui.core.validation.isolation.LEASE_SECONDS
PROBE_ONLY = [
    a
    for n in ("dra-support", "gang-scheduling", "accelerator-metrics", "ai-service-metrics",
              "pod-autoscaling", "cluster-autoscaling", "robust-controller", "gpu-operator-health")
    for a in ("--skip-check", n)
]  # fmt: skip


def _probe_run(deployed: Deployed, out: Path, *more: str) -> list[str]:
    """The conformance phase reduced to secure-accelerator-access (a kwok probe pod that
    never ends: it waits its 12 s budget, then is removed)."""
    return _base_args(deployed, "--phase", "conformance", *PROBE_ONLY, "-o", str(out), *more)


def _start(cluster: Cluster, args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        S.cli_argv("validate", "--plain", *args),
        env=S.cli_env(cluster),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _lease_holder(cluster: Cluster, ns: str) -> str | None:
    lease = cluster.get("lease", "aicr-validation-run", ns)
    return None if lease is None else str(lease["spec"].get("holderIdentity") or "") or None


def _validation_namespaces(cluster: Cluster) -> set[str]:
    return cluster.names(
        "namespaces",
        selector="app.kubernetes.io/component=validation,app.kubernetes.io/managed-by=aicr-tui",
    )


def test_two_concurrent_runs_do_not_disturb_each_other(
    cluster: Cluster, deployed: Deployed
) -> None:
    """Run A holds -n NS; run B on the same NS is refused at once with one line and
    changes nothing; run C (no -n) works in a namespace of its own at the same time; A
    ends as it would alone, and nothing of any run is left."""
    ns = f"{S.PREFIX}shared"
    S.delete_namespaces(cluster, [ns])
    a_out, b_out, c_out = (deployed.work / f"conc-{x}.json" for x in "abc")
    run_a = _start(cluster, _probe_run(deployed, a_out, "-n", ns))
    try:
        holder = cluster.wait_until("run A's lease", lambda: _lease_holder(cluster, ns))
        run_c = _start(cluster, _probe_run(deployed, c_out))
        refused = S.validate(cluster, *_probe_run(deployed, b_out, "-n", ns), timeout=120)
        assert refused.returncode == 2, refused.stderr
        last = refused.stderr.strip().splitlines()[-1]
        assert (
            "[CONFLICT]" in last and f"namespace {ns} is in use by validation run {holder}" in last
        )
        assert not b_out.exists()
        assert _lease_holder(cluster, ns) == holder  # B took nothing from A
        a_err = run_a.communicate(timeout=300)[1]
        c_err = run_c.communicate(timeout=300)[1]
    finally:
        for proc in (run_a,):
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert run_a.returncode == 8 and run_c.returncode == 8, (a_err, c_err)
    for out in (a_out, c_out):
        probe = _tests(S.ctrf(out))["secure-accelerator-access"]
        assert probe["extra"]["verdict"] == "not measured", probe
        assert "did not finish" in probe["message"] and "terminated" not in probe["message"]
    c_ns = next(
        line.rsplit(" ", 1)[-1]
        for line in c_err.splitlines()
        if "validation workloads will be created in namespace" in line
    )
    assert c_ns.startswith("aicr-validation-") and c_ns != ns
    assert (
        f"cleanup: deleted namespace {ns}" in a_err
        and f"cleanup: deleted namespace {c_ns}" in c_err
    )
    assert not {ns, c_ns} & cluster.names("namespaces")
    assert S.labelled_leftovers(cluster) == []


def test_a_killed_runs_namespace_is_removed_by_the_next_run(
    cluster: Cluster, deployed: Deployed
) -> None:
    """SIGKILL while the probe pod waits: the namespace and pod stay (nothing could clean
    them); once its lease has expired, the next run removes them at its start and says so."""
    before = _validation_namespaces(cluster)
    killed = _start(cluster, _probe_run(deployed, deployed.work / "killed.json"))
    try:

        def probe_pod() -> tuple[str, str] | None:
            for ns in _validation_namespaces(cluster) - before:
                pod = _probe_pod(cluster, ns)
                if pod:
                    return ns, pod
            return None

        orphan_ns, _pod = cluster.wait_until("the killed run's probe pod", probe_pod)
    finally:
        killed.kill()
        killed.communicate()
    assert orphan_ns in cluster.names("namespaces")  # left by the SIGKILL
    time.sleep(LEASE_SECONDS + 2)
    out = deployed.work / "after-kill.json"
    proc = S.validate(cluster, *_probe_run(deployed, out))
    assert proc.returncode == 8, proc.stderr
    assert f"removed namespace {orphan_ns} left by validation run" in proc.stderr, proc.stderr
    cluster.wait_until(
        "the orphaned namespace gone",
        lambda: orphan_ns not in cluster.names("namespaces"),
        timeout=180,
    )
    own = next(
        line.rsplit(" ", 1)[-1]
        for line in proc.stderr.splitlines()
        if "validation workloads will be created in namespace" in line
    )
    assert own not in cluster.names("namespaces")  # the new run removed its own too
    assert S.labelled_leftovers(cluster) == []


def test_a_killed_runs_namespace_holding_someone_elses_object_is_kept_and_named(
    cluster: Cluster, deployed: Deployed
) -> None:
    """As above, but someone put a ConfigMap of their own in the killed run's namespace:
    the next run keeps that namespace (it holds an object that is not a validation run's)
    and names it, with the object and the command that would remove it."""
    before = _validation_namespaces(cluster)
    killed = _start(cluster, _probe_run(deployed, deployed.work / "killed-foreign.json"))
    try:

        def probe_pod() -> tuple[str, str] | None:
            for ns in _validation_namespaces(cluster) - before:
                pod = _probe_pod(cluster, ns)
                if pod:
                    return ns, pod
            return None

        orphan_ns, _pod = cluster.wait_until("the killed run's probe pod", probe_pod)
    finally:
        killed.kill()
        killed.communicate()
    try:
        cluster.kubectl("create", "configmap", "their-notes", "-n", orphan_ns, "--from-literal=a=b")
        time.sleep(LEASE_SECONDS + 2)
        out = deployed.work / "after-kill-foreign.json"
        proc = S.validate(cluster, *_probe_run(deployed, out))
        assert proc.returncode == 8, proc.stderr
        kept = [line for line in proc.stderr.splitlines() if f"kept namespace {orphan_ns}" in line]
        assert len(kept) == 1, proc.stderr
        assert "ConfigMap/their-notes" in kept[0]
        assert kept[0].endswith(f"kubectl delete namespace {orphan_ns}")
        assert orphan_ns in cluster.names("namespaces")
        assert cluster.get("configmap", "their-notes", orphan_ns) is not None
    finally:
        S.delete_namespaces(cluster, [orphan_ns])
