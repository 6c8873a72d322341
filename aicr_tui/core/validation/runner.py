"""Run a validation: readiness → declared-check pre-flight → deployment → conformance → performance.

Every step is published as an event on one :class:`EventStream`; consumers (CLI, dashboard,
recorder, reports) never see anything else. Order and rules follow upstream ``aicr
validate``: readiness and the declared-check pre-flight refuse the run (exit 2) before any
cluster work; ``--no-cluster`` reports every catalog check of each selected phase as not
measured (a dry run); inside a phase, declared checks run one at a time in catalog order; a
failing check never stops its phase; a check that cannot measure is ``not measured`` and a
documented exemption ``not applicable`` (vocabulary, phase rule and exit code:
``aicr_tui.core.validation.verdicts``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from aicr_tui.core import __version__
from aicr_tui.core.documents.snapshot import Snapshot
from aicr_tui.core.foundation.deadline import Deadline, timeout_error
from aicr_tui.core.foundation.errors import EXIT_INVALID, EXIT_OK, AicrError, internal, invalid
from aicr_tui.core.validation import isolation
from aicr_tui.core.validation.catalog import (
    CatalogEntry,
    ValidatorCatalog,
    format_duration,
    preflight_declared_checks,
)
from aicr_tui.core.validation.checks.base import (
    NAMESPACE_LABELS,
    RUN_ID_LABEL,
    CheckContext,
    CheckOutcome,
    not_measured,
)
from aicr_tui.core.validation.checks.registry import check_function
from aicr_tui.core.validation.events import (
    PHASES,
    CheckFinished,
    CheckStarted,
    Event,
    LogLine,
    Measurement,
    PhaseFinished,
    PhaseStarted,
    RunFinished,
    RunStarted,
)
from aicr_tui.core.validation.executor import ClusterExecutor
from aicr_tui.core.validation.kube_executor import NAMESPACE_GONE_S, KubernetesExecutor
from aicr_tui.core.validation.outcome import exit_code_for, unmeasured_checks
from aicr_tui.core.validation.readiness import evaluate_readiness, readiness_refusal
from aicr_tui.core.validation.recipe_view import RecipeView
from aicr_tui.core.validation.stream import EventStream
from aicr_tui.core.validation.verdicts import (
    FAILED,
    NOT_MEASURED,
    PASSED,
    SKIP_REASON_NO_CLUSTER,
    SKIP_REASON_WITHHELD,
    VERDICTS,
    empty_counts,
    phase_verdict,
)

ALL_PHASES = PHASES  # run order
CLUSTER_PHASES = tuple(p for p in PHASES if p != "readiness")
NO_CLUSTER_MESSAGE = "skipped - no-cluster mode (offline dry run: nothing was measured)"
SKIP_CHECK_MESSAGE = "withheld by --skip-check (named in skipChecks)"
FAIL_FAST_MESSAGE = "not run: --fail-fast stopped after a previous phase failed"
# How long past a check's own budget the runner waits before declaring it timed out.
WAIT_BUFFER_S = 150.0
# The run's total deadline (``--deadline``; default: the live capture's 120 s, the budgets
# of the checks the run will execute, and two namespace waits). Checks stop
# ``cleanup_reserve`` before it, so the run's own cleanup still fits inside it; once it has
# passed every API call ends at once, the running check and every later one are reported
# not measured with the reason, and the command ends TIMEOUT (exit 5).
CAPTURE_DEADLINE_S = 120.0
MAX_DEADLINE_S = 86_400.0
DEADLINE_MESSAGE = "not measured: the run's total deadline of {seconds:g}s passed"


def cleanup_reserve(total: float) -> float:
    """The part of a run's deadline kept for its cleanup: a quarter, at most 60 s."""
    return min(60.0, total / 4)


def select_phases(requested: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """Canonical-order phases for ``--phase`` values; ``all`` is exclusive."""
    names = list(requested or [])
    if not names or names == ["all"]:
        return ALL_PHASES
    if "all" in names:
        raise invalid("--phase all cannot be combined with another phase")
    for n in names:
        if n not in ALL_PHASES:
            raise invalid(
                f'--phase "{n}" is not a phase; expected readiness, deployment, conformance, performance or all'
            )
    chosen = set(names)
    return tuple(p for p in ALL_PHASES if p in chosen or p == "readiness")


def new_run_id(wall: datetime) -> str:
    return f"{wall.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(6)}"


@dataclass
class ValidationRequest:
    recipe: RecipeView
    snapshot: Snapshot | None
    catalog: ValidatorCatalog
    phases: tuple[str, ...] = ALL_PHASES
    no_cluster: bool = False
    cleanup: bool = True
    # "" (the default): a namespace of the run's own (aicr_tui.core.validation.isolation.run_namespace)
    namespace: str = ""
    run_id: str = ""
    started_ms: int = 0
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    poll_s: float = 2.0
    skip_checks: tuple[str, ...] = ()
    fail_fast: bool = False
    allow_unmeasured: bool = False
    # The whole command's deadline (started before the live capture, when there is one);
    # None: the default of the module docstring, from the run's start.
    deadline: Deadline | None = None


def default_deadline_s(req: ValidationRequest) -> float:
    """The default total deadline: never shorter than a run whose every check uses its
    whole budget (the capture, the checks the run will execute, two namespace waits)."""
    budgets = 0.0
    for phase in req.phases:
        if phase not in CLUSTER_PHASES or req.no_cluster:
            continue
        declared = set(req.recipe.phase(phase).checks)
        for e in req.catalog.phase_entries(phase):
            if e.name in declared and e.name not in req.skip_checks:
                budgets += e.timeout_s
    return CAPTURE_DEADLINE_S + budgets + 2 * NAMESPACE_GONE_S


@dataclass
class RunResult:
    exit_code: int
    error: AicrError | None = None
    tests: int = 0
    passed: int = 0
    failed: int = 0
    not_applicable: int = 0
    not_measured: int = 0
    phase_status: dict[str, str] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list, repr=False)
    # Set when the run's total deadline passed: the reports hold what was measured, and
    # the command ends with this TIMEOUT.
    timed_out: AicrError | None = None


def phase_status(counts: Mapping[str, int]) -> str:
    """The phase verdict from its per-verdict check counts (aicr_tui.core.validation.verdicts)."""
    return phase_verdict(counts)


def _count_attr(status: str) -> str:
    return status.replace(" ", "_")


class _Run:
    def __init__(
        self,
        req: ValidationRequest,
        stream: EventStream,
        executor_factory: Callable[[], ClusterExecutor] | None,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ) -> None:
        self.req = req
        self.stream = stream
        self.factory = executor_factory
        self.clock = clock
        self.sleep = sleep
        self.t0 = clock()
        self.result = RunResult(EXIT_OK)
        self.executor: ClusterExecutor | None = None
        self.current: CheckContext | None = None
        self.deadline = req.deadline or Deadline(default_deadline_s(req))
        total = self.deadline.seconds
        # The checks' own deadline: the run's, less what cleanup keeps.
        self.checks_deadline = Deadline(
            max(0.0, self.deadline.remaining() - cleanup_reserve(total))
        )
        # The namespace was a dead run's validation namespace, taken over: removed at
        # cleanup only when it holds nothing but validation runs' objects.
        self.adopted = False
        # Set by the heartbeat when another run took the lease: the run stops.
        self.lost: AicrError | None = None
        self.stop = asyncio.Event()

    def deadline_passed(self) -> bool:
        return self.checks_deadline.expired()

    def deadline_message(self) -> str:
        return DEADLINE_MESSAGE.format(seconds=self.deadline.seconds)

    def prepare(self) -> tuple[bool, list[str]]:
        """Make the run's namespace its own (aicr_tui.core.validation.isolation): create it when
        missing, take its lease (a refusal undoes the creation and changes nothing), then
        remove what killed runs left. Returns (this run removes the namespace at cleanup,
        log lines)."""
        ex, req = self.executor, self.req
        assert ex is not None
        ns = req.namespace
        created = ex.ensure_namespace(ns, {**NAMESPACE_LABELS, RUN_ID_LABEL: req.run_id})
        try:
            dead = isolation.acquire(ex, ns, req.run_id)
        except AicrError:
            if created:
                with contextlib.suppress(AicrError):
                    ex.delete_namespace(ns, wait=False)
            raise
        lines: list[str] = []
        if dead is not None:
            removed = isolation.sweep_run_objects(ex, ns, req.run_id)
            lines.append(
                f"namespace {ns}: validation run {dead} ended without cleaning up (its lease "
                f"expired); removed {len(removed)} of its objects"
                + (f": {', '.join(removed[:10])}" if removed else "")
            )
            found = ex.get_object("", "v1", "namespaces", ns)
            meta = found.get("metadata") if isinstance(found, dict) else None
            labels = meta.get("labels") if isinstance(meta, dict) else None
            if isinstance(labels, dict) and all(
                labels.get(k) == v for k, v in NAMESPACE_LABELS.items()
            ):
                created = True  # a validation namespace of the dead run: this run removes it
                self.adopted = True
        try:
            lines.extend(isolation.sweep_orphan_namespaces(ex, ns))
        except AicrError as exc:  # e.g. no RBAC to list namespaces: the run goes on
            lines.append(f"could not look for namespaces left by killed runs: {exc.render()}")
        return created, lines

    async def heartbeat(self) -> None:
        """Renew the run's lease until cancelled. A failed renewal is retried next time;
        a lease another run holds (or that is gone) stops the run (``lose``)."""
        while True:
            await asyncio.sleep(isolation.LEASE_RENEW_S)
            if self.executor is None:
                continue
            try:
                await asyncio.to_thread(
                    isolation.renew, self.executor, self.req.namespace, self.req.run_id
                )
            except isolation.LeaseLost as exc:
                self.lose(exc)
                return
            except Exception:  # a transport fault: retried at the next beat
                continue

    def lose(self, err: AicrError) -> None:
        """The run's namespace is no longer its own: stop the running check and every
        later one (each reported not measured with ``err``)."""
        self.lost = err
        if self.current is not None:
            self.current.cancelled.set()
        self.stop.set()

    def lost_message(self) -> str:
        assert self.lost is not None
        return f"not measured: {self.lost.message}"

    def release(self, created_ns: bool) -> list[str]:
        """Cleanup in a namespace this run did not create: its own objects (by run-id
        label) and its lease, nothing else."""
        ex, req = self.executor, self.req
        assert ex is not None
        lines: list[str] = []
        if req.cleanup and not created_ns:
            removed = isolation.sweep_run_objects(ex, req.namespace, "", only_run=req.run_id)
            if removed:
                lines.append(f"cleanup: deleted {', '.join(removed[:10])}")
        isolation.release(ex, req.namespace, req.run_id)
        return lines

    async def kept_adopted(self) -> str:
        """Why the namespace taken over from a dead run is kept (it holds objects that are
        not a validation run's, or they cannot be read), else ""."""
        ex, ns = self.executor, self.req.namespace
        if not self.adopted or ex is None:
            return ""
        try:
            listables = await asyncio.to_thread(isolation.namespaced_listables, ex)
            foreign = await asyncio.to_thread(isolation.foreign_objects, ex, ns, listables)
        except AicrError as exc:
            return (
                f"cleanup: kept namespace {ns}: could not read what it holds ({exc.render()}); "
                f"to remove it: kubectl delete namespace {ns}"
            )
        if not foreign:
            return ""
        return (
            f"cleanup: kept namespace {ns}: it holds objects that are not a validation run's "
            f"({isolation.shown(foreign)}); to remove it with them: kubectl delete namespace {ns}"
        )

    async def stopped_by_loss(self, lost: AicrError) -> RunResult:
        """End a run whose lease another run took: its own objects (by run-id label) are
        removed, the namespace and the lease are left to the run holding them."""
        assert self.executor is not None
        self.bind_deadline(self.deadline)
        if self.req.cleanup:
            try:
                removed = await asyncio.to_thread(
                    isolation.sweep_run_objects,
                    self.executor,
                    self.req.namespace,
                    "",
                    only_run=self.req.run_id,
                )
                if removed:
                    line = f"cleanup: deleted {', '.join(removed[:10])}"
                    await self.emit(LogLine(self.t(), "", "", line))
            except AicrError as exc:
                await self.emit(LogLine(self.t(), "", "", f"cleanup failed: {exc.render()}"))
        self.result.error = lost
        return await self.finish(lost.exit_code, lost.render())

    def bind_deadline(self, deadline: Deadline) -> None:
        """Bound every API call of the live executor by ``deadline``."""
        if isinstance(self.executor, KubernetesExecutor):
            self.executor.deadline = deadline
            self.executor.deadline_total_s = self.deadline.seconds

    def t(self) -> float:
        return round(self.clock() - self.t0, 3)

    async def emit(self, event: Event) -> None:
        self.result.events.append(event)
        await self.stream.publish(event)

    def _count(self, status: str) -> None:
        self.result.tests += 1
        attr = _count_attr(status)
        setattr(self.result, attr, getattr(self.result, attr) + 1)

    async def finish(self, exit_code: int, message: str = "") -> RunResult:
        r = self.result
        r.exit_code = exit_code
        await self.emit(
            RunFinished(
                self.t(),
                r.tests,
                r.passed,
                r.failed,
                r.not_applicable,
                r.not_measured,
                exit_code,
                message,
            )
        )
        return r

    async def refuse(self, err: AicrError) -> RunResult:
        self.result.error = err
        return await self.finish(EXIT_INVALID, err.render())

    # -- readiness --------------------------------------------------------------------
    async def readiness(self) -> AicrError | None:
        req = self.req
        outcomes = evaluate_readiness(req.recipe, req.snapshot)
        names = tuple(o.name for o in outcomes)
        started = self.clock()
        await self.emit(PhaseStarted(self.t(), "readiness", names))
        await self.emit(
            LogLine(self.t(), "readiness", "", f"readiness pre-flight constraints={len(outcomes)}")
        )
        counts = empty_counts()
        for o in outcomes:
            await self.emit(
                CheckStarted(self.t(), "readiness", o.name, 0.0, f"{o.source} constraint")
            )
            await self.emit(LogLine(self.t(), "readiness", o.name, o.log_line))
            status = {"passed": PASSED, "failed": FAILED}.get(o.status, NOT_MEASURED)
            await self.emit(
                Measurement(
                    self.t(),
                    "readiness",
                    o.name,
                    o.name,
                    None,
                    "",
                    o.expected,
                    status,
                    o.actual or "",
                )
            )
            counts[status] += 1
            self._count(status)
            await self.emit(CheckFinished(self.t(), "readiness", o.name, status, o.message, 0))
        st = phase_status(counts)
        self.result.phase_status["readiness"] = st
        await self.emit(self._phase_finished("readiness", st, counts, started))
        return readiness_refusal(req.recipe, req.snapshot, outcomes)

    # -- checks -----------------------------------------------------------------------
    def _guarded(
        self, fn: Callable[[CheckContext], CheckOutcome], ctx: CheckContext
    ) -> CheckOutcome:
        try:
            outcome = fn(ctx)
        except AicrError as exc:
            return not_measured(exc.render())
        except Exception as exc:  # a check bug must surface as "other", never as a pass
            return not_measured(
                f"[INTERNAL] {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
            )
        if outcome.status not in VERDICTS:
            return not_measured(f"[INTERNAL] check returned unknown status {outcome.status!r}")
        return outcome

    async def _unless_stopped(
        self, fn: Callable[[CheckContext], CheckOutcome], ctx: CheckContext
    ) -> CheckOutcome:
        """The check's outcome, or not measured at once when the run lost its lease (the
        check's thread is told to stop and its outcome is dropped)."""
        check = asyncio.ensure_future(asyncio.to_thread(self._guarded, fn, ctx))
        stopped = asyncio.ensure_future(self.stop.wait())
        try:
            await asyncio.wait({check, stopped}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            check.cancel()
            raise
        finally:
            stopped.cancel()
        if check.done():
            return check.result()
        check.cancel()
        return not_measured(self.lost_message())

    async def run_check(self, phase: str, entry: CatalogEntry) -> str:
        assert self.executor is not None
        loop = asyncio.get_running_loop()
        stream = self.stream
        cancelled = threading.Event()
        ctx = CheckContext(
            phase=phase,
            entry=entry,
            recipe=self.req.recipe,
            executor=self.executor,
            run_id=self.req.run_id,
            emit=lambda ev: stream.publish_threadsafe(ev, loop, cancelled),
            clock=self.clock,
            t0=self.t0,
            sleep=self.sleep,
            namespace=self.req.namespace,
            cleanup=self.req.cleanup,
            environ=self.req.environ,
            poll_s=self.req.poll_s,
            cancelled=cancelled,
        )
        await self.emit(
            CheckStarted(self.t(), phase, entry.name, entry.timeout_s, entry.description)
        )
        started = self.clock()
        fn = check_function(entry.name)
        self.current = ctx
        wait = min(entry.timeout_s + WAIT_BUFFER_S, self.checks_deadline.remaining())
        try:
            outcome = await asyncio.wait_for(self._unless_stopped(fn, ctx), timeout=wait)
        except TimeoutError:
            ctx.cancelled.set()
            if self.deadline_passed():
                outcome = not_measured(self.deadline_message())
            else:
                outcome = not_measured(
                    f"timeout: validator did not complete within {format_duration(entry.timeout_s)}"
                )
        ctx.cancelled.set()
        if self.deadline_passed() and outcome.status != PASSED and outcome.status != FAILED:
            outcome = not_measured(self.deadline_message())
        if self.lost is not None and outcome.status != PASSED and outcome.status != FAILED:
            outcome = not_measured(self.lost_message())
        duration = int(round((self.clock() - started) * 1000))
        self._count(outcome.status)
        await self.emit(
            CheckFinished(
                self.t(),
                phase,
                entry.name,
                outcome.status,
                outcome.message,
                duration,
                dict(outcome.extra),
            )
        )
        return outcome.status

    async def _synthetic_skip(
        self, phase: str, e: CatalogEntry, message: str, extra: dict[str, str]
    ) -> None:
        """A check the run does not execute (dry run, --skip-check, --fail-fast): not measured."""
        await self.emit(CheckStarted(self.t(), phase, e.name, e.timeout_s, e.description))
        self._count(NOT_MEASURED)
        await self.emit(CheckFinished(self.t(), phase, e.name, NOT_MEASURED, message, 0, extra))

    def _phase_finished(
        self, phase: str, status: str, counts: Mapping[str, int], started: float
    ) -> PhaseFinished:
        return PhaseFinished(
            self.t(),
            phase,
            status,
            counts[PASSED],
            counts[FAILED],
            counts["not applicable"],
            counts[NOT_MEASURED],
            int(round((self.clock() - started) * 1000)),
        )

    async def phase(self, phase: str, *, skip_all: str = "") -> str:
        req = self.req
        declared = set(req.recipe.phase(phase).checks)
        if req.no_cluster:
            entries = req.catalog.phase_entries(phase)
        else:
            entries = [e for e in req.catalog.phase_entries(phase) if e.name in declared]
        started = self.clock()
        await self.emit(PhaseStarted(self.t(), phase, tuple(e.name for e in entries)))
        counts = empty_counts()
        if not entries:
            await self.emit(
                LogLine(
                    self.t(),
                    phase,
                    "",
                    f"phase {phase} has no checks declared in the recipe; not applicable",
                )
            )
        for e in entries:
            if skip_all:
                await self._synthetic_skip(phase, e, skip_all, {})
                counts[NOT_MEASURED] += 1
            elif req.no_cluster:
                await self._synthetic_skip(
                    phase, e, NO_CLUSTER_MESSAGE, {"skipReason": SKIP_REASON_NO_CLUSTER}
                )
                counts[NOT_MEASURED] += 1
            elif self.lost is not None:
                await self._synthetic_skip(phase, e, self.lost_message(), {})
                counts[NOT_MEASURED] += 1
            elif self.deadline_passed():
                await self._synthetic_skip(phase, e, self.deadline_message(), {})
                counts[NOT_MEASURED] += 1
            elif e.name in req.skip_checks:
                await self._synthetic_skip(
                    phase, e, SKIP_CHECK_MESSAGE, {"skipReason": SKIP_REASON_WITHHELD}
                )
                counts[NOT_MEASURED] += 1
            else:
                counts[await self.run_check(phase, e)] += 1
        st = phase_status(counts)
        self.result.phase_status[phase] = st
        await self.emit(self._phase_finished(phase, st, counts, started))
        return st

    def check_skip_list(self, cluster_phases: list[str]) -> AicrError | None:
        """--skip-check names must exist and must leave every requested phase something to run."""
        req = self.req
        if not req.skip_checks:
            return None
        unknown = [n for n in req.skip_checks if req.catalog.entry(n) is None]
        if unknown:
            return invalid(f"--skip-check names no catalog check: {', '.join(unknown)}")
        for phase in cluster_phases:
            declared = [n for n in req.recipe.phase(phase).checks if req.catalog.entry(n, phase)]
            if declared and all(n in req.skip_checks for n in declared):
                return invalid(
                    f"--skip-check would leave phase {phase} with nothing to run; drop --phase {phase} instead"
                )
        return None

    async def run(self) -> RunResult:
        req = self.req
        req.namespace = isolation.run_namespace(req.namespace, req.run_id)
        await self.emit(
            RunStarted(
                0.0,
                req.run_id,
                req.started_ms,
                req.phases,
                "no-cluster" if req.no_cluster else "cluster",
                req.recipe.source,
                __version__,
                req.allow_unmeasured,
            )
        )
        mode = (
            "validating in --no-cluster mode — offline dry-run; readiness is evaluated, every check is reported skipped"
            if req.no_cluster
            else "validating against the live cluster — validation workloads will be created in namespace "
            + req.namespace
        )
        await self.emit(LogLine(self.t(), "", "", mode))
        if req.recipe.allocation_policy:
            await self.emit(
                LogLine(
                    self.t(),
                    "",
                    "",
                    f"GPU allocation policy: {req.recipe.allocation_policy} (resolved from the "
                    "recipe's hydrated values before any cluster work; checks verify it)",
                )
            )
        refusal = await self.readiness()
        if refusal is not None:
            return await self.refuse(refusal)
        try:
            preflight_declared_checks(req.recipe.declared_checks(), req.catalog)
        except AicrError as exc:
            return await self.refuse(exc)
        cluster_phases = [p for p in req.phases if p in CLUSTER_PHASES]
        bad_skip = self.check_skip_list(cluster_phases)
        if bad_skip is not None:
            return await self.refuse(bad_skip)
        created_ns = False
        if cluster_phases and not req.no_cluster:
            if self.factory is None:
                return await self.refuse(internal("no cluster executor configured for a live run"))
            try:
                self.executor = await asyncio.to_thread(self.factory)
                self.bind_deadline(self.checks_deadline)
                created_ns, lines = await asyncio.to_thread(self.prepare)
            except AicrError as exc:
                self.result.error = exc
                return await self.finish(
                    exc.exit_code, f"cluster preparation failed: {exc.render()}"
                )
            await self.emit(
                LogLine(
                    self.t(),
                    "",
                    "",
                    f"running validation phases runID={req.run_id} phases=[{' '.join(cluster_phases)}] server={self.executor.server_address()}",
                )
            )
            for line in lines:
                await self.emit(LogLine(self.t(), "", "", line))
        beat = asyncio.create_task(self.heartbeat()) if self.executor is not None else None
        try:
            stop = ""
            for p in cluster_phases:
                status = await self.phase(p, skip_all=stop)
                if req.fail_fast and status in (FAILED, NOT_MEASURED) and not stop:
                    stop = FAIL_FAST_MESSAGE
        except asyncio.CancelledError:
            # Interrupted (Ctrl-C, screen closed): stop the running check and still remove
            # the namespace this run created, so an abandoned run leaves nothing behind.
            if self.current is not None:
                self.current.cancelled.set()
            if beat is not None:
                beat.cancel()
            if self.executor is not None:
                self.bind_deadline(self.deadline)
                with contextlib.suppress(AicrError):
                    if req.cleanup and created_ns and self.lost is None:
                        await asyncio.shield(
                            asyncio.to_thread(self.executor.delete_namespace, req.namespace)
                        )
                    else:
                        await asyncio.shield(asyncio.to_thread(self.release, created_ns))
            raise
        if beat is not None:
            beat.cancel()
        if self.lost is not None:
            # The namespace is another run's now: remove only this run's own objects.
            return await self.stopped_by_loss(self.lost)
        if self.executor is not None:
            self.bind_deadline(self.deadline)
            try:
                for line in await asyncio.to_thread(self.release, created_ns):
                    await self.emit(LogLine(self.t(), "", "", line))
            except AicrError as exc:
                await self.emit(LogLine(self.t(), "", "", f"cleanup failed: {exc.render()}"))
            kept = await self.kept_adopted() if req.cleanup and created_ns else ""
            if kept:
                await self.emit(LogLine(self.t(), "", "", kept))
            elif req.cleanup and created_ns:
                try:
                    await asyncio.to_thread(self.executor.delete_namespace, req.namespace)
                    await self.emit(
                        LogLine(self.t(), "", "", f"cleanup: deleted namespace {req.namespace}")
                    )
                except AicrError as exc:
                    await self.emit(LogLine(self.t(), "", "", f"cleanup failed: {exc.render()}"))
            elif not req.cleanup:
                await self.emit(
                    LogLine(
                        self.t(),
                        "",
                        "",
                        f"--no-cleanup: workloads kept; inspect with kubectl logs -l {RUN_ID_LABEL}={req.run_id} -n {req.namespace}",
                    )
                )
        code = exit_code_for(self.result.events)
        gaps = [u for u in unmeasured_checks(self.result.events) if not u.waived]
        message = ""
        if self.deadline_passed():
            err = timeout_error("the validation run", self.deadline.seconds)
            err.remedy = "raise it with --deadline SECONDS (env AICR_DEADLINE)"
            self.result.timed_out = err
            return await self.finish(err.exit_code, err.render())
        if gaps:
            names = ", ".join(f"{u.phase}/{u.check}" for u in gaps)
            message = f"{len(gaps)} declared check(s) not measured: {names}" + (
                " (allowed by --allow-unmeasured)" if req.allow_unmeasured else ""
            )
        return await self.finish(code, message)


async def run_validation(
    req: ValidationRequest,
    stream: EventStream,
    executor_factory: Callable[[], ClusterExecutor] | None = None,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    close_stream: bool = True,
) -> RunResult:
    """Run ``req``, publishing every event on ``stream``; closes the stream at the end."""
    if not req.started_ms:
        req.started_ms = int(time.time() * 1000)
    if not req.run_id:
        req.run_id = new_run_id(datetime.fromtimestamp(req.started_ms / 1000, UTC))
    try:
        return await _Run(req, stream, executor_factory, clock, sleep).run()
    finally:
        if close_stream:
            await stream.close()
