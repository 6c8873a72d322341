"""``aicr-tui validate``: readiness, then deployment → conformance → performance, streamed live.

Progress goes to stderr as it happens (a rich live table on a terminal, one plain line per
event when piped); the CTRF JSON report goes to ``--output`` or stdout at the end, JUnit XML
to ``--junit``, the event stream to ``--record``. ``--replay FILE`` re-emits a recording (first line ``replaying <file> (recorded <when>,
recipe <name>)``; the recorded run-level lines are marked ``recorded``, nothing runs against
a cluster) and rebuilds the same reports; by default it is paced to last about three
seconds, ``--replay-speed`` sets the factor (1 = as recorded, 0 = no pacing).

Verdicts (aicr_tui.core.validation.verdicts): passed, failed, not applicable (a documented rule
exempts the gate), not measured (the check could not measure, and says why).
Exit codes: 0 every declared check passed or was not applicable; 2 invalid input, readiness
refused, a declared check unknown or the recipe's GPU allocation policy invalid (nothing
written); 8 a check failed, or a declared gate was not measured (one stderr line per such
check; ``--allow-unmeasured`` turns those into warnings).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

from aicr_tui.commands._common import emit, warn
from aicr_tui.core.foundation.textsafe import safe_text
from aicr_tui.screens.markup import escape_markup

if TYPE_CHECKING:
    from aicr_tui.core.documents.snapshot import Snapshot
    from aicr_tui.core.foundation.deadline import Deadline
    from aicr_tui.core.services.validation import ValidationSession
    from aicr_tui.core.validation.events import Event
    from aicr_tui.core.validation.recipe_view import RecipeView
    from aicr_tui.core.validation.stream import EventStream, Subscription

PHASE_CHOICES = ("readiness", "deployment", "performance", "conformance", "all")


def register(sub: Any) -> None:
    from aicr_tui.core.services.replay import MAX_REPLAY_SPEED, MIN_REPLAY_SPEED

    p = sub.add_parser(
        "validate",
        help="validate a cluster against a recipe: readiness, deployment, conformance, performance",
        description=(
            "Validate a cluster against a recipe. Readiness constraints are evaluated against the "
            "snapshot first (refused with exit 2 before any cluster work); then the recipe's "
            "declared checks run phase by phase and stream as they happen."
        ),
    )
    inputs = p.add_argument_group("inputs")
    inputs.add_argument(
        "-r", "--recipe", metavar="FILE", help="recipe (RecipeResult) to validate against"
    )
    inputs.add_argument(
        "-s",
        "--snapshot",
        metavar="FILE",
        help="snapshot to evaluate readiness against (default: capture live)",
    )
    inputs.add_argument(
        "--aks-gpu-pools",
        metavar="FILE",
        help="`az aks nodepool list -o json` dump for the live capture (env AICR_AKS_GPU_POOLS_PATH)",
    )
    inputs.add_argument(
        "--oke-addons",
        metavar="FILE",
        help="`oci ce cluster list-addons` dump for the live capture (env AICR_OKE_ADDONS_PATH)",
    )
    inputs.add_argument(
        "--data",
        metavar="DIR",
        help="external data dir; DIR/validators/catalog.yaml overrides catalog entries",
    )
    run = p.add_argument_group("run")
    run.add_argument(
        "--phase",
        action="append",
        choices=PHASE_CHOICES,
        metavar="PHASE",
        help="readiness|deployment|performance|conformance|all (repeatable; default all)",
    )
    run.add_argument(
        "--skip-check",
        action="append",
        default=[],
        metavar="NAME",
        help="withhold a check (repeatable); reported skipped, not dropped",
    )
    run.add_argument(
        "--allow-unmeasured",
        action="store_true",
        help="a declared gate that could not be measured warns instead of making the run exit 8",
    )
    run.add_argument(
        "--fail-fast",
        action="store_true",
        help="after a failing phase, report the later phases not measured instead of running them",
    )
    run.add_argument(
        "--no-cluster",
        action="store_true",
        help="offline dry run: readiness only, every check reported skipped",
    )
    run.add_argument(
        "--no-cleanup",
        action="store_true",
        help="keep the namespace, pods and jobs the checks created",
    )
    run.add_argument(
        "-k", "--kubeconfig", metavar="KUBECONFIG", help="kubeconfig for every cluster operation"
    )
    run.add_argument("--context", metavar="CONTEXT", help="kubeconfig context")
    run.add_argument(
        "-n",
        "--namespace",
        metavar="NAMESPACE",
        default=os.environ.get("AICR_NAMESPACE") or "",
        help="namespace for validation workloads, held by a lease: a second run on it is "
        "refused (default: a new namespace of the run's own, aicr-validation-<token>; env "
        "AICR_NAMESPACE)",
    )
    run.add_argument(
        "--deadline",
        type=float,
        default=None,
        metavar="SECONDS",
        help="total time the command may take, live capture, checks and cleanup included "
        "(default: 120 s + the budgets of the checks it runs + 240 s; env AICR_DEADLINE)",
    )
    out = p.add_argument_group("output")
    out.add_argument("-o", "--output", metavar="FILE", help="CTRF JSON report (default: stdout)")
    out.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report")
    rec = out.add_mutually_exclusive_group()
    rec.add_argument("--record", metavar="FILE", help="record the event stream as JSONL")
    rec.add_argument(
        "--replay", metavar="FILE", help="replay a recorded event stream instead of running"
    )
    out.add_argument(
        "--replay-speed",
        type=float,
        metavar="FACTOR",
        help=(
            "replay pacing factor (1 = as recorded, 10 = ten times faster, 0 = no pacing; "
            f"otherwise from {MIN_REPLAY_SPEED:g} to {MAX_REPLAY_SPEED:g}; default: whatever "
            "makes the replay last about 3 seconds)"
        ),
    )
    out.add_argument("--plain", action="store_true", help="plain progress lines even on a terminal")


# -- rendering ---------------------------------------------------------------------------


def _dur(ms: int) -> str:
    s = ms / 1000
    return f"{s:.1f}s" if s < 60 else f"{int(s // 60)}m{int(s % 60):02d}s"


def format_event(
    event: Event, *, replay: bool = False, tally: RunTally | None = None
) -> str | None:
    """One plain progress line for ``event`` (None for events shown only in the table).

    In a replay the run's own lines ("validating against the live cluster", "cleanup: …")
    are marked as recorded, so nothing reads as an action happening now. A recording is a
    file anyone may have edited, so the line is terminal-safe: escape sequences and control
    characters in its names, log lines and messages are removed.
    """
    line = _format_event(event, replay=replay, tally=tally)
    return None if line is None else safe_text(line)


class RunTally:
    """What the run's last line adds to its counts: the checks that failed, in order (the
    line a reader sees; the failure itself may be far above; checks not measured are named
    by the line's own message), and the readiness constraints, which the CTRF report keeps
    out of its summary (as upstream), so the line says what the file's counts leave out."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.readiness: dict[str, int] = {}

    def see(self, event: Event) -> RunTally:
        from aicr_tui.core.validation import events as ev

        if isinstance(event, ev.CheckFinished):
            if event.status == "failed":
                self.failed.append(f"{event.phase}/{event.check}")
            if event.phase == "readiness":
                self.readiness[event.status] = self.readiness.get(event.status, 0) + 1
        return self

    def ctrf_note(self, tests: int, passed: int) -> str:
        total = sum(self.readiness.values())
        if not total:
            return ""
        return (
            f"; the CTRF report's summary leaves out the {total} readiness constraint(s) "
            f"(tests={tests - total} passed={passed - self.readiness.get('passed', 0)}; "
            "they are under results.extra.readiness)"
        )


def _format_event(
    event: Event, *, replay: bool = False, tally: RunTally | None = None
) -> str | None:
    from aicr_tui.core.validation import events as ev

    if isinstance(event, ev.LogLine):
        if not event.check:
            mark = "recorded: " if replay else ""
            return f"[{event.phase or 'run'}] {mark}{event.line}"
        return f"    {event.phase}/{event.check} | {event.line}"
    if isinstance(event, ev.Measurement):
        if event.phase == "readiness":
            return None  # the readiness log line already names expected and actual
        value = event.display or "n/a"
        unit = f" {event.unit}" if event.unit and event.display else ""
        gate = f" vs {event.threshold}" if event.threshold else ""
        note = (
            f" ({event.note})"
            if event.note and event.verdict in ("not applicable", "not measured")
            else ""
        )
        return f"    {event.phase}/{event.check} gate {event.name}: {value}{unit}{gate} → {event.verdict.upper()}{note}"
    if isinstance(event, ev.CheckStarted):
        if event.phase == "readiness":
            return None
        budget = f" (budget {_dur(int(event.timeout_s * 1000))})" if event.timeout_s else ""
        return f"  {event.phase}/{event.check} running{budget}"
    if isinstance(event, ev.CheckFinished):
        msg = f": {event.message}" if event.message else ""
        took = f" ({_dur(event.duration_ms)})" if event.duration_ms else ""
        from aicr_tui.core.validation.verdicts import reported_status

        status = reported_status(event.status, event.extra)
        return f"  {status.upper():14} {event.phase}/{event.check}{took}{msg}"
    if isinstance(event, ev.PhaseStarted):
        return f"phase {event.phase}: {len(event.checks)} check(s)"
    if isinstance(event, ev.PhaseFinished):
        return (
            f"phase {event.phase} {event.status}: passed={event.passed} failed={event.failed} "
            f"not-applicable={event.not_applicable} not-measured={event.not_measured} "
            f"duration={_dur(event.duration_ms)}"
        )
    if isinstance(event, ev.RunStarted):
        if replay:
            return (
                f"recorded run {event.run_id} (recorded as {event.mode}): "
                f"phases {', '.join(event.phases)}"
            )
        return f"validation run {event.run_id} ({event.mode}): phases {', '.join(event.phases)}"
    if isinstance(event, ev.RunFinished):
        verdict = {0: "passed", 2: "refused", 8: "failed"}.get(event.exit_code, "ended")
        if event.exit_code == 8 and not event.failed:
            verdict = "not measured"  # no check failed, but a declared gate holds no result
        # a refusal's message is printed once, by the CLI's error line
        tail = f": {event.message}" if event.message and event.exit_code in (0, 8) else ""
        failed = tally.failed if tally is not None else []
        named = f" ({', '.join(failed)} failed)" if failed and event.exit_code == 8 else ""
        if tally is not None and event.exit_code in (0, 8):  # a report was written
            tail += tally.ctrf_note(event.tests, event.passed)
        return (
            f"validation {verdict}{named}: tests={event.tests} passed={event.passed} failed={event.failed} "
            f"not-applicable={event.not_applicable} not-measured={event.not_measured} "
            f"exit={event.exit_code}{tail}"
        )
    return None


async def render_plain(sub: Subscription, out: TextIO, *, replay: bool = False) -> None:
    tally = RunTally()
    async for batch in sub.batches(256):
        lines = [
            line
            for e in batch
            if (line := format_event(e, replay=replay, tally=tally.see(e))) is not None
        ]
        if lines:
            out.write("\n".join(lines) + "\n")
            out.flush()


class LiveTable:
    """The rich live table: a view of the run's one progress model
    (:class:`aicr_tui.core.validation.progress.ProgressModel`, the dashboard's too), one row per check."""

    STYLES = {
        "passed": "green",
        "failed": "bold red",
        "not measured": "bold yellow",
        "not applicable": "dim",
        "running": "cyan",
    }
    LATEST_CHARS = 70

    def __init__(self, replay_title: str = "") -> None:
        from aicr_tui.core.validation.progress import ProgressModel

        self.model = ProgressModel()
        self.replay_title = replay_title  # set for a replay: the title never says "live"
        self.footer = ""
        self.tally = RunTally()

    def apply(self, event: Event) -> None:
        self.model.apply(event)
        tally = self.tally.see(event)
        if event.TYPE == "RunFinished":
            self.footer = format_event(event, tally=tally) or ""

    @property
    def title(self) -> str:
        if self.replay_title:
            return self.replay_title
        if self.model.run_id:
            return f"aicr-tui validate · run {self.model.run_id} · {self.model.mode}"
        return "aicr-tui validate"

    @property
    def rows(self) -> dict[tuple[str, str], tuple[str, str, str, str, str]]:
        """(phase, check) → (phase, check, status, time, latest), in the order seen."""
        return {
            (r.phase, r.name): (
                r.phase,
                r.name,
                r.status,
                r.duration if r.duration_ms else "",
                r.latest[: self.LATEST_CHARS],
            )
            for r in self.model.rows.values()
        }

    def renderable(self) -> Any:
        from rich.table import Table

        # Rich reads table cells, title and caption as markup: document text is escaped.
        table = Table(
            title=escape_markup(self.title),
            caption=escape_markup(self.footer) if self.footer else None,
            expand=True,
        )
        table.add_column("phase", no_wrap=True, min_width=11)
        table.add_column("check", no_wrap=True, overflow="ellipsis", min_width=16, max_width=30)
        table.add_column("status", no_wrap=True, min_width=14)
        table.add_column("time", no_wrap=True, min_width=6, justify="right")
        table.add_column("latest", no_wrap=True, overflow="ellipsis", ratio=1)
        for phase, check, status, took, latest in self.rows.values():
            shown = escape_markup(status)
            table.add_row(
                escape_markup(phase),
                escape_markup(check),
                f"[{self.STYLES[status]}]{shown}[/]" if status in self.STYLES else shown,
                escape_markup(took),
                escape_markup(latest),
            )
        return table


async def render_live(sub: Subscription, title: str = "") -> None:
    from rich.console import Console
    from rich.live import Live

    state = LiveTable(title)
    console = Console(stderr=True)
    with Live(state.renderable(), console=console, refresh_per_second=8, transient=False) as live:
        async for batch in sub.batches(1024):
            for e in batch:
                state.apply(e)
            live.update(state.renderable())


# -- inputs ------------------------------------------------------------------------------


def _check_output_path(path: str | None, flag: str) -> None:
    """Before the run: an output that can never be written (a symbolic link, a directory,
    no such parent directory) is refused now, not after the checks ran."""
    from aicr_tui.core.foundation.fileio import check_output_file

    if path:
        check_output_file(path, f"{flag} file")


def run_deadline(args: argparse.Namespace) -> Deadline | None:
    """The command's total deadline from --deadline or AICR_DEADLINE (None: the default)."""
    from aicr_tui.core.foundation.deadline import Deadline
    from aicr_tui.core.foundation.errors import invalid
    from aicr_tui.core.validation.runner import MAX_DEADLINE_S

    raw: object = args.deadline
    where = "--deadline"
    if raw is None:
        env = os.environ.get("AICR_DEADLINE") or ""
        if not env:
            return None
        where = "AICR_DEADLINE"
        try:
            raw = float(env)
        except ValueError:
            raise invalid(
                f"AICR_DEADLINE {safe_text(env[:40])!r} is not a number of seconds"
            ) from None
    value = float(raw)  # type: ignore[arg-type]
    if not 0 < value <= MAX_DEADLINE_S:
        raise invalid(
            f"{where} {value:g} is out of range: expected 0 < SECONDS <= {MAX_DEADLINE_S:g}"
        )
    return Deadline(value)


def _capture_deadline(deadline: Deadline | None) -> float:
    from aicr_tui.core.validation.runner import CAPTURE_DEADLINE_S

    return (
        CAPTURE_DEADLINE_S
        if deadline is None
        else max(0.05, min(CAPTURE_DEADLINE_S, deadline.remaining()))
    )


def load_inputs(
    args: argparse.Namespace, deadline: Deadline | None = None
) -> tuple[RecipeView, Snapshot | None]:
    from aicr_tui.core.documents.snapshot import load_snapshot
    from aicr_tui.core.foundation.errors import invalid
    from aicr_tui.core.recipe.loading import load_recipe
    from aicr_tui.core.services.validation import resolved_view

    # the #1327 policy is resolved before any cluster work (an incoherent one is exit 2)
    recipe = resolved_view(load_recipe(args.recipe), args.recipe, args.data)
    if args.snapshot:
        if args.aks_gpu_pools or args.oke_addons:
            warn("--aks-gpu-pools/--oke-addons are ignored when --snapshot is given")
        return recipe, load_snapshot(args.snapshot)
    if args.no_cluster:
        raise invalid(
            "--no-cluster requires --snapshot", remedy="capture one with `aicr-tui snapshot`"
        )
    # Project the dumps first: a bad dump fails before any cluster work.
    from aicr_tui.core.capture.capture import attach_projections, project_dumps

    projections = project_dumps(
        aks_pools=args.aks_gpu_pools or os.environ.get("AICR_AKS_GPU_POOLS_PATH") or None,
        oke_addons=args.oke_addons or os.environ.get("AICR_OKE_ADDONS_PATH") or None,
        legacy_daemonset=None,
    )
    from aicr_tui.core.live.kube import collect_cluster

    base = collect_cluster(
        args.kubeconfig, args.context, deadline=_capture_deadline(deadline)
    ).snapshot
    captured = attach_projections(base, projections)
    for message in captured.warnings:
        warn(message)
    return recipe, captured.snapshot


# -- run ---------------------------------------------------------------------------------


async def _drive(
    args: argparse.Namespace, producer: Any, stream: EventStream, replay_title: str = ""
) -> Any:
    import asyncio

    live = sys.stderr.isatty() and not args.plain and os.environ.get("TERM") != "dumb"
    sub = stream.subscribe()  # before the producer starts, so no event is missed
    renderer = asyncio.create_task(
        render_live(sub, replay_title)
        if live
        else render_plain(sub, sys.stderr, replay=bool(replay_title))
    )
    try:
        result = await producer
    finally:
        if not stream.closed:
            await stream.close()
        await renderer
    return result


def run(args: argparse.Namespace) -> int:
    from aicr_tui.core.foundation.errors import invalid

    if args.replay_speed is not None and not args.replay:
        raise invalid("--replay-speed needs --replay")
    for path, flag in (
        (args.output, "--output"),
        (args.junit, "--junit"),
        (args.record, "--record"),
    ):
        _check_output_path(path, flag)
    if args.replay:
        _refuse_run_inputs(args)
        return _run_replay(args)
    if not args.recipe:
        raise invalid("--recipe is required (or --replay FILE to replay a recording)")
    return _run_live(args)


def _write_reports(args: argparse.Namespace, report: dict[str, Any], recorder: Any = None) -> None:
    """The run's outputs (--record, --junit, the CTRF report) all land or none does: a
    later one failing never leaves an earlier one behind."""
    from aicr_tui.core.foundation.fileio import OutputSet
    from aicr_tui.core.validation.reports.ctrf import render_ctrf
    from aicr_tui.core.validation.reports.junit import render_junit

    ctrf = render_ctrf(report)
    to_file = bool(args.output) and args.output != "-"
    with OutputSet() as out:
        if recorder is not None:
            out.add_staged(recorder.target, recorder.staged(), what="--record file")
        if args.junit:
            out.add(args.junit, render_junit(report).encode("utf-8"), what="--junit file")
        if to_file:
            out.add(args.output, ctrf.encode("utf-8"), what="--output file")
        out.commit()
    if not to_file:
        emit(ctrf, None)


# What a live run takes as input; a replay re-emits the recorded run's own, so any of these
# beside --replay would be silently ignored (a training recording "passing" for another
# recipe): refused instead.
_RUN_INPUTS = (
    ("recipe", "--recipe"),
    ("snapshot", "--snapshot"),
    ("kubeconfig", "--kubeconfig"),
    ("context", "--context"),
    ("aks_gpu_pools", "--aks-gpu-pools"),
    ("oke_addons", "--oke-addons"),
    ("data", "--data"),
    ("phase", "--phase"),
    ("skip_check", "--skip-check"),
    ("no_cluster", "--no-cluster"),
    ("fail_fast", "--fail-fast"),
    ("no_cleanup", "--no-cleanup"),
)


def _refuse_run_inputs(args: argparse.Namespace) -> None:
    from aicr_tui.core.foundation.errors import invalid

    for attr, flag in _RUN_INPUTS:
        if getattr(args, attr, None):
            short = {"--recipe": " (-r)", "--snapshot": " (-s)", "--kubeconfig": " (-k)"}
            raise invalid(
                f"{flag}{short.get(flag, '')} cannot be given with --replay: a replay re-emits "
                "the recorded run (its recipe, snapshot, cluster and phases) and checks "
                "nothing again; validate without --replay to run with it"
            )


def _run_replay(args: argparse.Namespace) -> int:
    import asyncio

    from aicr_tui.core.services.replay import open_replay, play
    from aicr_tui.core.validation.outcome import exit_code_for
    from aicr_tui.core.validation.reports.ctrf import CtrfBuilder
    from aicr_tui.core.validation.stream import EventStream

    opened = open_replay(args.replay, args.replay_speed)
    stream = EventStream()
    builder = CtrfBuilder()
    stream.add_sink(builder)
    sys.stderr.write(opened.header + "\n")
    asyncio.run(_drive(args, play(opened, stream), stream, opened.header))
    _write_reports(args, builder.report())
    # The verdict is recomputed from the events with this command's --allow-unmeasured,
    # never the recorded run's (a header field anyone can flip).
    allow = bool(args.allow_unmeasured)
    events = list(opened.events)
    report_unmeasured(events, allow)
    return exit_code_for(events, allow_unmeasured=allow)


def report_unmeasured(events: list[Event], allow: bool | None = None) -> None:
    """One stderr line per declared check that was not measured, and why."""
    from aicr_tui.core.validation.outcome import unmeasured_report

    for line in unmeasured_report(events, allow_unmeasured=allow):
        sys.stderr.write(safe_text(line) + "\n")
    sys.stderr.flush()


def session_from_args(
    args: argparse.Namespace,
    recipe: RecipeView,
    snapshot: Snapshot | None,
    deadline: Deadline | None = None,
) -> ValidationSession:
    """The validation session ``aicr-tui validate`` asks for (the wizard builds the same)."""
    from aicr_tui.core.services.validation import ValidationSession

    return ValidationSession(
        recipe=recipe,
        recipe_source=args.recipe,
        snapshot=snapshot,
        data_dir=args.data,
        phases=list(args.phase or []),
        no_cluster=args.no_cluster,
        cleanup=not args.no_cleanup,
        namespace=args.namespace,
        skip_checks=tuple(args.skip_check),
        fail_fast=args.fail_fast,
        allow_unmeasured=args.allow_unmeasured,
        kubeconfig=args.kubeconfig,
        context=args.context,
        deadline=deadline,
    )


def _run_live(args: argparse.Namespace) -> int:
    import asyncio

    from aicr_tui.core.services.validation import build_request, run_session
    from aicr_tui.core.validation.recording import Recorder
    from aicr_tui.core.validation.reports.ctrf import CtrfBuilder
    from aicr_tui.core.validation.runner import select_phases
    from aicr_tui.core.validation.stream import EventStream

    select_phases(args.phase)  # a bad --phase fails before any input is read
    deadline = run_deadline(args)  # a bad --deadline too; the clock starts here
    inputs = load_inputs(args, deadline)  # the recipe and its policy are refused first
    if not args.no_cluster:
        from aicr_tui.core.live.kube import preflight_kubeconfig

        preflight_kubeconfig(args.kubeconfig)  # a bad kubeconfig fails before any check runs
    session = session_from_args(args, *inputs, deadline)
    request = build_request(session)

    stream = EventStream()
    builder = CtrfBuilder()
    stream.add_sink(builder)
    recorder = Recorder(args.record) if args.record else None
    if recorder is not None:
        stream.add_sink(recorder)
    try:
        result = asyncio.run(_drive(args, run_session(session, stream, request=request), stream))
    except BaseException:
        if recorder is not None:
            recorder.abort()
        raise
    if result.error is not None:
        if recorder is not None:
            recorder.abort()
        raise result.error
    try:
        _write_reports(args, builder.report(), recorder)
    except BaseException:
        if recorder is not None:
            recorder.abort()
        raise
    if result.timed_out is not None:
        raise result.timed_out
    report_unmeasured(result.events)
    return int(result.exit_code)
