"""The generated scripts' own arguments and environment are hostile input too (issue 25, item 5).

``deploy.sh``, ``undeploy.sh`` and every ``NNN-<component>/install.sh`` are written by a real
bundle and RUN with stub ``helm``/``kubectl`` first on ``PATH``. The stubs record each call
and its pid, then behave as the test asks: succeed, fail, hang (``exec sleep``), or hang
while ignoring SIGTERM (``trap '' TERM`` before the ``exec``, so the sleeping process itself
ignores it). Every case must end with the documented exit status and its summary line
within a generous deadline, leave no stub process behind, and a refused argument or
setting must run nothing at all. The time limits are set low through the scripts' own
documented settings (``AICR_DEPLOY_TIMEOUT=1``, ``AICR_DEPLOY_KILL_AFTER=1``), and each
timing case runs both with ``timeout(1)`` on ``PATH`` and without it (the scripts' own
watchdog).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from functools import cache
from pathlib import Path

import pytest

from aicr_tui.core.bundler import write_bundle
from aicr_tui.core.bundler.shell import quote
from tests.unit.test_bundle_support import demo_recipe, plan

BASH = shutil.which("bash") or "/bin/bash"
# Everything the scripts and the stubs run, except timeout(1).
TOOLS = ("bash", "env", "dirname", "basename", "mktemp", "rm", "cat", "sleep", "grep")


def _stub(log: Path, pids: Path) -> str:
    return (
        "#!/usr/bin/env bash\n"
        f'{{ printf "%s" "$(basename "$0")"; printf " %s" "$@"; echo; }} >> {quote(str(log))}\n'
        f"echo $$ >> {quote(str(pids))}\n"
        'if [ "$*" = "apply -f -" ]; then cat > /dev/null; fi\n'
        # the labelled namespace deploy.sh makes before each helm step
        'if [ "$*" = "create -f -" ]; then cat > /dev/null; exit 0; fi\n'
        'if [ "$1 $2" = "get --raw" ]; then echo \'{"kind":"Skyhook"},{"kind":"NicClusterPolicy"}\'; fi\n'
        # every release is there, deployed, its record this bundle's (issue 32: undeploy.sh
        # uninstalls only such a release, deploy.sh checks before it upgrades)
        'if [ "$(basename "$0") $1" = "helm list" ]; then\n'
        '  case " $* " in *" -q "*) echo r ;; *) echo \'[{"status":"deployed"}]\' ;; esac; exit 0\n'
        "fi\n"
        # the mode is the behaviour of the install or uninstall itself; the reads around it
        # (state record, CRDs, the release's status) answer
        'case "$(basename "$0") $1" in "helm upgrade"|"helm uninstall") ;; *) exit 0 ;; esac\n'
        'case "${STUB_MODE:-ok}" in\n'
        "  hang) exec sleep 1000 ;;\n"
        "  deaf) trap '' TERM; exec sleep 1000 ;;\n"
        "  fail) echo 'stub: failing' >&2; exit 3 ;;\n"
        "esac\n"
    )


@cache
def _plan():  # type: ignore[no-untyped-def]
    return plan(demo_recipe("aks-azure"))


def _install(name: str) -> str:
    """The install.sh of the named component, at whatever step the catalog puts it."""
    return next(f"{c.folder}/install.sh" for c in _plan().components if c.name == name)


def _step(script: str):  # type: ignore[no-untyped-def]
    """The step a helm that never succeeds stops at: deploy.sh's first, or the script's own."""
    components = _plan().components
    if script == "deploy.sh":
        return components[0]
    return next(c for c in components if f"{c.folder}/install.sh" == script)


KPS_INSTALL = _install("kube-prometheus-stack")
SCRIPTS = ("deploy.sh", "undeploy.sh", KPS_INSTALL)


class Host:
    """A bundle, stub tools, and a way to run a script with or without timeout(1)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bundle = root / "bundle"
        write_bundle(_plan(), self.bundle)
        self.log = root / "calls"
        self.pids = root / "pids"
        self.stubs = root / "stubs"
        self.stubs.mkdir()
        for tool in ("helm", "kubectl"):
            path = self.stubs / tool
            path.write_text(_stub(self.log, self.pids))
            path.chmod(0o755)
        self.bare = root / "bare"  # a host without timeout(1)
        self.bare.mkdir()
        for tool in TOOLS:
            found = shutil.which(tool)
            assert found, tool
            (self.bare / tool).symlink_to(found)

    def run(
        self, script: str, *args: str, timeout_tool: bool = True, **env: str
    ) -> subprocess.CompletedProcess[str]:
        path = f"{self.stubs}:{os.environ['PATH']}" if timeout_tool else f"{self.stubs}:{self.bare}"
        full = dict(
            os.environ,
            PATH=path,
            AICR_DEPLOY_TIMEOUT="20",
            AICR_DEPLOY_KILL_AFTER="1",
            AICR_DEPLOY_RETRIES="0",
            AICR_DEPLOY_RETRY_DELAY="0",
        )
        full.update(env)
        return subprocess.run(
            [BASH, str(self.bundle / script), *args],
            env=full,
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []

    def reset(self) -> None:
        self.log.unlink(missing_ok=True)
        self.pids.unlink(missing_ok=True)

    def leftover(self) -> list[int]:
        """Stub processes still alive a moment after the script ended."""
        if not self.pids.exists():
            return []
        pids = [int(p) for p in self.pids.read_text().split()]
        deadline = time.monotonic() + 15
        while True:
            alive = [p for p in pids if _alive(p)]
            if not alive or time.monotonic() > deadline:
                return alive
            time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(tmp_path)


BAD_STEPPED = [
    ("--from=",),
    ("--from", ""),
    ("--from",),
    ("--from=../x",),
    ("--from", "../x"),
    ("--from=\n",),
    ("--from", "999"),
    ("--from=-1",),
    ("--from", "7x"),
    ("--from", "0007"),
    ("--from", "--dry-run"),
    ("--from", "007", "--from="),
    ("--from=$(touch CANARY)",),
    ("--bogus",),
    ("--dry-run=1",),
    ("-n",),
    ("extra",),
    ("--", "extra"),
    ("--dry-run", "--", "--help"),
    ("--no-wait", "x\ny"),
]
BAD_SINGLE = [
    ("--from", "001"),
    ("--from=001",),
    ("--from=",),
    ("--best-effort",),
    ("--bogus",),
    ("extra",),
    ("--", "--dry-run"),
    ("--dry-run", "values.yaml"),
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_bad_arguments_are_refused_with_one_line_and_run_nothing(host: Host, script: str) -> None:
    cases = BAD_SINGLE if script.endswith("install.sh") else BAD_STEPPED
    for args in cases:
        proc = host.run(script, *args)
        assert proc.returncode == 2, (script, args, proc.stdout, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1, (args, proc.stderr)
        assert proc.stderr.startswith(f"{Path(script).name}: "), proc.stderr
        assert proc.stdout == "", (args, proc.stdout)
        assert host.calls() == [], (args, host.calls())
    assert not list(host.bundle.rglob("CANARY"))


@pytest.mark.parametrize("script", SCRIPTS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_prints_usage_and_exit_codes_and_runs_nothing(
    host: Host, script: str, flag: str
) -> None:
    proc = host.run(script, flag)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"Usage: ./{Path(script).name}")
    for word in ("--dry-run", "AICR_DEPLOY_TIMEOUT", "AICR_DEPLOY_KILL_AFTER", "TMPDIR",
                 "Exit status:", "  0 ", "  1 ", "  2 ", "  130 "):  # fmt: skip
        assert word in proc.stdout, word
    assert host.calls() == []
    readme = (host.bundle / "README.md").read_text()
    for word in ("AICR_DEPLOY_KILL_AFTER", "TMPDIR", "| 2 | bad option", "| 130 |", "--from=`"):
        assert word in readme, word


def test_install_dry_run_prints_the_commands_and_runs_none(host: Host) -> None:
    for script in sorted(p for p in _plan().files if p.endswith("install.sh")):
        proc = host.run(script, "--dry-run")
        assert proc.returncode == 0, (script, proc.stderr)
        printed = [ln for ln in proc.stdout.splitlines() if ln.startswith("+ ")]
        assert printed, script
        assert ": dry run" in proc.stdout and "none run" in proc.stdout
    assert host.calls() == []
    gpu_operator = _install("gpu-operator")
    proc = host.run(gpu_operator, "--dry-run")
    assert (
        "+ helm upgrade --install" in proc.stdout and "-- gpu-operator gpu-operator" in proc.stdout
    )
    # and without --dry-run it does install, through the same runner
    proc = host.run(gpu_operator)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("gpu-operator installed")
    # the marked namespace first (kubectl create -f -), then the release, after its status
    # was read (is it ours? left pending?)
    calls = host.calls()
    assert calls[0] == "kubectl create -f -"
    upgrade = next(i for i, c in enumerate(calls) if c.startswith("helm upgrade --install"))
    assert any(c.startswith("helm list --namespace gpu-operator") for c in calls[:upgrade])


@pytest.mark.parametrize("script", SCRIPTS)
def test_an_unusable_tmpdir_stops_before_anything_runs(host: Host, script: str) -> None:
    a_file = host.root / "a-file"
    a_file.write_text("")
    for tmpdir in (str(host.root / "missing"), str(a_file), "/proc", str(a_file / "sub")):
        proc = host.run(script, TMPDIR=tmpdir)
        assert proc.returncode == 2, (tmpdir, proc.stdout, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1 and "TMPDIR" in proc.stderr, proc.stderr
        assert "nothing was run" in proc.stderr
        assert host.calls() == []
    # a dry run needs no scratch directory
    proc = host.run(script, "--dry-run", TMPDIR=str(a_file))
    assert proc.returncode == 0, proc.stderr
    assert host.calls() == []


@pytest.mark.parametrize("timeout_tool", [True, False], ids=["timeout1", "watchdog"])
@pytest.mark.parametrize("script", ["deploy.sh", KPS_INSTALL])
@pytest.mark.parametrize("mode", ["hang", "deaf", "fail"])
def test_hung_deaf_and_failing_helm_end_with_the_summary(
    host: Host, script: str, mode: str, timeout_tool: bool
) -> None:
    """Retries that all fail, a helm that never answers, and one that ignores SIGTERM: the
    run ends (exit 1) with its summary, and SIGKILL after the grace leaves nothing behind."""
    proc = host.run(
        script,
        timeout_tool=timeout_tool,
        STUB_MODE=mode,
        AICR_DEPLOY_TIMEOUT="1",
        AICR_DEPLOY_RETRIES="1",
    )
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    name = Path(script).name
    assert f"Summary ({name}):" in proc.stdout
    why = "exit 3" if mode == "fail" else "timed out"
    step = _step(script)
    number = f"{step.index:03d}"
    assert f"[{number}] {step.name}: FAILED ({why})" in proc.stdout
    assert "RETRY 1/1" in proc.stderr
    assert "FAILED (exit" in proc.stderr and "2 attempt(s)" in proc.stderr
    if mode != "fail":
        assert proc.stderr.count("TIMEOUT: no result within 1s") == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"stopped at step {number}" if name == "deploy.sh" else f"step {number} failed"
    )
    assert len([c for c in host.calls() if c.startswith("helm upgrade")]) == 2
    # no later step ran: helm saw the failing step's release and no later step's
    # (deploy.sh's preflight reads every release's status: reads, not installs)
    released = {c.rsplit(" -- ", 1)[-1] for c in host.calls() if c.startswith("helm upgrade")}
    assert released == {f"{step.name} {step.chart}"}, host.calls()
    assert [c for c in _plan().components if c.index > step.index], "a later step to skip"
    assert host.leftover() == []


def test_undeploy_retries_that_all_fail_end_with_the_summary(host: Host) -> None:
    proc = host.run("undeploy.sh", STUB_MODE="fail", AICR_DEPLOY_RETRIES="2")
    assert proc.returncode == 1
    last = _plan().components[-1]  # undeploy.sh removes in reverse: the last step first
    number = f"{last.index:03d}"
    assert f"[{number}] {last.name}: FAILED (exit 3)" in proc.stdout
    assert "3 attempt(s)" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(f"stopped at step {number}")


@pytest.mark.parametrize("timeout_tool", [True, False], ids=["timeout1", "watchdog"])
def test_an_interrupted_run_stops_the_running_command(host: Host, timeout_tool: bool) -> None:
    """SIGTERM to the script while helm hangs ignoring SIGTERM: exit 130 with the summary at
    once, and the hung helm is killed after the grace."""
    path = f"{host.stubs}:{os.environ['PATH']}" if timeout_tool else f"{host.stubs}:{host.bare}"
    env = dict(os.environ, PATH=path, STUB_MODE="deaf", AICR_DEPLOY_TIMEOUT="600",
               AICR_DEPLOY_KILL_AFTER="1", AICR_DEPLOY_RETRIES="0")  # fmt: skip
    proc = subprocess.Popen(
        [BASH, str(host.bundle / "deploy.sh")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120  # the preflight reads go first; a loaded machine is slow
    # until helm upgrade runs (the state record and the release's status are read first)
    while (
        not any(c.startswith("helm upgrade") for c in host.calls()) and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert host.pids.exists()
    proc.terminate()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    first = _plan().components[0]
    assert f"[{first.index:03d}] {first.name}: INTERRUPTED" in out
    assert f"INTERRUPTED at step {first.index:03d} (signal)" in err
    assert err.strip().splitlines()[-1] == "deploy.sh: interrupted"
    assert host.leftover() == []
