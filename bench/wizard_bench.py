"""Wizard benchmark: cold start to the first interactive screen, keystroke-to-verdict latency.

1. Cold start: a whole process that starts the wizard as ``run_wizard`` does (``--demo``,
   headless) and leaves as soon as the capture screen is interactive, against a process
   running a bare Textual app to the same point. Interleaved runs, medians of wall time
   (budget <= 1.25x) and, beside them, of CPU time.
2. Keystroke to verdict: on the recipe screen, → on the focused gpuStack select steps it to
   the next value (the one-key way to change a criterion; the keys as the terminal driver
   delivers them), which re-qualifies and repaints the verdict, constraints and
   troubleshooting panel. Stepping round the three values passes and fails in turn, so
   the troubleshooting panel opens and closes too. Measured from the key to the first
   frame painted after the verdict was rendered (a verdict that never comes fails the
   benchmark); median and p95 (budget: p95 <= 16 ms, one frame at 60 Hz), beside the same
   key stepping a bare Textual app's one Select (the floor: Textual's own select and
   footer work for that key), and the event loop's CPU time for the same span. Choosing
   in the opened list (enter, an arrow, enter: the verdict after the choosing enter) is
   measured the same way and reported for information, beside its own floor, and so is
   stepping the os select (values an overlay covers and ones none does: new criteria).

Run: ``python -m bench.wizard_bench``. Not a timed test.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

from bench._harness import (
    Row,
    load_note,
    missed,
    paired_process_runs,
    prepare_environment,
    ratio_budget,
    report,
)

REPEAT_START = 9
KEYSTROKES = 25
START_BUDGET = 1.25
KEY_BUDGET_MS = 16.0
KEY_TIMEOUT_S = 10.0


async def _bare_ready(pilot) -> None:
    await pilot.pause()
    pilot.app.exit()


def child_bare() -> None:
    from textual.app import App, ComposeResult
    from textual.widgets import Footer, Header, Label

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Header()
            yield Label("ready")
            yield Footer()

    Bare().run(headless=True, size=(80, 24), auto_pilot=_bare_ready)


async def _wizard_ready(pilot) -> None:
    # auto_pilot starts once the app is ready: the capture screen is mounted and its sample
    # list focused (asserted, so the measurement cannot stop early).
    from aicr_tui.screens.capture import CaptureScreen

    app = pilot.app
    await pilot.pause()
    assert isinstance(app.screen, CaptureScreen) and app.focused is not None
    app.exit()


def child_wizard() -> None:
    # What run_wizard (``aicr-tui --demo``) does, headless and leaving at the first screen.
    from aicr_tui.app import create_app, freeze_startup_heap

    app = create_app(demo=True)
    freeze_startup_heap()
    app.run(headless=True, size=(80, 24), auto_pilot=_wizard_ready)


async def _workers_done(app) -> None:
    """Wait for thread workers; a superseded exclusive worker is reported cancelled."""
    from textual.worker import WorkerCancelled

    try:
        await app.workers.wait_for_complete()
    except WorkerCancelled:
        await app.workers.wait_for_complete([w for w in app.workers if not w.is_cancelled])


async def _until(condition, what: str) -> None:
    deadline = time.perf_counter() + KEY_TIMEOUT_S
    while not condition():
        if time.perf_counter() > deadline:
            raise RuntimeError(f"{what}: not reached {KEY_TIMEOUT_S:g} s after the key")
        await asyncio.sleep(0.001)


class Keystrokes:
    """Keys as the terminal driver delivers them, and the frames painted after them.

    ``App._display`` receives every frame the compositor renders (headless, it is not
    written to a terminal, which is the same for the floor); a keystroke's verdict is on
    screen in the first frame painted after the screen applied it. Each frame also records
    the event loop thread's CPU clock, so a keystroke's cost can be told apart from the
    time other processes on the machine took the CPU away.
    """

    def __init__(self, app) -> None:
        self.app = app
        self.paints: list[tuple[float, float]] = []  # (wall, thread CPU) of each frame
        original = app._display

        def display(screen, renderable) -> None:
            original(screen, renderable)
            if renderable is not None:
                self.paints.append((time.perf_counter(), time.thread_time()))

        app._display = display

    def first_paint_after(self, moment: float) -> tuple[float, float] | None:
        return next((p for p in self.paints if p[0] >= moment), None)

    def send(self, key: str, character: str | None = None) -> tuple[float, float]:
        from textual import events

        event = events.Key(key, character)
        event.set_sender(self.app)
        sent = time.perf_counter(), time.thread_time()
        self.app._driver.send_message(event)
        return sent


async def choose_by_keyboard(app, pilot, select, shown, keystrokes: int, on_sample=None):
    """Choose values in ``select`` by keyboard (enter opens, down/up moves, enter chooses)
    ``keystrokes`` times; per choice, (wall ms, event-loop CPU ms) from the choosing key to
    the first frame painted after ``shown()`` says the result was rendered.

    ``shown()`` returns (a counter of results rendered, when the last one was rendered);
    ``on_sample()`` runs after each choice is measured.
    """
    keys = Keystrokes(app)
    select.focus()
    await pilot.pause()
    samples: list[tuple[float, float]] = []
    for i in range(keystrokes):
        keys.send("enter", "\r")
        await _until(lambda: select.expanded, "select open")
        # the opened list: Textual's Select (the floor) and the wizard's RowSelect both show
        # their values in an OptionList
        overlay = select.query_one("OptionList")
        before = overlay.highlighted
        keys.send("down" if i % 2 == 0 else "up")
        await _until(lambda o=overlay, b=before: o.highlighted != b, "option moved")
        await asyncio.sleep(0.03)  # a person's pace: the last frame is long painted (1/60 s)
        # The choosing enter is the keystroke whose result is measured.
        await _measured(app, keys, shown, samples, on_sample, ("enter", "\r"), f"choice {i}")
    return samples


async def _measured(app, keys, shown, samples, on_sample, key, what: str) -> None:
    """Send ``key`` (name, character) and append (wall ms, event-loop CPU ms) from it to
    the first frame painted after ``shown()`` says its result was rendered."""
    count = shown()[0]
    wall, cpu = keys.send(*key)
    await _until(
        lambda: shown()[0] > count and keys.first_paint_after(shown()[1]) is not None,
        f"result on screen after {what}",
    )
    painted = keys.first_paint_after(shown()[1])
    assert painted is not None
    samples.append(((painted[0] - wall) * 1000, (painted[1] - cpu) * 1000))
    if on_sample is not None:
        on_sample()
    await _workers_done(app)  # the recipe screen's `s` alternatives, when not cached


async def step_by_keyboard(app, pilot, select, shown, keystrokes: int, on_sample=None):
    """Press → on ``select`` ``keystrokes`` times, at a person's pace; per key, (wall ms,
    event-loop CPU ms) from the key to the first frame painted after ``shown()`` says the
    result was rendered (``shown`` and ``on_sample`` as for :func:`choose_by_keyboard`)."""
    keys = Keystrokes(app)
    select.focus()
    await pilot.pause()
    samples: list[tuple[float, float]] = []
    for i in range(keystrokes):
        await asyncio.sleep(0.03)  # a person's pace: the last frame is long painted (1/60 s)
        await _measured(app, keys, shown, samples, on_sample, ("right", None), f"key {i}")
    return samples


async def bare_select_latency(
    keystrokes: int = KEYSTROKES, *, step: bool = True
) -> list[tuple[float, float]]:
    """The floor: the same keys on a bare Textual app's one Select, whose value a Static
    shows (Header and Footer too, as on the recipe screen). ``step``: → sets the next
    value (a binding on the stock Select, nothing else), else the keys choose in its list."""
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.widgets import Footer, Header, Select, Static

    class SteppedSelect(Select[str]):
        BINDINGS = [Binding("right", "step", "Next value")]

        def action_step(self) -> None:
            values = [v for _, v in self._options]
            self.value = values[(values.index(self.value) + 1) % len(values)]

    class BareSelect(App[None]):
        shown = (0, 0.0)

        def compose(self) -> ComposeResult:
            yield Header()
            yield SteppedSelect(
                [("first", "a"), ("second", "b"), ("third", "c")], allow_blank=False, id="choice"
            )
            yield Static("", id="value")
            yield Footer()

        def on_mount(self) -> None:
            self.watch(self.query_one(Select), "value", self.show, init=False)

        def show(self, value: object) -> None:
            self.query_one(Static).update(f"chose {value}")
            self.shown = (self.shown[0] + 1, time.perf_counter())

    app = BareSelect()
    measure = step_by_keyboard if step else choose_by_keyboard
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        return await measure(app, pilot, app.query_one(Select), lambda: app.shown, keystrokes)


async def keystroke_latency(
    keystrokes: int = KEYSTROKES, *, step: bool = True, select_id: str = "sel-profile"
) -> tuple[list[tuple[float, float]], list[float]]:
    """Per change of the gpuStack value, or of the select ``select_id`` (→, or
    ``step=False``: chosen in the opened list): (wall ms, CPU ms) from the key to the
    frame showing its verdict, and ms the qualification itself took."""
    from aicr_tui.app import create_app, freeze_startup_heap
    from aicr_tui.screens.recipe import RecipeScreen

    # As run_wizard starts the app: the startup heap is frozen, so a full collection
    # walks only what the session made since (unfrozen, one fell inside the 25 keys and
    # took 47-58 ms walking the whole heap: a pause the wizard does not have).
    app = create_app(demo=True)
    freeze_startup_heap()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        options = app.screen.query_one("#capture-samples")
        options.focus()
        await pilot.press("down", "enter")  # AKS pools: all None
        await _workers_done(app)
        await pilot.pause()
        await pilot.press("n")
        await _workers_done(app)
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RecipeScreen)
        qualify_only: list[float] = []

        def shown() -> tuple[int, float]:
            # A verdict counts once it is the current selection's (never a stale one).
            if screen.shown_seq == screen._seq and app.state.verdict is not None:
                return screen.shown_seq, screen.verdict_shown_at
            return -1, screen.verdict_shown_at

        # The gpuStack select: each change re-qualifies (`s` only switches to a value that
        # qualifies the capture, so it cannot repeat).
        measure = step_by_keyboard if step else choose_by_keyboard
        samples = await measure(
            app,
            pilot,
            screen.query_one(f"#{select_id}"),
            shown,
            keystrokes,
            on_sample=lambda: qualify_only.append(screen.last_latency_ms or 0.0),
        )
    return samples, qualify_only


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        {"bare": child_bare, "wizard": child_wizard}[sys.argv[2]]()
        return 0
    prepare_environment()
    me = [sys.executable, "-m", "bench.wizard_bench", "--child"]
    start = paired_process_runs([*me, "wizard"], [*me, "bare"], repeat=REPEAT_START)
    bare_keys = asyncio.run(bare_select_latency())
    wizard_keys, qualify_only = asyncio.run(keystroke_latency())
    bare_list = [w for w, _ in asyncio.run(bare_select_latency(step=False))]
    wizard_list = [w for w, _ in asyncio.run(keystroke_latency(step=False))[0]]
    criterion = [w for w, _ in asyncio.run(keystroke_latency(select_id="sel-os"))[0]]
    wall = [w for w, _ in wizard_keys]
    cpu = [c for _, c in wizard_keys]
    bare_wall = [w for w, _ in bare_keys]
    bare_cpu = [c for _, c in bare_keys]
    floor_note = "floor = the same key on a bare Textual app's one Select"
    rows = [
        Row(
            "cold start to first interactive screen (process)",
            start.subject_s * 1000,
            "ms",
            floor=start.floor_s * 1000,
            note=f"floor = bare Textual app (Header, Label, Footer); {load_note()}",
            **ratio_budget(START_BUDGET, "bare Textual"),  # type: ignore[arg-type]
        ),
        Row(
            "cold start, CPU (user + system)",
            start.subject_cpu_s * 1000,
            "ms",
            floor=start.floor_cpu_s * 1000,
            note="info: the same runs' CPU, which load inflates least",
        ),
        Row(
            "keystroke to verdict on screen, p95 (wall)",
            percentile(wall, 0.95),
            "ms",
            floor=percentile(bare_wall, 0.95),
            budget=f"<= {KEY_BUDGET_MS:g} ms",
            note=f"{len(wall)} presses of → on gpuStack, key to painted frame; {floor_note}; "
            f"{load_note()}",
            limit=KEY_BUDGET_MS,
            check="max",
        ),
        Row(
            "keystroke to verdict on screen, median (wall)",
            statistics.median(wall),
            "ms",
            floor=statistics.median(bare_wall),
            note=floor_note,
        ),
        Row(
            "keystroke to verdict, p95 event-loop CPU",
            percentile(cpu, 0.95),
            "ms",
            floor=percentile(bare_cpu, 0.95),
            note="info: the same span in the loop thread's CPU time (what load cannot inflate)",
        ),
        Row(
            "choosing in the opened list instead, p95 (wall)",
            percentile(wizard_list, 0.95),
            "ms",
            floor=percentile(bare_list, 0.95),
            note="info: enter, an arrow, enter; the choosing enter to painted verdict (the "
            "list closing moves the focus back); floor = the same keys on a bare Select",
        ),
        Row(
            "stepping a criterion (os) instead, p95 (wall)",
            percentile(criterion, 0.95),
            "ms",
            floor=percentile(bare_wall, 0.95),
            note="info: → on the os select, round values an overlay covers and ones none does "
            "(new criteria at each first step); floor as above",
        ),
        Row(
            "qualify() alone, median",
            statistics.median(qualify_only),
            "ms",
            note="info: the core call inside each keystroke",
        ),
    ]
    report("wizard", rows)
    return 1 if missed(rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
