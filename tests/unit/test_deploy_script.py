"""``deploy.sh`` / ``undeploy.sh`` against stub ``helm`` and ``kubectl`` (issue 16 item 3).

The stubs stand in for the real tools on a real cluster: first on ``PATH``, they record
every call and follow rules the test writes (fail the first N matching calls, sleep, serve
a CRD's kind in API discovery only after N polls, refuse a custom resource whose kind is
not served yet: the CRD-establishment race). A rule applies to ``helm template``, the
preflight's offline render of a chart, only when its match names ``template``. Delays are
0 and time limits 1-2 s, so the whole module runs in a few seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
from functools import cache
from pathlib import Path

import pytest
import yaml

from aicr_tui.core.bundler import write_bundle
from aicr_tui.core.bundler.deployers.config import deployer_config
from tests.unit.test_bundle_support import demo_recipe, plan

STUB = r"""#!/usr/bin/env bash
tool="$(basename "$0")"
# one write per call: the two ends of a pipeline (label | annotate) run at once
rec="$tool"; for a in "$@"; do rec+=$'\x1f'"$a"; done; printf '%s\n' "$rec" >> "$STUB_DIR/calls"
line="$tool $*"
case " $* " in *" -f - "*) { printf '### %s\n' "$*"; cat; } >> "$STUB_DIR/stdin" ;; esac
n=0
while IFS='|' read -r rtool match action arg; do
  n=$((n + 1))
  [ "$rtool" = "$tool" ] || continue
  case "$line" in *"$match"*) ;; *) continue ;; esac
  # a rule about a release's helm calls is not about the preflight's offline render of its
  # chart (`helm template`), unless it names it
  case "$1 $match" in "template "*template*) ;; "template "*) continue ;; esac
  c=$(cat "$STUB_DIR/count.$n" 2>/dev/null || echo 0); c=$((c + 1)); echo "$c" > "$STUB_DIR/count.$n"
  case "$action" in
    fail) if [ "$c" -le "$arg" ]; then echo "stub: $line fails (call $c)" >&2; exit 1; fi ;;
    fail-with) echo "Error from server ($arg): stub" >&2; exit 1 ;;
    sleep) exec sleep "$arg" ;;
    print) cat "$arg"; exit 0 ;;
    print-first) if [ "$c" -le "${arg%%:*}" ]; then cat "${arg#*:}"; exit 0; fi ;;
    serve)
      if [ "$c" -le "$arg" ]; then
        echo 'Error from server (NotFound): the server could not find the requested resource' >&2
        exit 1
      fi
      touch "$STUB_DIR/served"
      echo '{"kind":"APIResourceList","resources":[{"name":"skyhooks","kind":"Skyhook"},{"name":"nicclusterpolicies","kind":"NicClusterPolicy"}]}'
      exit 0 ;;
    needs-served)
      if [ ! -e "$STUB_DIR/served" ]; then
        echo 'error: resource mapping not found for name: "x": no matches for kind "Skyhook"; ensure CRDs are installed first' >&2
        exit 1
      fi ;;
  esac
done < "$STUB_DIR/rules"
if [ "$1 $2" = "get --raw" ]; then
  echo '{"kind":"APIResourceList","resources":[{"name":"skyhooks","kind":"Skyhook"},{"name":"nicclusterpolicies","kind":"NicClusterPolicy"}]}'
fi
exit 0
"""


@cache
def _bundle_plan(readiness: bool = False):
    kw = {"deployer": deployer_config("helm", readiness_hooks=True)} if readiness else {}
    return plan(demo_recipe("aks-azure"), **kw)


@pytest.fixture
def bundle(tmp_path) -> Path:
    out = tmp_path / "bundle"
    write_bundle(_bundle_plan(), out)
    return out


class Stubs:
    def __init__(self, root: Path) -> None:
        self.dir = root / "stubs"
        self.bin = self.dir / "bin"
        self.bin.mkdir(parents=True)
        for tool in ("helm", "kubectl"):
            (self.bin / tool).write_text(STUB)
            (self.bin / tool).chmod(0o755)
        (self.dir / "rules").write_text("")

    def rule(self, tool: str, match: str, action: str, arg: int | str = 0) -> None:
        with (self.dir / "rules").open("a") as f:
            f.write(f"{tool}|{match}|{action}|{arg}\n")

    def calls(self) -> list[list[str]]:
        path = self.dir / "calls"
        if not path.exists():
            return []
        return [ln.split("\x1f") for ln in path.read_text().splitlines()]

    def run(self, script: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        base = {
            "AICR_DEPLOY_TIMEOUT": "20",
            "AICR_DEPLOY_RETRIES": "0",
            "AICR_DEPLOY_RETRY_DELAY": "0",
        }
        full = dict(os.environ, PATH=f"{self.bin}:{os.environ['PATH']}", STUB_DIR=str(self.dir))
        full.update(base)
        full.update(env)
        return subprocess.run(
            ["bash", str(script), *args], env=full, capture_output=True, text=True, timeout=60
        )


@pytest.fixture
def stubs(tmp_path) -> Stubs:
    return Stubs(tmp_path)


def _deleted(stubs: Stubs) -> str:
    """The documents the scripts piped to ``kubectl delete -f -`` (the stub keeps every
    ``-f -`` stdin under a ``### <args>`` header)."""
    blocks = (stubs.dir / "stdin").read_text().split("### ")
    return "".join(b.split("\n", 1)[1] for b in blocks if b.startswith("delete "))


def _bundle_id(bundle: Path) -> str:
    """The bundle's digest, as deploy.sh marks its objects with it."""
    script = (bundle / "deploy.sh").read_text()
    return script.split("\nBUNDLE_DIGEST=", 1)[1].split("\n", 1)[0]


def _releases_are_ours(stubs: Stubs, tmp_path: Path) -> None:
    """``helm list`` answers that every release is there, deployed, its record ours."""
    (tmp_path / "list-q").write_text("r\n")
    (tmp_path / "list-json").write_text('[{"name":"r","status":"deployed"}]\n')
    stubs.rule("helm", " -q", "print", str(tmp_path / "list-q"))
    stubs.rule("helm", "list --namespace", "print", str(tmp_path / "list-json"))


def _upgrades(calls: list[list[str]]) -> list[str]:
    """Release names of the helm upgrade calls, in order (the word after ``--``)."""
    return [c[c.index("--") + 1] for c in calls if c[:2] == ["helm", "upgrade"]]


def test_clean_deploy_installs_everything_in_order_and_summarises(bundle, stubs) -> None:
    proc = stubs.run(bundle / "deploy.sh", AICR_DEPLOY_TIMEOUT="600")
    assert proc.returncode == 0, proc.stderr
    order = _bundle_plan().recipe.deploymentOrder
    charted = [c.name for c in _bundle_plan().components if c.has_chart]
    assert _upgrades(stubs.calls()) == charted
    first = next(c for c in stubs.calls() if c[:2] == ["helm", "upgrade"])
    assert first[first.index("--wait") + 1 : first.index("--wait") + 3] == ["--timeout", "600s"]
    summary = proc.stdout[proc.stdout.index("Summary (deploy.sh):") :]
    assert [ln.split("]")[1].split(":")[0].strip() for ln in summary.splitlines()[1:-1]] == order
    assert all(ln.endswith(": installed") for ln in summary.splitlines()[1:-1])
    assert proc.stdout.rstrip().endswith("bundle deployed")


def test_a_failing_command_is_retried_with_backoff_and_succeeds(bundle, stubs) -> None:
    stubs.rule("helm", "-- gpu-operator gpu-operator", "fail", 2)
    proc = stubs.run(bundle / "deploy.sh", AICR_DEPLOY_RETRIES="3")
    assert proc.returncode == 0, proc.stderr
    assert _upgrades(stubs.calls()).count("gpu-operator") == 3
    assert "RETRY 1/3 in 0s" in proc.stderr and "RETRY 2/3 in 0s" in proc.stderr
    assert "RETRY 3/3" not in proc.stderr
    assert "[009] gpu-operator: installed" in proc.stdout


def test_retry_delay_doubles(bundle, stubs) -> None:
    stubs.rule("helm", "-- cert-manager cert-manager", "fail", 2)
    proc = stubs.run(bundle / "deploy.sh", AICR_DEPLOY_RETRIES="2", AICR_DEPLOY_RETRY_DELAY="1")
    assert proc.returncode == 0, proc.stderr
    assert "RETRY 1/2 in 1s" in proc.stderr and "RETRY 2/2 in 2s" in proc.stderr


def test_retries_exhausted_stop_the_deploy_with_a_resume_hint(bundle, stubs) -> None:
    stubs.rule("helm", "-- network-operator network-operator", "fail", 99)
    proc = stubs.run(bundle / "deploy.sh", AICR_DEPLOY_RETRIES="1")
    assert proc.returncode == 1
    assert _upgrades(stubs.calls())[-2:] == ["network-operator", "network-operator"]
    assert "nodewright-operator" not in _upgrades(stubs.calls())
    assert "[006] network-operator: FAILED (exit 1)" in proc.stdout
    assert "resume with:" in proc.stderr and "--from 006" in proc.stderr


def test_a_timeout_is_reported(bundle, stubs) -> None:
    stubs.rule("helm", "-- nfd ", "sleep", 30)
    proc = stubs.run(bundle / "deploy.sh", AICR_DEPLOY_TIMEOUT="1")
    assert proc.returncode == 1
    assert (
        "TIMEOUT: no result within 1s" in proc.stderr
        and "-- nfd node-feature-discovery" in proc.stderr
    )
    assert "[001] nfd: FAILED (timed out)" in proc.stdout
    assert "network-operator" not in _upgrades(stubs.calls())


def test_the_crd_race_is_waited_out_before_the_custom_resource(bundle, stubs) -> None:
    """Skyhook's CRD comes with nodewright-operator; the Skyhook CR in
    nodewright-customizations is applied only once discovery serves the kind."""
    stubs.rule("kubectl", "get --raw /apis/skyhook.nvidia.com/v1alpha1", "serve", 3)
    # the manifest is read (and marked as this bundle's) by `kubectl label --local -f FILE`
    stubs.rule("kubectl", "-f 008-nodewright-customizations/manifests/tuning.yaml", "needs-served")
    proc = stubs.run(bundle / "deploy.sh")
    assert proc.returncode == 0, proc.stderr
    calls = stubs.calls()
    polls = [
        i
        for i, c in enumerate(calls)
        if c[1:3] == ["get", "--raw"] and "skyhook.nvidia.com" in c[3]
    ]
    apply = next(
        i for i, c in enumerate(calls) if "008-nodewright-customizations/manifests/tuning.yaml" in c
    )
    assert len(polls) == 4 and polls[-1] < apply
    assert proc.stderr.count("CRD not Established yet") == 3


def test_a_crd_that_never_establishes_times_out(bundle, stubs) -> None:
    stubs.rule("kubectl", "get --raw /apis/skyhook.nvidia.com/v1alpha1", "serve", 10_000)
    proc = stubs.run(bundle / "deploy.sh", AICR_DEPLOY_TIMEOUT="1")
    assert proc.returncode == 1
    assert "TIMEOUT: kind Skyhook (skyhook.nvidia.com/v1alpha1) not served within 1s" in proc.stderr
    assert "[008] nodewright-customizations: FAILED (timed out)" in proc.stdout
    assert not any("tuning.yaml" in " ".join(c) for c in stubs.calls())


def test_best_effort_finishes_and_reports_failures_with_a_nonzero_exit(bundle, stubs) -> None:
    stubs.rule("helm", "-- nfd ", "fail", 99)
    stubs.rule("kubectl", "-f 009-gpu-operator/manifests", "fail", 99)
    proc = stubs.run(bundle / "deploy.sh", "--best-effort", AICR_DEPLOY_RETRIES="1")
    assert proc.returncode == 1
    assert _upgrades(stubs.calls())[-1] == "prometheus-adapter"  # carried on to the end
    assert "[001] nfd: FAILED (exit 1)" in proc.stdout
    assert "[009] gpu-operator: FAILED (exit 1)" in proc.stdout
    assert "[013] prometheus-adapter: installed" in proc.stdout
    assert "2 step(s) failed: 001 009" in proc.stderr
    assert "bundle deployed" not in proc.stdout


def test_resume_from_a_step(bundle, stubs) -> None:
    proc = stubs.run(bundle / "deploy.sh", "--from", "009")
    assert proc.returncode == 0, proc.stderr
    assert _upgrades(stubs.calls()) == [
        "gpu-operator", "kai-scheduler", "nvidia-dra-driver-gpu", "nvsentinel", "prometheus-adapter",
    ]  # fmt: skip
    assert "[003] cert-manager: skipped (--from 009)" in proc.stdout
    for bad in ("999", "abc", "7x"):
        proc = stubs.run(bundle / "deploy.sh", f"--from={bad}")
        assert proc.returncode == 2 and "is not a step of this bundle" in proc.stderr


def test_dry_run_prints_every_command_and_runs_none(bundle, stubs) -> None:
    proc = stubs.run(bundle / "deploy.sh", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert stubs.calls() == []
    printed = [ln for ln in proc.stdout.splitlines() if ln.startswith("+ ")]
    ups = [ln for ln in printed if ln.startswith("+ helm upgrade --install")]
    assert len(ups) == sum(c.has_chart for c in _bundle_plan().components)
    assert "+ kubectl get --raw /apis/skyhook.nvidia.com/v1alpha1" in printed
    assert "+ kubectl create -f -" in printed
    assert "[003] cert-manager: dry run" in proc.stdout


def test_the_namespace_of_a_manifest_only_step_goes_in_as_a_document(bundle, stubs) -> None:
    """``kubectl create namespace ... -- skyhook`` exits 1 on a real kubectl ("exactly one
    NAME is required, got 0": it reads NAME only before a ``--``; found by
    tests/cluster/test_deploy_helm.py), so the step pipes a Namespace document to
    ``kubectl create -f -`` instead, the name a JSON string that can never read as an
    option, labelled as made by this bundle."""
    script = (bundle / "deploy.sh").read_text()
    assert "kubectl create namespace" not in script
    proc = stubs.run(bundle / "deploy.sh")
    assert proc.returncode == 0, proc.stderr
    line = next(
        ln for ln in script.splitlines() if '"name": "skyhook"' in ln and "ensure_namespace" in ln
    )
    piped = subprocess.run(
        ["bash", "-c", line.replace("ensure_namespace", "printf '%s\\n'", 1)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    identity = _bundle_id(bundle)
    assert json.loads(piped.stdout) == {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {
            "name": "skyhook",
            "labels": {"app.kubernetes.io/created-by": "aicr-tui", "aicr-tui/bundle": identity[:32]},
            "annotations": {"aicr-tui/bundle-digest": identity},
        },
    }  # fmt: skip
    assert ["kubectl", "create", "-f", "-"] in stubs.calls()


def test_an_existing_namespace_is_used_as_it_is_and_kept_by_undeploy(
    bundle, stubs, tmp_path
) -> None:
    """A namespace that exists before deploy.sh (``monitoring`` with someone else's objects)
    answers AlreadyExists to the marked create: deploy carries on without relabelling it
    (it lacks the aicr-tui label), and undeploy.sh keeps it; the namespaces the bundle made
    (this bundle's label) go."""
    stubs.rule("kubectl", "create -f -", "fail-with", "AlreadyExists")
    proc = stubs.run(bundle / "deploy.sh")
    assert proc.returncode == 0, proc.stderr
    assert "[004] kube-prometheus-stack: installed" in proc.stdout
    assert not any(c[1] == "label" and "--local" not in c for c in stubs.calls())
    ours = tmp_path / "ours"
    ours.write_text(f"aicr-tui {_bundle_id(bundle)[:32]}\n")
    (tmp_path / "theirs").write_text("<none> <none>\n")
    # monitoring exists without the label; every other namespace carries this bundle's
    stubs.rule(
        "kubectl", "metadata.name=monitoring --no-headers", "print", str(tmp_path / "theirs")
    )
    stubs.rule("kubectl", "get namespaces --field-selector", "print", str(ours))
    (stubs.dir / "stdin").unlink()  # what deploy.sh piped; undeploy's deletions from here on
    proc = stubs.run(bundle / "undeploy.sh")
    assert proc.returncode == 0, proc.stderr
    assert "keeping namespace monitoring: this bundle did not create it" in proc.stdout
    deleted = _deleted(stubs)
    gone = {
        json.loads(ln)["metadata"]["name"] for ln in deleted.splitlines() if '"Namespace"' in ln
    }
    comps = _bundle_plan().components
    assert gone == {c.namespace for c in comps} - {"monitoring"}


def test_no_wait_drops_helm_wait(bundle, stubs) -> None:
    proc = stubs.run(bundle / "deploy.sh", "--no-wait")
    assert proc.returncode == 0, proc.stderr
    ups = [c for c in stubs.calls() if c[:2] == ["helm", "upgrade"]]
    assert ups and all("--wait" not in c and "--timeout" not in c for c in ups)


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (("--bogus",), {}, "unknown option"),
        (("--from",), {}, "--from needs a step number"),
        ((), {"AICR_DEPLOY_RETRIES": "three"}, "AICR_DEPLOY_RETRIES must be a whole number"),
        ((), {"AICR_DEPLOY_TIMEOUT": "-1"}, "AICR_DEPLOY_TIMEOUT must be a whole number"),
        ((), {"AICR_DEPLOY_RETRY_DELAY": "1.5"}, "AICR_DEPLOY_RETRY_DELAY must be a whole number"),
    ],
)
def test_bad_arguments_exit_2_before_any_call(bundle, stubs, args, env, needle) -> None:
    proc = stubs.run(bundle / "deploy.sh", *args, **env)
    assert proc.returncode == 2 and needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert stubs.calls() == []


def test_help_documents_the_flags_and_settings(bundle, stubs) -> None:
    proc = stubs.run(bundle / "deploy.sh", "--help")
    assert proc.returncode == 0
    for word in ("--no-wait", "--best-effort", "--from NNN", "--dry-run", "AICR_DEPLOY_TIMEOUT",
                 "AICR_DEPLOY_RETRIES", "AICR_DEPLOY_RETRY_DELAY"):  # fmt: skip
        assert word in proc.stdout
    readme = (bundle / "README.md").read_text()
    for word in (
        "AICR_DEPLOY_TIMEOUT",
        "AICR_DEPLOY_RETRIES",
        "AICR_DEPLOY_RETRY_DELAY",
        "--best-effort",
        "--from",
    ):
        assert word in readme


def test_undeploy_runs_in_reverse_with_best_effort(bundle, stubs, tmp_path) -> None:
    stubs.rule("helm", "uninstall --namespace gpu-operator", "fail", 99)
    _releases_are_ours(stubs, tmp_path)
    proc = stubs.run(bundle / "undeploy.sh", "--best-effort")
    assert proc.returncode == 1
    removed = [c[-1] for c in stubs.calls() if c[:2] == ["helm", "uninstall"]]
    charted = [c.name for c in _bundle_plan().components if c.has_chart]
    assert removed == list(reversed(charted))
    assert "[009] gpu-operator: FAILED (exit 1)" in proc.stdout
    assert "[003] cert-manager: removed" in proc.stdout
    resumed = stubs.run(bundle / "undeploy.sh", "--from", "003")
    assert resumed.returncode == 0, resumed.stderr
    assert "[013] prometheus-adapter: skipped (--from 003)" in resumed.stdout
    assert "[003] cert-manager: removed" in resumed.stdout


def test_undeploy_keeps_crds_unless_asked_and_never_with_others_custom_resources(
    bundle, stubs, tmp_path
) -> None:
    """Issue 32: undeploy.sh deleted every chart's CRDs (``helm show crds``), also CRDs that
    existed before and every other team's custom resources in them. Now it never deletes a
    CRD by default: it lists the CRDs marked as this bundle's with the custom resources in
    them; ``--delete-crds`` deletes one only when no custom resource this bundle did not
    create remains, ``--destroy-custom-resources`` accepts that loss by name. A release whose
    record is not this bundle's is not uninstalled."""
    identity = _bundle_id(bundle)[:32]
    (tmp_path / "crds").write_text("queues.scheduling.run.ai queues scheduling.run.ai\n")
    stubs.rule("kubectl", f"get customresourcedefinitions -l aicr-tui/bundle={identity}", "print",
               str(tmp_path / "crds"))  # fmt: skip
    (tmp_path / "crs").write_text(f"team-a theirs <none>\nkai-scheduler ours {identity}\n")
    stubs.rule(
        "kubectl", "get queues.scheduling.run.ai --all-namespaces", "print", str(tmp_path / "crs")
    )
    proc = stubs.run(bundle / "undeploy.sh")
    assert proc.returncode == 0, proc.stderr
    assert (
        "keeping CRD queues.scheduling.run.ai (created by this bundle): 2 custom resource(s) in "
        "it, not ours: team-a/theirs" in proc.stdout
    )
    assert "--delete-crds" in proc.stdout
    assert not [c for c in stubs.calls() if c[:2] == ["helm", "uninstall"]]  # none is ours
    assert not any("customresourcedefinition/" in " ".join(c) for c in stubs.calls())
    assert not [c for c in stubs.calls() if c[:3] == ["helm", "show", "crds"]]
    proc = stubs.run(bundle / "undeploy.sh", "--delete-crds")
    assert proc.returncode == 1
    assert (
        "keeping CRD queues.scheduling.run.ai: custom resources this bundle did not create remain: team-a/theirs"
        in proc.stderr
    )
    assert not any("customresourcedefinition/" in " ".join(c) for c in stubs.calls())
    proc = stubs.run(bundle / "undeploy.sh", "--destroy-custom-resources")
    assert proc.returncode == 2 and "goes with --delete-crds" in proc.stderr
    proc = stubs.run(bundle / "undeploy.sh", "--delete-crds", "--destroy-custom-resources")
    assert proc.returncode == 0, proc.stderr
    assert [c for c in stubs.calls() if "customresourcedefinition/queues.scheduling.run.ai" in c] == [
        ["kubectl", "delete", "--ignore-not-found", "--wait=false",
         "customresourcedefinition/queues.scheduling.run.ai"]
    ]  # fmt: skip


def test_custom_resources_made_by_this_bundles_releases_are_ours(bundle, stubs, tmp_path) -> None:
    """Found on the cluster tier: kai-scheduler's chart makes its default Queue and
    SchedulingShard with ``helm.sh/resource-policy: keep``, so they outlive ``helm
    uninstall`` without the bundle's label, and ``--delete-crds`` kept the CRDs for "custom
    resources this bundle did not create". A custom resource whose Helm annotations name one
    of this bundle's releases is the bundle's; one made by a release of the same name in
    another namespace is not."""
    identity = _bundle_id(bundle)[:32]
    (tmp_path / "crds").write_text("queues.scheduling.run.ai queues scheduling.run.ai\n")
    stubs.rule("kubectl", f"get customresourcedefinitions -l aicr-tui/bundle={identity}", "print",
               str(tmp_path / "crds"))  # fmt: skip
    (tmp_path / "crs").write_text("<none> default <none> kai-scheduler kai-scheduler\n")
    stubs.rule(
        "kubectl", "get queues.scheduling.run.ai --all-namespaces", "print", str(tmp_path / "crs")
    )
    proc = stubs.run(bundle / "undeploy.sh", "--delete-crds")
    assert proc.returncode == 0, proc.stderr
    assert (
        "deleting CRD queues.scheduling.run.ai (created by this bundle; 1 custom resource(s)"
        in proc.stdout
    )
    assert ["kubectl", "delete", "--ignore-not-found", "--wait=false",
            "customresourcedefinition/queues.scheduling.run.ai"] in stubs.calls()  # fmt: skip
    # the same release name in a namespace of another team: not this bundle's release
    (tmp_path / "crs").write_text("<none> default <none> team-a kai-scheduler\n")
    proc = stubs.run(bundle / "undeploy.sh", "--delete-crds")
    assert proc.returncode == 1
    assert "custom resources this bundle did not create remain: default" in proc.stderr


def test_readiness_hooks_install_after_their_component(tmp_path, stubs) -> None:
    p = _bundle_plan(readiness=True)
    out = tmp_path / "ready"
    write_bundle(p, out)
    # cert-manager follows kube-prometheus-stack (issue 13); its readiness folder follows it
    folders = sorted(d.name for d in out.iterdir() if d.is_dir())
    cm = folders.index(next(f for f in folders if f.endswith("-cert-manager")))
    assert folders[cm + 1].endswith("-cert-manager-readiness")
    assert (out / folders[cm + 1] / "Chart.yaml").is_file()
    proc = stubs.run(out / "deploy.sh")
    assert proc.returncode == 0, proc.stderr
    ups = _upgrades(stubs.calls())
    assert (
        ups.index("gpu-operator") < ups.index("gpu-operator-readiness") < ups.index("kai-scheduler")
    )
    info = yaml.safe_load((out / "bundle-info.yaml").read_text())
    path = next(
        r["path"] for r in info["layout"]["releases"] if r["name"] == "gpu-operator-readiness"
    )
    ready = next(
        c
        for c in stubs.calls()
        if c[:2] == ["helm", "upgrade"] and c[-2] == "gpu-operator-readiness"
    )
    assert ready[-1] == f"./{path}"
    assert ready[ready.index("--namespace") + 1] == "gpu-operator"


def _write(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text)
    return str(tmp_path / name)


def test_a_release_left_pending_is_recovered_before_the_step_runs_again(
    bundle, stubs, tmp_path
) -> None:
    """Issue 32: after a kill during `helm upgrade --install`, every rerun failed with
    "another operation (install/upgrade/rollback) is in progress". deploy.sh now uninstalls a
    first install that never completed and rolls an upgrade back to the last deployed
    revision, saying so, before it runs the step again."""
    pending = _write(
        tmp_path, "pending-install", '[{"name":"cert-manager","status":"pending-install"}]'
    )
    stubs.rule("helm", "--filter ^cert-manager$ -o json", "print-first", f"2:{pending}")
    upgrading = _write(tmp_path, "pending-upgrade", '[{"name":"nfd","status":"pending-upgrade"}]')
    stubs.rule("helm", "--filter ^nfd$ -o json", "print-first", f"2:{upgrading}")
    history = _write(
        tmp_path, "history",
        '[{"revision":2,"updated":"t","status":"superseded","chart":"c","app_version":"1","description":"d"},'
        '{"revision":3,"updated":"t","status":"deployed","chart":"c","app_version":"1","description":"d"},'
        '{"revision":4,"updated":"t","status":"pending-upgrade","chart":"c","app_version":"1","description":"d"}]',
    )  # fmt: skip
    stubs.rule("helm", "history --namespace node-feature-discovery", "print", history)
    _releases_are_ours(stubs, tmp_path)  # after the rules above: the first match answers
    proc = stubs.run(bundle / "deploy.sh")
    assert proc.returncode == 0, proc.stderr
    assert (
        "recovering Helm release cert-manager/cert-manager: a first install never completed "
        "(pending-install); uninstalling it, then installing again" in proc.stdout
    )
    assert (
        "recovering Helm release node-feature-discovery/nfd: left pending-upgrade by an "
        "interrupted run; rolling back to revision 3" in proc.stdout
    )
    calls = stubs.calls()
    uninstall = calls.index(
        ["helm", "uninstall", "--namespace", "cert-manager", "--no-hooks", "--ignore-not-found",
         "--", "cert-manager"]
    )  # fmt: skip
    upgrade = next(
        i for i, c in enumerate(calls) if c[:2] == ["helm", "upgrade"] and c[-2] == "cert-manager"
    )
    assert uninstall < upgrade
    rollback = next(c for c in calls if c[:2] == ["helm", "rollback"])
    assert rollback[-3:] == ["--", "nfd", "3"]


def test_a_release_of_someone_else_is_refused_before_anything_changes(
    bundle, stubs, tmp_path
) -> None:
    """A release named like one of the bundle's whose record is not aicr-tui's: one REFUSED
    line, exit 1, no install, no upgrade; --adopt takes it over."""
    theirs = _write(tmp_path, "theirs", '[{"name":"gpu-operator","status":"deployed"}]')
    stubs.rule("helm", "--filter ^gpu-operator$ -o json", "print", theirs)
    proc = stubs.run(bundle / "deploy.sh")
    assert proc.returncode == 1
    refused = [ln for ln in proc.stderr.splitlines() if ln.startswith("REFUSED")]
    assert refused == [
        "REFUSED: Helm release gpu-operator/gpu-operator exists and is not ours (its release "
        "record has no app.kubernetes.io/created-by=aicr-tui label); leave it, remove it, or "
        "take it over with --adopt release/gpu-operator/gpu-operator"
    ]
    # helm only read: the releases, and each chart rendered offline (the preflight's check
    # of what the charts template)
    assert not [c for c in stubs.calls() if c[0] == "helm" and c[1] not in ("list", "template")]
    assert not [
        c for c in stubs.calls() if c[0] == "kubectl" and c[1] in ("create", "apply", "patch")
    ]
    proc = stubs.run(bundle / "deploy.sh", "--adopt", "release/gpu-operator/gpu-operator")
    assert proc.returncode == 0, proc.stderr
    proc = stubs.run(bundle / "deploy.sh", "--adopt", "gpu-operator")
    assert proc.returncode == 2 and "--adopt needs KIND/NAMESPACE/NAME" in proc.stderr


def test_an_object_a_chart_templates_that_is_someone_elses_is_refused_before_any_step(
    bundle, stubs, tmp_path
) -> None:
    """The preflight renders each chart offline (``helm template``) and looks its objects up:
    one that exists without Helm's ownership marks for this release (label
    app.kubernetes.io/managed-by=Helm, annotations naming the release and its namespace) is
    refused with one line naming it and its owner, before any step (Helm itself refused
    only at the step, after the earlier steps had run); one this release owns passes;
    ``--adopt`` takes it over with helm's --take-ownership, for that release alone."""
    rendered = _write(
        tmp_path, "rendered.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: gpu-operator\n"
        "---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: gpu-operator\n",
    )  # fmt: skip
    objects = _write(
        tmp_path, "objects.json",
        '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"gpu-operator"}}\n'
        '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"gpu-operator"}}\n'
        '{"apiVersion":"nvidia.com/v1","kind":"ClusterPolicy","metadata":{"name":"cluster-policy"}}',
    )  # fmt: skip
    rows = _write(
        tmp_path, "rows",
        "ClusterRole <none> gpu-operator <none> <none> <none> kubectl-client-side-apply\n"
        "ServiceAccount gpu-operator gpu-operator Helm gpu-operator gpu-operator helm\n",
    )  # fmt: skip
    served = _write(
        tmp_path, "served",
        "clusterroles                                   rbac.authorization.k8s.io/v1  false  ClusterRole\n"
        "serviceaccounts                    sa          v1                            true   ServiceAccount\n",
    )  # fmt: skip
    stubs.rule("kubectl", "api-resources --no-headers", "print", served)
    stubs.rule("helm", "template --namespace gpu-operator ", "print", rendered)
    stubs.rule("kubectl", "templated.yaml", "print", objects)
    # (only gpu-operator's chart renders objects here, so only its are looked up)
    stubs.rule("kubectl", "custom-columns=KIND:.kind,NS:", "print", rows)
    proc = stubs.run(bundle / "deploy.sh")
    assert proc.returncode == 1, proc.stderr
    refused = [ln for ln in proc.stderr.splitlines() if ln.startswith("REFUSED")]
    assert refused == [
        "REFUSED: ClusterRole/gpu-operator exists and is not Helm release "
        "gpu-operator/gpu-operator's (owner: field manager kubectl-client-side-apply); "
        "deploy.sh changes only what aicr-tui created: leave it, remove it, or take it over "
        "with --adopt ClusterRole/gpu-operator"
    ]
    assert "deploy.sh: nothing was changed" in proc.stderr
    # a kind the server does not serve yet (its CRD comes with a step) is not looked up
    looked_up = [
        b for b in (stubs.dir / "stdin").read_text().split("### ") if "columns=KIND:.kind" in b
    ]  # fmt: skip
    assert len(looked_up) == 1 and '"kind":"ServiceAccount"' in looked_up[0], looked_up
    assert "ClusterPolicy" not in looked_up[0]
    template = next(
        c for c in stubs.calls() if c[:2] == ["helm", "template"] and "gpu-operator" in c
    )
    assert {"--skip-crds", "--no-hooks", "--skip-tests"} <= set(template)
    assert template[template.index("--") + 1 :][0] == "gpu-operator"
    assert not [c for c in stubs.calls() if c[0] == "helm" and c[1] not in ("list", "template")]
    assert not [
        c for c in stubs.calls() if c[0] == "kubectl" and c[1] in ("create", "apply", "patch")
    ]

    (stubs.dir / "calls").unlink()
    proc = stubs.run(bundle / "deploy.sh", "--adopt", "ClusterRole/gpu-operator")
    assert proc.returncode == 0, proc.stderr
    taking = [
        c[c.index("--") + 1] for c in stubs.calls()
        if c[:2] == ["helm", "upgrade"] and "--take-ownership" in c
    ]  # fmt: skip
    assert taking == ["gpu-operator"]


def test_a_chart_that_does_not_render_offline_is_said_to_be_unchecked(bundle, stubs) -> None:
    """The preflight cannot measure a chart it cannot render: it says so (a line naming the
    release and helm's error), never counts it as checked, and the deploy goes on (Helm
    still checks that chart's objects at its step)."""
    stubs.rule("helm", "template --namespace gpu-operator ", "fail", 1)
    proc = stubs.run(bundle / "deploy.sh")
    assert proc.returncode == 0, proc.stderr
    unchecked = [ln for ln in proc.stdout.splitlines() if ln.startswith("not checked")]
    assert len(unchecked) == 1, proc.stdout
    assert unchecked[0].startswith(
        "not checked before the first step: Helm release gpu-operator/gpu-operator: its chart "
        "does not render offline (stub: helm template --namespace gpu-operator --skip-crds "
        "--no-hooks --skip-tests --version "
    ), unchecked
    assert unchecked[0].endswith(
        "-- gpu-operator gpu-operator fails (call 1) ); Helm checks its objects at its step"
    ), unchecked
    assert "gpu-operator" in _upgrades(stubs.calls())


def test_the_unchecked_line_carries_no_control_characters_from_helm(bundle, stubs) -> None:
    """helm's error may quote the chart: its control characters (an ESC sequence here) never
    reach the terminal."""
    stubs.rule("helm", "template --namespace gpu-operator ", "fail-with", "\x1b[2J\x07")
    proc = stubs.run(bundle / "deploy.sh")
    assert proc.returncode == 0, proc.stderr
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("not checked")]
    assert "(Error from server ([2J): stub );" in line, line
    assert not any(ord(ch) < 32 or ord(ch) == 127 for ch in line), repr(line)


def test_switching_bundles_lists_what_is_left_and_prune_removes_only_that(
    bundle, stubs, tmp_path
) -> None:
    """The state record names an earlier bundle whose inventory holds a release and a CRD
    this bundle does not: deploy.sh lists them and prints the --prune command; with --prune
    it uninstalls that release (its record is aicr-tui's) and never touches the CRD."""
    _releases_are_ours(stubs, tmp_path)
    old = _write(tmp_path, "old", "0123456789abcdef0123456789abcdef")
    stubs.rule("kubectl", 'index .data "bundle"', "print", old)
    crd = '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"olds.example.com"}}'
    inventory = _write(
        tmp_path, "inventory",
        f"release monitoring kube-prometheus-stack\nrelease kgateway-system kgateway\nobject {crd}\n",
    )  # fmt: skip
    stubs.rule("kubectl", 'index .data "inventory"', "print", inventory)
    proc = stubs.run(bundle / "deploy.sh")
    assert proc.returncode == 0, proc.stderr
    assert (
        "switching bundles: the earlier bundle 0123456789abcdef0123456789abcdef deployed"
        in proc.stdout
    )
    listed = proc.stdout.split("does not contain:\n", 1)[1].split("\n==>", 1)[0]
    assert listed.split("\n")[:2] == ["  release kgateway-system kgateway", f"  object {crd}"]
    assert f"{bundle / 'deploy.sh'} --prune" in proc.stderr
    assert not [c for c in stubs.calls() if c[:2] == ["helm", "uninstall"]]
    proc = stubs.run(bundle / "deploy.sh", "--prune")
    assert proc.returncode == 0, proc.stderr
    assert "pruning Helm release kgateway-system/kgateway" in proc.stdout
    assert [c for c in stubs.calls() if c[:2] == ["helm", "uninstall"]] == [
        [
            "helm",
            "uninstall",
            "--namespace",
            "kgateway-system",
            "--ignore-not-found",
            "--",
            "kgateway",
        ]
    ]
    # the CRD is only ever named in the state record's list of what is left, never acted on
    assert not any(
        "olds.example.com" in " ".join(c)
        for c in stubs.calls()
        if c[:4] != ["kubectl", "patch", "configmap", "aicr-tui-state"]
    )


def test_what_a_switch_left_is_recorded_and_a_later_run_still_prunes_it(
    bundle, stubs, tmp_path
) -> None:
    """Found while writing the cluster switch case: the first run after a switch records the new bundle, so
    the --prune its warning prints found nothing to prune on the second run (the earlier
    inventory was gone from the record). What the switch left is now kept in the record
    (data.left, each line with the bundle that deployed it) until --prune removes it."""
    _releases_are_ours(stubs, tmp_path)
    old = "0123456789abcdef0123456789abcdef"
    crd = '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"olds.example.com"}}'
    recorded = _write(tmp_path, "recorded", old)
    stubs.rule("kubectl", 'index .data "bundle"', "print", recorded)
    stubs.rule(
        "kubectl", 'index .data "inventory"', "print",
        _write(tmp_path, "inventory", f"release kgateway-system kgateway\nobject {crd}\n"),
    )  # fmt: skip
    proc = stubs.run(bundle / "deploy.sh")
    assert proc.returncode == 0, proc.stderr
    patches = [c for c in stubs.calls() if c[:3] == ["kubectl", "patch", "configmap"]]
    left = [json.loads(c[-1])["data"]["left"] for c in patches if '"left"' in c[-1]]
    assert left == [f"{old} release kgateway-system kgateway\n{old} object {crd}"], patches

    # the second run: the record names this bundle, and what the first run left
    this = _bundle_id(bundle)[:32]
    Path(recorded).write_text(this)
    stubs.rule("kubectl", 'index .data "left"', "print", _write(tmp_path, "left", left[0]))
    proc = stubs.run(bundle / "deploy.sh")
    assert proc.returncode == 0, proc.stderr
    assert f"switching bundles: the earlier bundle {old} deployed" in proc.stdout
    assert "  release kgateway-system kgateway" in proc.stdout.splitlines()
    assert f"{bundle / 'deploy.sh'} --prune" in proc.stderr
    proc = stubs.run(bundle / "deploy.sh", "--prune")
    assert proc.returncode == 0, proc.stderr
    assert "pruning Helm release kgateway-system/kgateway" in proc.stdout
    assert ["helm", "uninstall", "--namespace", "kgateway-system", "--ignore-not-found", "--",
            "kgateway"] in stubs.calls()  # fmt: skip
    assert not any("olds.example.com" in " ".join(c) for c in stubs.calls() if c[1] == "delete")
    # and once pruned, the record forgets it
    assert ["kubectl", "patch", "configmap", "aicr-tui-state", "--namespace", "aicr-tui",
            "--type", "merge", "-p", '{"data":{"left":null}}'] in stubs.calls()  # fmt: skip


def test_a_release_whose_chart_templates_crds_is_uninstalled_only_with_delete_crds(
    bundle, stubs, tmp_path
) -> None:
    """Found on the real server: helm uninstall deletes the CRDs a chart templates unless the
    manifest Helm stored says helm.sh/resource-policy: keep (agentgateway-crds' went with
    --prune, and every custom resource in them). Such a release is kept by default, with one
    line naming its CRDs; --delete-crds uninstalls it, unless someone else's custom resources
    are in them (then --destroy-custom-resources is needed); a CRD whose chart says keep
    does not hold the release back."""
    _releases_are_ours(stubs, tmp_path)
    stubs.rule(
        "kubectl", "helm.sh/resource-policy", "print",
        _write(tmp_path, "crds", "gpu-operator/gpu-operator - nvidiadrivers.nvidia.com\n"
               "gpu-operator/gpu-operator keep clusterpolicies.nvidia.com\n"
               "-/- - unrelated.example.com\n"),
    )  # fmt: skip
    uninstalls = lambda: [c for c in stubs.calls() if c[:2] == ["helm", "uninstall"]]  # noqa: E731
    proc = stubs.run(bundle / "undeploy.sh")
    assert proc.returncode == 0, proc.stderr
    assert (
        "keeping Helm release gpu-operator/gpu-operator: helm uninstall would delete the CRDs "
        "its chart templates (nvidiadrivers.nvidia.com) and every custom resource in them"
        in proc.stdout
    )
    assert not [c for c in uninstalls() if c[-1] == "gpu-operator"]
    assert [c for c in uninstalls() if c[-1] == "nfd"], "the other releases go"
    # both of the release's CRDs carry this bundle's label (--delete-crds finds the kept one)
    label = next(c for c in stubs.calls() if c[:3] == ["kubectl", "label", "--overwrite"])
    assert {"customresourcedefinition/nvidiadrivers.nvidia.com",
            "customresourcedefinition/clusterpolicies.nvidia.com"} <= set(label)  # fmt: skip
    assert not any("unrelated.example.com" in " ".join(c) for c in stubs.calls())

    proc = stubs.run(bundle / "undeploy.sh", "--delete-crds")
    assert proc.returncode == 0, proc.stderr
    assert [c for c in uninstalls() if c[-1] == "gpu-operator"]

    # someone else's custom resource in that CRD holds the release back, exit 1
    before = len(uninstalls())
    stubs.rule(
        "kubectl", "get nvidiadrivers.nvidia.com", "print",
        _write(tmp_path, "crs", "<none> theirs <none> <none> <none>\n"),
    )  # fmt: skip
    proc = stubs.run(bundle / "undeploy.sh", "--delete-crds")
    assert proc.returncode == 1
    assert "custom resources this bundle did not create are in them: theirs" in proc.stderr
    assert not [c for c in uninstalls()[before:] if c[-1] == "gpu-operator"]
