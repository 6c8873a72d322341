"""`make screens`: write every wizard step as SVG (and PNG via rsvg-convert) under artifacts/screens/.

Walks the demo with the keyboard, the way a newcomer would, and saves a screenshot after
each step at 80x24 and 120x40. PNGs need ``rsvg-convert`` (Debian package librsvg2-bin);
without it the SVGs are still written and the script says so.

    python -m tests.make_screens [--out DIR] [--size 120x40 ...]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aicr_tui.app import create_app

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "artifacts" / "screens"


async def _settle(pilot, rounds: int = 2) -> None:
    """Let thread workers finish and their messages be handled.

    A superseded exclusive worker reports itself cancelled; that is the expected outcome
    of a newer selection, not a failure.
    """
    from textual.worker import WorkerCancelled

    for _ in range(rounds):
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:
            await pilot.app.workers.wait_for_complete(
                [w for w in pilot.app.workers if not w.is_cancelled]
            )
        await pilot.pause()


async def _wait(pilot, condition, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
        await pilot.pause()
    return True


async def _pick(pilot, key: str) -> None:
    app = pilot.app
    keys = [s.key for s in app.state.samples]
    options = app.screen.query_one("#capture-samples")
    options.focus()
    await pilot.pause()
    await pilot.press("home")
    while keys[options.highlighted] != key:
        await pilot.press("down")
    await pilot.press("enter")
    await _settle(pilot)


async def walk(size: tuple[int, int], out: Path, work: Path) -> list[Path]:
    """Run the demo at ``size`` and save one SVG per step; returns the files written."""
    app = create_app(demo=True)
    app.state.output_dir = work
    app.state.reports_dir = work / "reports"
    app.state.replay_speed = 0.0
    written: list[Path] = []
    tag = f"{size[0]}x{size[1]}"

    def shot(name: str) -> None:
        path = out / f"{name}-{tag}.svg"
        app.save_screenshot(filename=path.name, path=str(out))
        written.append(path)

    async with app.run_test(size=size) as pilot:
        await _settle(pilot)
        shot("01-capture-samples")
        await _pick(pilot, "aks-none")
        shot("02-capture-aks-none")
        await pilot.press("n")
        await _settle(pilot, 3)
        shot("03-recipe-failing")
        await pilot.press("s")
        await _settle(pilot)
        shot("04-recipe-passing")
        await pilot.press("d")
        await _settle(pilot, 3)
        shot("05-recipe-profile-diff")
        await pilot.press("r")
        await pilot.pause()
        shot("06-recapture-command")
        await pilot.press("escape")
        await pilot.press("g")
        await _settle(pilot)
        shot("07-troubleshooting-guide")
        await pilot.press("escape")
        await pilot.press("question_mark")
        await pilot.pause()
        shot("08-help")
        await pilot.press("escape")
        await pilot.press("colon")
        await pilot.pause()
        await pilot.press(*"sandbox")
        await pilot.pause(0.5)
        shot("09-palette-guide-search")
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("b")
        await _settle(pilot, 3)
        bundle = app.screen
        await _wait(pilot, lambda: getattr(bundle, "plan", None) is not None)
        await pilot.pause(0.3)
        shot("10-bundle-preview")
        await pilot.press("w")
        await pilot.pause()
        await pilot.press("enter")
        await _wait(pilot, lambda: app.state.bundle_dir is not None)
        await pilot.pause(0.3)
        shot("11-bundle-written")
        await pilot.press("escape")
        await _settle(pilot)
        await pilot.press("v")
        await pilot.pause()
        dash = app.screen
        await _wait(pilot, lambda: bool(getattr(dash, "_ended", True)))
        await pilot.pause(0.5)
        shot("12-validation-replay")
    return written


def to_png(svgs: list[Path]) -> int:
    tool = shutil.which("rsvg-convert")
    if tool is None:
        print(
            "rsvg-convert not found: wrote SVGs only "
            "(install Debian's librsvg2-bin for PNGs: apt-get install -y librsvg2-bin)"
        )
        return 0
    done = 0
    for svg in svgs:
        png = svg.with_suffix(".png")
        proc = subprocess.run([tool, str(svg), "-o", str(png)], capture_output=True, check=False)
        if proc.returncode == 0:
            done += 1
        else:
            print(f"rsvg-convert failed on {svg.name}: {proc.stderr.decode().strip()}")
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--size", action="append", default=None, help="WxH, repeatable")
    args = parser.parse_args(argv)
    sizes = [tuple(int(x) for x in s.split("x")) for s in (args.size or ["80x24", "120x40"])]
    args.out.mkdir(parents=True, exist_ok=True)
    svgs: list[Path] = []
    for w, h in sizes:
        with tempfile.TemporaryDirectory(prefix="aicr-screens-") as work:
            svgs += asyncio.run(walk((w, h), args.out, Path(work)))
    pngs = to_png(svgs)
    print(f"wrote {len(svgs)} SVG and {pngs} PNG files under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
