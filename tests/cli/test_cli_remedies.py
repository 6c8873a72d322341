"""Every CLI remedy the tool suggests is one it accepts: each is run, and must not be
refused for the reason it was suggested (issue 15, item 3)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.conftest import SAMPLES, run_cli

SNAPS = SAMPLES / "snapshots"
AKS = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]
KEYED = ["--accelerated-node-toleration", "nvidia.com/gpu:NoSchedule"]


def error_line(proc) -> str:  # type: ignore[no-untyped-def]
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    return lines[0]


def suggested_profile(text: str) -> str:
    found = re.findall(r"--profile (gpuStack=[a-z-]+)", text)
    assert found, text
    return found[0]


def test_a_refused_recipe_suggests_a_profile_that_qualifies_the_same_snapshot() -> None:
    snap = str(SNAPS / "aks-h100-none.yaml")
    line = error_line(run_cli("recipe", *AKS, "-s", snap))
    profile = suggested_profile(line)
    assert profile == "gpuStack=operator-managed"
    followed = run_cli("recipe", *AKS, "-s", snap, "--profile", profile)
    assert followed.returncode == 0, followed.stderr


def test_rerun_without_profile_is_what_qualifies_install_pools() -> None:
    snap = str(SNAPS / "aks-h100-install.yaml")
    line = error_line(run_cli("recipe", *AKS, "-s", snap, "--profile", "gpuStack=operator-managed"))
    assert "rerun without --profile" in line
    followed = run_cli("recipe", *AKS, "-s", snap)
    assert followed.returncode == 0, followed.stderr


def test_the_driver_coherence_remedy_on_a_profiled_recipe_is_accepted(tmp_path: Path) -> None:
    recipe = tmp_path / "azure-managed.yaml"
    assert run_cli("recipe", *AKS, "-o", str(recipe)).returncode == 0
    refused = run_cli(
        "bundle", "-r", str(recipe), *KEYED, "--set", "gpuoperator:driver.enabled=true",
        "-o", str(tmp_path / "b1"), "--explain",
    )  # fmt: skip
    line = error_line(refused)
    assert "CheckDriverOwnershipCoherence" in line
    coherence = next(x for x in refused.stdout.splitlines() if "CheckDriverOwnershipCoherence" in x)
    # never a --set of a path the profile owns (the lock would refuse it)
    assert "--set dradriver:nvidiaDriverRoot" not in coherence
    assert "--set nvidia-dra-driver-gpu:nvidiaDriverRoot" not in coherence
    commands = re.findall(r"`(aicr-tui [^`]+)`", coherence)
    assert commands, coherence
    regenerated = tmp_path / "regenerated.yaml"
    argv = shlex.split(commands[0])[1:]
    followed = run_cli(*argv, *AKS, "-o", str(regenerated))
    assert followed.returncode == 0, followed.stderr
    for extra in ([], ["--set", "gpuoperator:driver.enabled=true"]):
        bundled = run_cli(
            "bundle", "-r", str(regenerated), *KEYED, *extra, "-o", str(tmp_path / f"b{len(extra)}")
        )
        assert "CheckDriverOwnershipCoherence" not in bundled.stderr
        assert bundled.returncode == 0, bundled.stderr


def test_a_refused_bundle_is_one_line_and_explain_lists_each_check(tmp_path: Path) -> None:
    recipe = tmp_path / "r.yaml"
    assert run_cli("recipe", *AKS, "-o", str(recipe)).returncode == 0
    args = ["bundle", "-r", str(recipe), "--set", "gpuoperator:driver.enabled=true"]
    quiet = run_cli(*args, "-o", str(tmp_path / "b"))
    line = error_line(quiet)
    assert "bundle refused by 3 blocking checks" in line and "--explain lists each" in line
    for check in ("ProfileLock", "CheckDriverOwnershipCoherence", "CheckWildcardAccelerated"):
        assert check in line
    explained = run_cli(*args, "-o", str(tmp_path / "b"), "--explain")
    error_line(explained)
    assert len([x for x in explained.stdout.splitlines() if x.startswith("blocking: ")]) == 3
    assert not (tmp_path / "b").exists()
