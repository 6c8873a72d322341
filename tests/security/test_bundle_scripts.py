"""Generated scripts are injection-proof by construction.

Bundles are rendered from hostile values and their ``deploy.sh``, ``undeploy.sh`` and every
``install.sh`` are RUN with stub ``helm`` and ``kubectl`` first on ``PATH``. The stubs stand
in for the real tools: they record their argv (NUL-separated, so newlines and quotes survive) and
exit 0. A canary program records that it ran; every payload tries to start it. The tests
assert the canary never runs and that, read with pflag's rules (a value-taking flag
consumes the next word, ``--`` ends the options), every value arrives as exactly one
argument in its intended place: a flag's value or a positional after ``--``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aicr_tui.core.bundler import plan_bundle, write_bundle
from aicr_tui.core.bundler import render as bundle_render
from aicr_tui.core.bundler.model import ComponentPlan
from aicr_tui.core.bundler.shell import quote
from aicr_tui.core.bundler.tolerations import Toleration
from aicr_tui.core.documents.recipe_result import RecipeResult
from aicr_tui.core.foundation.errors import AicrError

# Flags of the commands the scripts run: value-taking ones and booleans.
VALUE_FLAGS = {
    "--version", "--namespace", "-f", "--repo", "-o", "--timeout", "--raw", "--field-selector", "-l",
    "--filter", "--selector", "--labels", "--type", "-p", "--max", "--api-versions",
}  # fmt: skip
BOOL_FLAGS = {
    "--install", "--create-namespace", "--wait", "--ignore-not-found", "--dry-run=client",
    "--deployed", "--failed", "--pending", "--skip-crds",
    "--wait=false", "--all", "--no-headers", "--server-side", "--force-conflicts",
    "--field-manager=aicr-tui", "--local", "--overwrite", "-q", "--request-timeout=10s",
    "--all-namespaces", "--verbs=list", "--namespaced", "--no-hooks", "--show-managed-fields",
    "--skip-tests",
}  # fmt: skip


def _stubs(root: Path) -> tuple[dict[str, str], Path, Path]:
    """Stub helm/kubectl recording argv, and a canary that marks it ran."""
    bin_dir = root / "bin"
    bin_dir.mkdir()
    log = root / "argv.bin"
    ran = root / "CANARY-RAN"
    for tool in ("helm", "kubectl"):
        # NUL-separated words, one \x01 word closing each call: nothing a value holds
        # (newlines, quotes) can blur two arguments or two calls together.
        stub = bin_dir / tool
        stub.write_text(
            "#!/bin/bash\n"
            f'if [ "$*" = "apply -f -" ]; then cat >/dev/null; fi\n'
            # every release is there, deployed, and its record carries this bundle's labels
            f'if [ "$1" = list ]; then case " $* " in *" -q "*) echo r ;; *) echo \'[{{"status":"deployed"}}]\' ;; esac; fi\n'
            # API discovery: the custom kinds the catalog's manifests use are served
            f'if [ "$1 $2" = "get --raw" ]; then echo \'{{"resources":[{{"kind":"Skyhook"}},{{"kind":"NicClusterPolicy"}}]}}\'; fi\n'
            # one write per call: the two ends of a pipeline run at once
            f"printf '%s\\0' {tool} \"$@\" $'\\1' >> {quote(str(log))}\n"
        )
        stub.chmod(0o755)
    canary = root / "canary"
    canary.write_text(f"#!/bin/sh\necho ran >> {quote(str(ran))}\n")
    canary.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    return env, log, ran


def _run(script: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(script)], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def _records(log: Path) -> list[list[str]]:
    if not log.exists():
        return []
    calls: list[list[str]] = [[]]
    for word in log.read_bytes().decode("utf-8").split("\0")[:-1]:
        if word == "\x01":
            calls.append([])
        else:
            calls[-1].append(word)
    assert calls[-1] == []
    return calls[:-1]


def _parse(argv: list[str]) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """(subcommand words, flag -> values, positionals after --) by pflag's rules; any word
    before ``--`` that is neither a known flag, a flag's value nor a subcommand word fails."""
    words: list[str] = []
    flags: dict[str, list[str]] = {}
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return words, flags, argv[i + 1 :]
        if arg in VALUE_FLAGS:
            flags.setdefault(arg, []).append(argv[i + 1])
            i += 2
            continue
        if arg in BOOL_FLAGS:
            flags.setdefault(arg, []).append("")
        elif arg.startswith("-") and arg != "-":
            raise AssertionError(f"unexpected option {arg!r} in {argv!r}")
        else:
            words.append(arg)
        i += 1
    return words, flags, []


def _check_calls(
    records: list[list[str]],
    comps: list[ComponentPlan],
    prefix: Callable[[ComponentPlan], list[str]],
) -> int:
    """Every recorded call is well formed and carries the components' values intact."""
    by_release = {c.name: c for c in comps}
    seen = 0
    for argv in records:
        words, flags, positional = _parse(argv)
        if argv[0] == "helm" and words in (["upgrade"], ["template"]):
            # the install, and the preflight's offline render of the same pinned chart
            release, chart = positional
            c = by_release[release]
            assert flags["--version"] == [c.version] and flags["--namespace"] == [c.namespace]
            assert flags["-f"][0] in [f"{p}values.yaml" for p in prefix(c)]
            if c.source.startswith("oci://"):
                assert chart == f"{c.source.rstrip('/')}/{c.chart}" and "--repo" not in flags
            else:
                assert chart == c.chart and flags["--repo"] == [c.source]
            seen += 1
        elif argv[0] == "helm" and words == ["show", "crds"]:
            # deploy: the pinned chart's crds/ CRDs, applied before the release
            (chart,) = positional
            assert any(
                flags["--version"] == [c.version]
                and (
                    chart == f"{c.source.rstrip('/')}/{c.chart}" and "--repo" not in flags
                    if c.source.startswith("oci://")
                    else chart == c.chart and flags["--repo"] == [c.source]
                )
                for c in comps
            ), argv
            seen += 1
        elif argv[0] == "helm" and words in (["list"], ["get", "manifest"]):
            # is the release there, ours, pending? (its name only inside the --filter
            # regex word); after the install, its manifest read back
            namespaces = {c.namespace for c in comps} | {"aicr-tui"}
            assert flags["--namespace"][0] in namespaces, argv
            if words == ["list"]:
                (pattern,) = flags["--filter"]
                assert pattern.startswith("^") and pattern.endswith("$") and positional == []
            else:
                (release,) = positional
                assert by_release[release].namespace == flags["--namespace"][0]
            seen += 1
        elif argv[0] == "kubectl" and words[:1] in (["label"], ["annotate"]) and "--local" in flags:
            # this bundle's marks put on a manifest offline (a manifest file, or stdin)
            (file,) = flags["-f"]
            assert file == "-" or any(
                file == f"{p}manifests/{m}" for c in comps for m in c.manifests for p in prefix(c)
            ), argv
            assert all(
                w.startswith(("app.kubernetes.io/created-by=", "aicr-tui/")) for w in words[1:]
            )
            seen += 1
        elif argv[0] == "kubectl" and words in (
            ["get", "customresourcedefinitions"], ["get", "configmap"], ["patch", "configmap",
            "aicr-tui-state"], ["api-resources"],
        ):  # fmt: skip
            # the CRDs before and after helm, the state record: no value of the plan in them
            assert positional == []
            seen += 1
        elif argv[0] == "helm" and words == ["uninstall"]:
            (release,) = positional
            assert flags["--namespace"] == [by_release[release].namespace]
            seen += 1
        elif argv[0] == "kubectl" and words == ["create"] and flags.get("-f") == ["-"]:
            # the labelled namespace deploy.sh makes, named by a document on stdin only
            assert positional == []
            seen += 1
        elif (
            argv[0] == "kubectl"
            and words == ["get", "namespaces"]
            and "--field-selector" not in flags
        ):
            # undeploy: every namespace with the Helm annotations naming its release (the ones
            # a release of this bundle made and kept on uninstall): no value of the plan in it
            assert positional == [] and flags["-o"][0].startswith("custom-columns="), argv
            seen += 1
        elif argv[0] == "kubectl" and words == ["get", "namespaces"]:
            # undeploy: is the namespace one this bundle made? The name only inside the
            # field selector's one word
            (selector,) = flags["--field-selector"]
            assert selector.removeprefix("metadata.name=") in {c.namespace for c in comps} | {
                "aicr-tui"
            }
            assert positional == []
            seen += 1
        elif argv[0] == "kubectl" and words == ["get"] and "--raw" not in flags:
            # is an object of a manifest there, and ours? Named by documents on stdin
            assert flags["-f"] == ["-"] and positional == []
            seen += 1
        elif argv[0] == "kubectl" and words == ["get"]:
            # the CRD wait before a custom resource: discovery of one group/version; readyz
            (path,) = flags["--raw"]
            if path == "/readyz":
                seen += 1
                continue
            assert path.startswith("/apis/") and path.count("/") == 3 and positional == []
            seen += 1
        elif argv[0] == "kubectl" and words == ["create", "namespace"]:
            (ns,) = positional
            assert ns in {c.namespace for c in comps}
            seen += 1
        elif argv[0] == "kubectl" and words in (["apply"], ["delete"]):
            assert positional == []
            (file,) = flags["-f"]
            if file != "-":
                assert any(
                    file == f"{p}manifests/{m}"
                    for c in comps
                    for m in c.manifests
                    for p in prefix(c)
                )
            seen += 1
        else:
            raise AssertionError(f"unexpected call {argv!r}")
    return seen


def _hostile_plans(canary: Path) -> list[ComponentPlan]:
    """Values that skip every name check (built straight into the plan), one per field."""
    payloads = [
        "a'; {c}; echo '",
        'a"; {c}; echo "',
        "$({c})",
        "`{c}`",
        "x;{c}",
        "x&&{c}",
        "x|{c}",
        "x\n{c}\n",
        "x\r{c}",
        "--post-renderer={c}",
        "-n",
        "$IFS{c}",
        "*",
        "~",
        "x > {c}.out",
        "ünï ☃",
        "x" * 300,
    ]
    plans = []
    for i, raw in enumerate(payloads):
        value = raw.format(c=canary)
        for field in ("name", "namespace", "chart", "version", "source", "manifest"):
            base: dict[str, Any] = dict(
                name=f"c{i}{field}",
                index=len(plans) + 1,
                folder=f"{len(plans) + 1:03d}-c{i}{field}",
                namespace="ns",
                chart="chart",
                source="https://charts.example/x",
                version="1.0.0",
                values={},
                cluster_values={} if i % 2 else None,
                manifests={"m.yaml": "kind: ConfigMap\n"},
            )
            if field == "manifest":
                base["manifests"] = {value: "kind: ConfigMap\n"}
            elif field == "source" and i % 3 == 0:
                base["source"] = f"oci://{value}"
            elif field == "name":
                base["name"] = value
            else:
                base[field] = value
            plans.append(ComponentPlan(**base))
    manifest_only = ComponentPlan(
        name="manifest-only", index=len(plans) + 1, folder=f"{len(plans) + 1:03d}-mo",
        namespace=f"-n;{canary}", chart="", source="", version="", values={},
        cluster_values=None, manifests={"a.yaml": "kind: ConfigMap\n"},
    )  # fmt: skip
    return [*plans, manifest_only]


def test_quote_is_one_word_for_every_payload(tmp_path: Path) -> None:
    env, _, ran = _stubs(tmp_path)
    values = [p.name for p in _hostile_plans(tmp_path / "canary")] + ["", "-", "'", "''"]
    script = tmp_path / "echo.sh"
    script.write_text("".join(f"printf '%s\\0' {quote(v)}\n" for v in values), encoding="utf-8")
    out = subprocess.run(["bash", str(script)], capture_output=True, timeout=30, check=True)
    assert out.stdout.decode("utf-8").split("\0")[:-1] == values
    assert not ran.exists()
    with pytest.raises(AicrError, match="NUL"):
        quote("a\0b")


def test_scripts_rendered_from_hostile_plans_run_no_canary(tmp_path: Path) -> None:
    """Defense in depth: even values that bypass the name grammar stay data in the
    scripts (the render layer quotes everything itself)."""
    env, log, ran = _stubs(tmp_path)
    comps = _hostile_plans(tmp_path / "canary")
    assert len(comps) == 17 * 6 + 1
    root = tmp_path / "bundle"
    root.mkdir()
    (root / "deploy.sh").write_text(bundle_render.deploy_sh(comps))
    (root / "undeploy.sh").write_text(bundle_render.undeploy_sh(comps))
    for script in ("deploy.sh", "undeploy.sh"):
        proc = _run(root / script, env)
        assert proc.returncode == 0, proc.stderr
    assert not ran.exists(), "a payload ran the canary"
    calls = _records(log)
    assert _check_calls(calls, comps, lambda c: [f"{c.folder}/"]) == len(calls)
    helm_installs = [a for a in calls if a[:2] == ["helm", "upgrade"]]
    assert len(helm_installs) == len(comps) - 1
    assert sum(a[:2] == ["helm", "uninstall"] for a in calls) == len(comps) - 1
    assert not ran.exists() and not list(tmp_path.rglob("*.out"))
    # each component's install.sh, run from its folder
    log.unlink()
    for c in comps[:12]:
        folder = root / f"{c.index:03d}"
        folder.mkdir()
        (folder / "install.sh").write_text(bundle_render.install_sh(c))
        proc = _run(folder / "install.sh", env)
        assert proc.returncode == 0, proc.stderr
    calls = _records(log)
    assert _check_calls(calls, comps[:12], lambda c: [""]) == len(calls) > 12
    assert not ran.exists()


def test_bundles_from_hostile_but_valid_recipes_run_no_canary(tmp_path: Path) -> None:
    """Through plan_bundle and write_bundle: the names a grammar allows but a shell would
    act on (';', '&', '$', '(', ''' in a repository URL path) reach helm as one word."""
    from tests.unit.test_bundle_support import demo_recipe

    env, log, ran = _stubs(tmp_path)
    canary = tmp_path / "canary"
    sources = [
        f"https://evil.example/a;{canary};b",
        f"https://evil.example/a&{canary}&",
        f"https://evil.example/'$({canary})'",
        f"https://evil.example/$({canary})",
        f"oci://evil.example/x;{canary}",
    ]
    doc = demo_recipe("aks-azure").to_document()
    helm_refs = [i for i, r in enumerate(doc["componentRefs"]) if r.get("source")]
    for n, src in enumerate(sources):
        mutated = json.loads(json.dumps(doc))
        target = mutated["componentRefs"][helm_refs[n % len(helm_refs)]]
        target["source"] = src
        target["version"] = "1.2.3-rc.1+build.7"
        recipe = RecipeResult.model_validate(mutated)
        from aicr_tui.core.recipe.loading import parse_recipe

        parse_recipe(json.dumps(mutated), "valid.yaml")  # the reader accepts it
        keyed = [Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")]
        plan = plan_bundle(recipe, accelerated_tolerations=keyed)
        out = tmp_path / f"b{n}"
        write_bundle(plan, out)
        for script in ["deploy.sh", "undeploy.sh", *sorted(p for p in plan.files if p.endswith("install.sh"))]:  # fmt: skip
            proc = _run(out / script, env)
            assert proc.returncode == 0, (script, proc.stderr)
        assert not ran.exists(), f"a payload in {src!r} ran the canary"
        calls = _records(log)
        log.unlink()
        upgrades = [a for a in calls if a[:2] == ["helm", "upgrade"]]
        assert any(src in a or f"{src}/{target.get('chart')}" in a for a in upgrades)
        assert _check_calls(
            [a for a in calls if not (a[0] == "kubectl" and a[1] in ("apply", "delete"))],
            plan.components,
            lambda c: [f"{c.folder}/", ""],
        ) >= len(upgrades)
    assert not ran.exists()
