"""``aicr-tui recipe`` and ``aicr-tui query`` end to end, through the installed command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import SAMPLES

SNAPS = SAMPLES / "snapshots"
AKS = ["--service", "aks", "--accelerator", "h100", "--os", "ubuntu", "--intent", "training"]
OKE = ["--service", "oke", "--gpu", "gb200", "--os", "ol", "--intent", "training"]


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [x for x in proc.stderr.splitlines() if x.startswith("aicr-tui: error:")]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_recipe_to_stdout_and_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = cli("recipe", *AKS)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("kind: RecipeResult\napiVersion: aicr.run/v1beta2\n")
    target = tmp_path / "recipe.yaml"
    written = cli("recipe", *AKS, "-o", str(target))
    assert written.returncode == 0 and written.stdout == ""
    assert target.read_text() == out.stdout  # byte-identical across processes


def test_recipe_json(cli) -> None:  # type: ignore[no-untyped-def]
    out = cli("recipe", *OKE, "--format", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["kind"] == "RecipeResult" and doc["apiVersion"] == "aicr.run/v1beta2"
    assert doc["metadata"]["selectedProfile"]["value"] == "oci-managed"
    assert doc["deploymentOrder"] and doc["componentRefs"]


def test_fail_closed_writes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "recipe.yaml"
    proc = cli("recipe", *AKS, "-s", str(SNAPS / "aks-h100-none.yaml"), "-o", str(target))
    assert proc.returncode == 2
    line = one_line_error(proc)
    assert 'constraint "K8s.aks-gpu-pools.gpu-driver" failed' in line
    assert "expected Install, observed None" in line
    assert "--profile gpuStack=operator-managed" in line
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []
    ok = cli(
        "recipe",
        *AKS,
        "--profile",
        "gpuStack=operator-managed",
        "-s",
        str(SNAPS / "aks-h100-none.yaml"),
        "-o",
        str(target),
    )
    assert ok.returncode == 0, ok.stderr
    assert "value: operator-managed" in target.read_text()


def test_oke_operator_refusal_names_add_on_removal(cli) -> None:  # type: ignore[no-untyped-def]
    proc = cli(
        "recipe",
        *OKE,
        "--profile",
        "gpuStack=operator-managed",
        "--snapshot",
        str(SNAPS / "oke-gb200-active.yaml"),
    )
    assert proc.returncode == 2 and proc.stdout == ""
    line = one_line_error(proc)
    assert "expected absent, observed installed" in line
    assert "remove the NvidiaGpuPlugin cluster add-on" in line


def test_explain_table_goes_to_stderr_with_stdout_recipe(cli) -> None:  # type: ignore[no-untyped-def]
    proc = cli("recipe", *AKS, "-s", str(SNAPS / "aks-h100-install.yaml"), "--explain")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("kind: RecipeResult")
    table = proc.stderr
    header = next(x for x in table.splitlines() if x.startswith("STATUS"))
    assert header.split() == ["STATUS", "CONSTRAINT", "EXPECTED", "OBSERVED", "SOURCE"]
    row = next(x for x in table.splitlines() if "K8s.aks-gpu-pools.gpu-driver" in x)
    assert row.split() == [
        "PASSED",
        "K8s.aks-gpu-pools.gpu-driver",
        "Install",
        "Install",
        "gpuStack=azure-managed",
    ]
    assert "result: QUALIFIED" in table


def test_explain_on_refusal_lists_every_profile_constraint(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "r.yaml"
    proc = cli(
        "recipe",
        *OKE,
        "--profile",
        "gpuStack=operator-managed",
        "-s",
        str(SNAPS / "oke-gb200-absent-legacy-active.yaml"),
        "--explain",
        "-o",
        str(target),
    )
    assert proc.returncode == 2 and not target.exists()
    table = proc.stdout  # recipe would have gone to a file, so the table is on stdout
    rows = {
        x.split()[1]: x.split() for x in table.splitlines() if x.startswith(("PASSED", "FAILED"))
    }
    assert rows["K8s.oke-addons.nvidia-gpu-plugin"][0] == "PASSED"
    assert rows["K8s.oke-legacy-plugin.nvidia-gpu-device-plugin"][:4] == [
        "FAILED",
        "K8s.oke-legacy-plugin.nvidia-gpu-device-plugin",
        "none",
        "active",
    ]
    assert "remedy: disable the legacy plugin" in table
    assert "result: REFUSED" in table


def test_explain_without_snapshot_marks_deferred(cli) -> None:  # type: ignore[no-untyped-def]
    proc = cli("recipe", *AKS, "--explain", "-o", "-")
    assert proc.returncode == 0
    row = next(x for x in proc.stderr.splitlines() if "K8s.aks-gpu-pools.gpu-driver" in x)
    assert row.split()[:4] == ["DEFERRED", "K8s.aks-gpu-pools.gpu-driver", "Install", "-"]


def test_input_errors_exit_2_with_one_line(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # Parse and resolution errors are covered in the unit tests; here one of each kind
    # proves the CLI turns them into one stderr line and exit 2.
    cases = [
        ((), "no criteria provided"),
        (("--service", "azure"), 'invalid service type: "azure" (--service); valid values:'),
        ((*AKS, "--profile", "gpuStack=gpu-managed"), 'has no value "gpu-managed"'),
        ((*AKS, "-s", str(tmp_path / "missing.yaml")), "missing.yaml"),
        ((*AKS, "--data", str(tmp_path)), "must contain registry.yaml"),
    ]
    for args, fragment in cases:
        proc = cli("recipe", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert fragment in one_line_error(proc), (args, proc.stderr)
        assert proc.stdout == ""


def test_query_prints_hydrated_values(cli) -> None:  # type: ignore[no-untyped-def]
    sel = "components.gpu-operator.values.driver.enabled"
    default = cli("query", *AKS, "--selector", sel)
    assert (default.returncode, default.stdout) == (0, "false\n")
    operator = cli("query", *AKS, "--profile", "gpuStack=operator-managed", "--selector", sel)
    assert operator.stdout == "true\n"
    tree = cli("query", *AKS, "--selector", "components.gpu-operator.values.operator", "-t", "json")
    assert json.loads(tree.stdout)["runtimeClass"] == "nvidia-container-runtime"
    refused = cli("query", *AKS, "-s", str(SNAPS / "aks-h100-mixed.yaml"), "--selector", sel)
    assert refused.returncode == 2 and refused.stdout == ""


def test_recipe_imports_no_cloud_sdk_or_ui() -> None:
    code = (
        "import sys\n"
        "from aicr_tui.cli import main\n"
        "rc = main(['recipe', '--service', 'aks', '--gpu', 'h100', '--os', 'ubuntu', "
        "'--intent', 'training', '-o', '/dev/null'])\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('kubernetes', 'azure', 'oci', 'textual', 'rich'))\n"
        "print(rc, bad)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.stdout.strip() == "0 []", proc.stdout + proc.stderr


def test_criteria_come_from_the_snapshot_when_flags_leave_them_out(cli) -> None:  # type: ignore[no-untyped-def]
    """The OKE brief's own invocation: `recipe --snapshot s.yaml --intent training`."""
    proc = cli("recipe", "--snapshot", str(SNAPS / "oke-gb200-active.yaml"), "--intent", "training")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # a note, not a warning: behind -v
    noted = cli(
        "recipe", "-v", "--snapshot", str(SNAPS / "oke-gb200-active.yaml"), "--intent", "training"
    )
    assert "criteria from the snapshot: service=oke, accelerator=gb200, os=ol" in noted.stderr
    assert noted.stdout == proc.stdout
    # Issue 33: upstream's name for the OKE GB200 Oracle Linux training leaf
    assert "- gb200-oke-training" in proc.stdout and "gb200-oke-ol-training" not in proc.stdout
    # a flag beats the fingerprint, and the snapshot still only verifies the selection
    refused = cli(
        "recipe",
        "--snapshot",
        str(SNAPS / "oke-gb200-active.yaml"),
        "--intent",
        "training",
        "--profile",
        "gpuStack=operator-managed",
    )
    assert refused.returncode == 2
    assert "expected absent, observed installed" in one_line_error(refused)


def test_single_value_flags_refuse_repeats(capsys) -> None:  # type: ignore[no-untyped-def]
    """Parsed in-process: the parser is the unit under test here, not the process."""
    import pytest

    from aicr_tui.cli import build_parser

    for argv in (
        ["recipe", "--service", "aks", "--service", "oke"],
        ["recipe", "--accelerator", "h100", "--gpu", "gb200"],
        ["query", "--service", "aks", "--selector", "a", "--selector", "b"],
    ):
        with pytest.raises(SystemExit) as exc:
            build_parser().parse_args(argv)
        assert exc.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "was given more than once" in err[0], err


def test_oke_operator_add_on_warns_but_resolves(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    dump = tmp_path / "addons.json"
    dump.write_text(
        json.dumps(
            {
                "data": [
                    {"name": "NvidiaGpuPlugin", "lifecycle-state": "ACTIVE"},
                    {"name": "NvidiaNetworkOperator", "lifecycle-state": "ACTIVE"},
                ]
            }
        )
    )
    proc = cli(
        "recipe",
        *OKE,
        "-s",
        str(SNAPS / "oke-gb200-active.yaml"),
        "--oke-addons",
        str(dump),
        "-o",
        str(tmp_path / "r.yaml"),
    )
    assert proc.returncode == 0, proc.stderr
    warning = next(x for x in proc.stderr.splitlines() if "warning:" in x)
    assert "NvidiaNetworkOperator" in warning and "two lifecycle managers" in warning
    assert "disable the NvidiaNetworkOperator add-on" in warning
    assert (tmp_path / "r.yaml").exists()
