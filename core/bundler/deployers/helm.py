"""``--deployer helm`` (default): numbered folders, ``install.sh`` each, root ``deploy.sh``.

Layout: ``NNN-<component>/values.yaml`` (+ ``cluster-values.yaml`` for ``--dynamic``),
``manifests/*.yaml`` and ``install.sh``; ``deploy.sh`` installs strictly in deployment order
and ``undeploy.sh`` removes in reverse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.bundler.deployers.common import DeployContext, DeployOutput, local_chart, release_entry
from core.bundler.deployers.layout import Unit, waitable

if TYPE_CHECKING:
    from core.bundler.render import ReadinessStep


def render(ctx: DeployContext) -> DeployOutput:
    from core.bundler import render as r

    out = DeployOutput()
    readiness = _number_with_readiness(ctx) if ctx.config.readiness_hooks else {}
    identity = r.bundle_identity(ctx.components, readiness)
    for comp in ctx.components:
        out.put(f"{comp.folder}/values.yaml", r.values_yaml(comp.values))
        if comp.cluster_values is not None:
            out.put(
                f"{comp.folder}/cluster-values.yaml", r.cluster_values_yaml(comp.cluster_values)
            )
        for mname, body in comp.manifests.items():
            out.put(f"{comp.folder}/manifests/{mname}", body)
        out.put(f"{comp.folder}/install.sh", r.install_sh(comp, identity))
        out.executables.add(f"{comp.folder}/install.sh")
        out.releases.append(r.component_release(comp))
        out.folders[comp.name] = comp.folder
    for comp in ctx.components:
        step = readiness.get(comp.name)
        if step is None:
            continue
        unit = Unit(comp, "readiness", step.release, step.folder, step.index)
        local_chart(out, unit, "helm", step.folder)
        out.releases.insert(
            next(i for i, e in enumerate(out.releases) if e["component"] == comp.name) + 1,
            release_entry(unit),
        )
    out.put("deploy.sh", r.deploy_sh(ctx.components, readiness, identity))
    out.put("undeploy.sh", r.undeploy_sh(ctx.components, readiness, identity))
    out.executables |= {"deploy.sh", "undeploy.sh"}
    out.deploy_text = (
        "```sh\nsha256sum -c checksums.txt   # verify the bundle\n"
        "./deploy.sh --dry-run        # print every command, run none\n"
        "./deploy.sh                  # every component, in order\n```\n\n"
        "`deploy.sh` runs `helm upgrade --install` for each chart (pinned source and version, "
        "waiting for readiness) and then applies that component's manifests, strictly in the "
        "recipe's deploymentOrder; before a custom resource it waits until the API server "
        "serves its kind (its CRD is Established). Every helm/kubectl command has a time "
        "limit and is retried with a doubling delay. It ends with a summary of every step.\n\n"
        "| option | effect |\n|---|---|\n"
        "| `--no-wait` | do not wait for releases to become ready (helm without `--wait`) |\n"
        "| `--best-effort` | carry on past a failed step; list the failed steps at the end and "
        "exit 1 |\n"
        "| `--from NNN` | resume at step `NNN` (a stopped run prints the command) |\n"
        "| `--dry-run` | print every command; run none |\n"
        "| `--prune` | remove what an earlier aicr-tui bundle deployed and this one does not "
        "contain (only what aicr-tui created; never a CRD) |\n"
        "| `--adopt KIND/NAMESPACE/NAME` | take over an existing object that is not ours "
        "(`KIND/NAME` when cluster-scoped, `release/NAMESPACE/NAME` for a Helm release) |\n"
        "| `-h`, `--help` | print the usage, settings and exit codes; run nothing |\n\n"
        "Any other word, an empty `--from` (`--from=`, `--from ''`) or a `--from` that names "
        "no step is refused with one line and exit 2 before anything runs.\n\n"
        "| environment (seconds; 0 = no wait) | default | meaning |\n|---|---|---|\n"
        "| `AICR_DEPLOY_TIMEOUT` | 900 | time limit of each command, also helm's `--timeout` "
        "(0 = no limit): SIGTERM at the limit |\n"
        "| `AICR_DEPLOY_KILL_AFTER` | 10 | then SIGKILL this long after the SIGTERM, for a "
        "command that ignores it (0 = at once) |\n"
        "| `AICR_DEPLOY_RETRIES` | 3 | retries of a failed command (0 = none) |\n"
        "| `AICR_DEPLOY_RETRY_DELAY` | 10 | wait before the first retry, doubled each time up "
        "to 300 (0 = retry at once) |\n"
        "| `TMPDIR` | /tmp | where a run keeps its scratch directory; unusable = exit 2, "
        "nothing run |\n\n"
        "The time limit uses `timeout` (coreutils or busybox, or `gtimeout`) when it is on "
        "`PATH`, which signals the command's whole process group; without it the script's "
        "own watchdog signals the command (helm and kubectl are single processes).\n\n"
        "| exit status | meaning |\n|---|---|\n"
        "| 0 | every step done (with `--dry-run`: every command printed) |\n"
        "| 1 | a step failed: its command still failed, or ran out of time, after the "
        "retries (the summary names it) |\n"
        "| 2 | bad option or setting (an option, an `AICR_DEPLOY_*` value, an unusable "
        "`TMPDIR`); nothing was run |\n"
        "| 130 | interrupted (SIGINT or SIGTERM); the running command is sent SIGTERM |\n\n"
        "Each `NNN-<component>/install.sh` installs one component by hand through the same "
        "runner (`--no-wait`, `--dry-run`, `--help`, the same settings, summary and exit "
        "codes).\n\n"
        "**Shared clusters.** Everything the scripts create outside Helm's release records "
        "(raw manifests, namespaces, CRDs that did not exist) carries the label "
        "`app.kubernetes.io/created-by=aicr-tui`, the label `aicr-tui/bundle=<id>` and the "
        "annotation `aicr-tui/bundle-digest`, and is applied with the server-side field "
        "manager `aicr-tui`; each release record carries the same labels. Before changing "
        "anything, `deploy.sh` refuses (one `REFUSED:` line naming the object and its owner, "
        "exit 1) an existing object or release of the bundle that is not aicr-tui's, unless "
        "named with `--adopt`; a namespace that existed before is used as it is, never "
        "relabelled. A release an interrupted run left `pending-install` is uninstalled, one "
        "left `pending-upgrade`/`pending-rollback` rolled back to its last deployed revision "
        "(each said so) before the step runs again; every step's objects are read back from "
        "the API server, and an interruption ends with `INTERRUPTED at step NNN`. What each "
        "step did is kept in the ConfigMap `aicr-tui/aicr-tui-state`; a bundle deployed "
        "over another lists what the earlier one deployed and this one does not contain "
        "(`--prune` removes it).\n\n"
        "`./undeploy.sh` removes everything in reverse order (same options and settings; "
        "`--from NNN` resumes a removal at step `NNN`), but only what carries this bundle's "
        "label: objects and releases of anyone else, or of another bundle, are kept and said "
        "so. CRDs are never deleted by default: it lists the CRDs this bundle created with "
        "the custom resources still in them. `--delete-crds` deletes those CRDs, each only "
        "when no custom resource this bundle did not create remains in it; "
        "`--destroy-custom-resources` (with `--delete-crds`) deletes them even so, and every "
        "custom resource in them. A namespace goes only when this bundle made it and it "
        "holds nothing but this bundle's objects; otherwise it is kept with a line saying "
        "what kept it (`keeping namespace ...`).\n"
    )
    return out


def _number_with_readiness(ctx: DeployContext) -> dict[str, ReadinessStep]:
    """``--readiness-hooks``: a ``NNN-<component>-readiness`` folder after each component
    with expected resources; every injected folder shifts the later numbers."""
    from core.bundler.render import ReadinessStep

    steps: dict[str, ReadinessStep] = {}
    index = 0
    for comp in ctx.components:
        index += 1
        comp.index = index
        comp.folder = f"{index:03d}-{comp.name}"
        if waitable(comp):
            index += 1
            name = f"{comp.name}-readiness"
            steps[comp.name] = ReadinessStep(index, f"{index:03d}-{name}", name, comp.namespace)
    return steps
