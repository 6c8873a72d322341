"""``aicr-tui recipe --snapshot`` with stated criteria the capture contradicts (issue 33
item 3): a warning naming both values, exit 2 with ``--criteria-strict``, the wrong
provider named, and readiness refused. Only the AKS H100 and OKE GB200 OL training leaves
are assumed to exist."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import SAMPLES

SNAPS = SAMPLES / "snapshots"
H100 = SNAPS / "aks-h100-install.yaml"
AKS = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]


def a100_capture(tmp_path: Path) -> Path:
    # The GPU model and, since captures record them, the pools' VM sizes: a capture of an
    # A100 cluster names the A100 SKU too (a model alone would contradict its own pools).
    text = H100.read_text()
    assert "model: NVIDIA H100 80GB HBM3" in text
    path = tmp_path / "a100.yaml"
    text = text.replace("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB")
    path.write_text(text.replace("Standard_ND96isr_H100_v5", "Standard_ND96amsr_A100_v4"))
    return path


def test_a_contradicting_capture_warns_naming_both_values(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "recipe.yaml"
    proc = cli("recipe", *AKS, "-s", str(a100_capture(tmp_path)), "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    warnings = [x for x in proc.stderr.splitlines() if x.startswith("aicr-tui: warning:")]
    conflict = [w for w in warnings if "contradicts the snapshot" in w]
    assert len(conflict) == 1, proc.stderr
    assert "accelerator h100" in conflict[0] and "accelerator a100" in conflict[0]
    assert "NVIDIA A100-SXM4-80GB" in conflict[0]
    assert target.exists()


def test_criteria_strict_refuses_and_writes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "recipe.yaml"
    snap = str(a100_capture(tmp_path))
    proc = cli("recipe", *AKS, "-s", snap, "-o", str(target), "--criteria-strict")
    assert proc.returncode == 2
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("aicr-tui: error:")]
    assert "snapshot is from aks/A100 (provider azure); the recipe is for aks/H100" in line
    assert "--accelerator a100" in line  # the capture's value is the remedy
    assert not target.exists() and "Traceback" not in proc.stderr


def test_the_issue_repro_b200_on_the_h100_capture_is_refused_when_strict(cli) -> None:  # type: ignore[no-untyped-def]
    # Whether or not the catalog serves AKS B200, the H100 capture never qualifies it.
    args = ["--accelerator", "b200", "--intent", "training", "--snapshot", str(H100)]
    proc = cli("recipe", *args, "--criteria-strict")
    assert proc.returncode == 2, proc.stderr
    assert "b200" in proc.stderr and "h100" in proc.stderr
    assert "NVIDIA H100 80GB HBM3" in proc.stderr
    loose = cli("recipe", *args)
    assert "contradicts the snapshot" in loose.stderr
    assert "NVIDIA H100 80GB HBM3" in loose.stderr


def test_a_wrong_provider_snapshot_is_named(cli) -> None:  # type: ignore[no-untyped-def]
    oke = ["--service", "oke", "--gpu", "gb200", "--os", "ol", "--intent", "training"]
    proc = cli("recipe", *oke, "-s", str(H100))
    assert proc.returncode == 2
    assert "snapshot is from aks/H100 (provider azure); the recipe is for oke/GB200" in proc.stderr
    assert "oci ce cluster list-addons" not in proc.stderr


def test_readiness_against_a_contradicting_capture_fails(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recipe = tmp_path / "recipe.yaml"
    assert cli("recipe", *AKS, "-s", str(H100), "-o", str(recipe)).returncode == 0
    good = cli("validate", "-r", str(recipe), "-s", str(H100), "--phase", "readiness")
    assert good.returncode == 0, good.stderr
    bad = cli(
        "validate", "-r", str(recipe), "-s", str(a100_capture(tmp_path)), "--phase", "readiness"
    )
    assert bad.returncode == 2
    assert "snapshot is from aks/A100 (provider azure); the recipe is for aks/H100" in bad.stderr


def test_explain_and_query_say_the_capture_does_not_qualify(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    snap = str(a100_capture(tmp_path))
    explained = cli("recipe", *AKS, "-s", snap, "--explain", "-o", str(tmp_path / "r.yaml"))
    assert explained.returncode == 0
    assert "result: QUALIFIED" not in explained.stdout + explained.stderr
    # with -o FILE the table goes to stdout
    assert "NOT QUALIFIED: the snapshot contradicts the stated accelerator" in explained.stdout
    assert "criteria.accelerator" in explained.stdout
    query = ["query", *AKS, "-s", snap, "--selector", "criteria.accelerator"]
    loose = cli(*query)
    assert loose.returncode == 0 and "contradicts the snapshot" in loose.stderr
    assert cli(*query, "--criteria-strict").returncode == 2
