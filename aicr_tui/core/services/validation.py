"""A validation session: what the user asked to validate, built into one run request.

``aicr-tui validate`` and the wizard's dashboard describe a live run with the same
:class:`ValidationSession` and run it through :func:`run_session`, so they resolve the
#1327 allocation policy, pick the validator catalog, phases, namespace, skipped checks,
fail-fast and the cluster the same way and produce the same event stream.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aicr_tui.core.documents.recipe_result import RecipeResult
from aicr_tui.core.documents.snapshot import Snapshot
from aicr_tui.core.foundation.deadline import Deadline
from aicr_tui.core.recipe.catalog import load_catalog
from aicr_tui.core.validation.catalog import load_validator_catalog
from aicr_tui.core.validation.executor import ClusterExecutor
from aicr_tui.core.validation.kube_executor import KubernetesExecutor
from aicr_tui.core.validation.policy import view_with_policy
from aicr_tui.core.validation.recipe_view import RecipeView
from aicr_tui.core.validation.runner import (
    RunResult,
    ValidationRequest,
    run_validation,
    select_phases,
)
from aicr_tui.core.validation.stream import EventStream


@dataclass(frozen=True)
class ValidationSession:
    """One live (or ``no_cluster``) validation run as the user asked for it."""

    recipe: RecipeResult | RecipeView
    recipe_source: str = "recipe"
    snapshot: Snapshot | None = None
    data_dir: str | Path | None = None
    phases: Sequence[str] = ()
    no_cluster: bool = False
    cleanup: bool = True
    # "" (the default): $AICR_NAMESPACE, else a namespace of the run's own,
    # aicr-validation-<run token> (requested_namespace)
    namespace: str = ""
    skip_checks: Sequence[str] = ()
    fail_fast: bool = False
    allow_unmeasured: bool = False
    kubeconfig: str | None = None
    context: str | None = None
    environ: Mapping[str, str] | None = field(default=None, compare=False)
    # The command's total deadline (None: the runner's default, aicr_tui.core.validation.runner).
    deadline: Deadline | None = field(default=None, compare=False)


def resolved_view(
    recipe: RecipeResult | RecipeView, source: str, data_dir: str | Path | None = None
) -> RecipeView:
    """The recipe as checks see it, its #1327 allocation policy resolved first (an
    incoherent policy is an invalid request, exit 2, before any cluster work). ``--data``
    supplies the recipe catalog only when it holds a registry (a validators-only ``--data``
    keeps the shipped recipes)."""
    data = str(data_dir) if data_dir else None
    external = data if data and os.path.isfile(os.path.join(data, "registry.yaml")) else None
    catalog = load_catalog(external=external) if external else load_catalog()
    return view_with_policy(recipe, source, catalog=catalog)


def requested_namespace(session: ValidationSession) -> str:
    """The namespace the user named (``-n``, else ``$AICR_NAMESPACE``), for the CLI and the
    wizard alike; "" asks the runner for one of the run's own (held by the run's lease
    either way: aicr_tui.core.validation.isolation.run_namespace)."""
    environ = os.environ if session.environ is None else session.environ
    return session.namespace or str(environ.get("AICR_NAMESPACE") or "")


def build_request(session: ValidationSession) -> ValidationRequest:
    """The runner's request for ``session`` (raises AicrError for a bad phase, catalog or
    policy, before any cluster work)."""
    data = str(session.data_dir) if session.data_dir else None
    return ValidationRequest(
        recipe=resolved_view(session.recipe, session.recipe_source, data),
        snapshot=session.snapshot,
        catalog=load_validator_catalog(data),
        phases=select_phases(list(session.phases)),
        no_cluster=session.no_cluster,
        cleanup=session.cleanup,
        namespace=requested_namespace(session),
        environ=dict(os.environ if session.environ is None else session.environ),
        skip_checks=tuple(session.skip_checks),
        fail_fast=session.fail_fast,
        allow_unmeasured=session.allow_unmeasured,
        deadline=session.deadline,
    )


def executor_factory(session: ValidationSession) -> Callable[[], ClusterExecutor]:
    """The cluster the session names: its kubeconfig and context, loaded as a live capture
    loads them (aicr_tui.core.live.kube), only when the runner first needs the cluster."""
    kubeconfig, context, deadline = session.kubeconfig, session.context, session.deadline

    def factory() -> ClusterExecutor:
        return KubernetesExecutor.from_kubeconfig(kubeconfig, context, deadline=deadline)

    return factory


async def run_session(
    session: ValidationSession,
    stream: EventStream,
    *,
    request: ValidationRequest | None = None,
    executor: Callable[[], Any] | None = None,
) -> RunResult:
    """Run ``session``, publishing every event on ``stream`` (the one event stream the CLI's
    table, the dashboard, CTRF and recordings all read)."""
    req = request if request is not None else build_request(session)
    return await run_validation(req, stream, executor or executor_factory(session))
