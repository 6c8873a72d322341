"""Replaying a recorded validation run: what it is, how fast, and which one fits a recipe.

The CLI (``validate --replay``) and the wizard's dashboard open a recording with
:func:`open_replay` and play it with :func:`play`: they refuse the same incomplete
recordings, describe a replay with the same words and pace it the same way, so neither
presents recorded events as a live run.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aicr_tui.core.documents.recipe_result import RecipeResult
    from aicr_tui.core.validation.events import Event
    from aicr_tui.core.validation.stream import EventStream

# A replay at the default pace lasts about this long, however long the recorded run took.
DEFAULT_REPLAY_SECONDS = 3.0
# --replay-speed: 0 (no pacing) or a finite factor in this range; slower than a tenth of the
# recorded pace would stretch a two-minute run past twenty minutes, and 1e-7 over decades.
MIN_REPLAY_SPEED = 0.1
MAX_REPLAY_SPEED = 1_000_000.0


def check_replay_speed(speed: float) -> float:
    """``speed`` when it is 0 or a finite factor from :data:`MIN_REPLAY_SPEED` to
    :data:`MAX_REPLAY_SPEED`; otherwise one line naming ``--replay-speed``."""
    import math

    from aicr_tui.core.foundation.errors import invalid

    if speed == 0 or (math.isfinite(speed) and MIN_REPLAY_SPEED <= speed <= MAX_REPLAY_SPEED):
        return float(speed)
    raise invalid(
        f"--replay-speed {speed:g} is outside the accepted range: 0 (no pacing) or a factor "
        f"from {MIN_REPLAY_SPEED:g} to {MAX_REPLAY_SPEED:g} (1 = as recorded)"
    )


def default_replay_speed(
    events: Sequence[Event], target_s: float = DEFAULT_REPLAY_SECONDS
) -> float:
    """The speed factor that plays ``events`` in about ``target_s`` seconds (never slower
    than the recorded pace)."""
    span = max((e.t for e in events), default=0.0)
    return max(1.0, span / target_s) if target_s > 0 else 0.0


def recorded_when(events: Sequence[Event]) -> str:
    from aicr_tui.core.validation.events import RunStarted

    started = next((e for e in events if isinstance(e, RunStarted)), None)
    if started is None or not started.started_ms:
        return "at an unknown time"
    when = dt.datetime.fromtimestamp(started.started_ms / 1000, tz=dt.UTC)
    return when.strftime("%Y-%m-%d %H:%M UTC")


def recorded_recipe(events: Sequence[Event]) -> str:
    from aicr_tui.core.validation.events import RunStarted

    started = next((e for e in events if isinstance(e, RunStarted)), None)
    return (started.recipe if started is not None else "") or "unknown"


def replay_header(path: str | Path, events: Sequence[Event]) -> str:
    """``replaying <file> (recorded <when>, recipe <name>)``: the first line of a replay.

    The file name and the recorded recipe name are anyone's text: made one terminal-safe
    line (escapes removed, a line break becomes a space), so neither can clear the screen or
    start a line that reads as the tool's own verdict."""
    from aicr_tui.core.foundation.textsafe import safe_text

    return (
        f"replaying {safe_text(Path(path).name)} (recorded {recorded_when(events)}, "
        f"recipe {safe_text(recorded_recipe(events))}); nothing runs against a cluster"
    )


@dataclass(frozen=True)
class Replay:
    """A recording opened for replay: its events, the pace and the line that says what it is."""

    path: Path
    events: Sequence[Event]
    speed: float
    header: str


def open_replay(path: str | Path, speed: float | None = None) -> Replay:
    """Read the recording at ``path`` (refused when it never finished: no RunFinished) and
    pace it at ``speed`` (None: :func:`default_replay_speed`; 0: no pacing)."""
    from aicr_tui.core.foundation.errors import invalid
    from aicr_tui.core.validation.events import RunFinished
    from aicr_tui.core.validation.recording import load_recording

    if speed is not None:
        speed = check_replay_speed(speed)
    events = load_recording(str(path))
    if not any(isinstance(e, RunFinished) for e in events):
        raise invalid(f'recording "{path}" has no RunFinished event; it is incomplete')
    pace = default_replay_speed(events) if speed is None else speed
    return Replay(Path(path), events, pace, replay_header(path, events))


async def play(opened: Replay, stream: EventStream) -> None:
    """Publish the recorded events on ``stream`` at the replay's pace."""
    from aicr_tui.core.validation.recording import replay

    await replay(list(opened.events), stream, speed=opened.speed)


@dataclass(frozen=True)
class RecordingChoice:
    """The recording to show for a recipe, and whether it was recorded for that recipe."""

    path: Path
    matches: bool
    recipe: str  # the recorded recipe's file name
    recorded_for: str  # its criteria and profile value, for the "another recipe" notice


def _selection_key(recipe: RecipeResult) -> tuple[str, ...]:
    crit = recipe.criteria
    profile = recipe.metadata.selectedProfile
    value = profile.value if profile is not None else ""
    return (crit.service, crit.accelerator, crit.os, crit.intent, crit.platform, value)


def _describe_key(key: tuple[str, ...]) -> str:
    names = ("service", "accelerator", "os", "intent", "platform", "gpuStack")
    return ", ".join(f"{n}={v}" for n, v in zip(names, key, strict=True) if v and v != "any")


def _recipe_beside(recording: Path, name: str) -> Path | None:
    """The recipe file a recording names, when it is a regular file (not a link) in the
    recording's own directory; the name is the recording's text, so a path elsewhere
    (``../x``, ``/etc/...``), a device, a FIFO or a link is never opened."""
    import stat

    from aicr_tui.core.foundation.names import is_file_name

    if not is_file_name(name):
        return None
    candidate = recording.parent / name
    try:
        mode = candidate.lstat().st_mode
    except OSError:
        return None
    return candidate if stat.S_ISREG(mode) else None


def choose_recording(recordings: Sequence[Path], recipe: RecipeResult) -> RecordingChoice | None:
    """The first recording whose recipe (the file its RunStarted names, beside it) has the
    same criteria and profile value as ``recipe``; else the first recording, marked as not
    matching. None when there is no readable recording."""
    from aicr_tui.core.foundation.errors import AicrError
    from aicr_tui.core.recipe.loading import load_recipe
    from aicr_tui.core.validation.recording import load_recording

    want = _selection_key(recipe)
    fallback: RecordingChoice | None = None
    for path in recordings:
        try:
            events = load_recording(str(path))
            name = recorded_recipe(events)
            beside = _recipe_beside(Path(path), name)
            if beside is None:
                continue
            recorded = load_recipe(str(beside))
        except AicrError:
            continue
        key = _selection_key(recorded)
        choice = RecordingChoice(Path(path), key == want, name, _describe_key(key))
        if choice.matches:
            return choice
        if fallback is None:
            fallback = choice
    return fallback
