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
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

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


Step = Callable[[Any, str], Awaitable[None]]


async def _samples_step(pilot, key: str) -> None:
    """Back on the capture step (esc from the recipe) and load sample ``key``."""
    app = pilot.app
    if type(app.screen).__name__ != "CaptureScreen":
        app.show_capture()
        await _settle(pilot)
    await _pick(pilot, key)


# (sample, its capture step, its recipe step or None): Install, Mixed and None pools, the
# OKE add-on ACTIVE and absent with the legacy plugin active; the walk goes on from aks-none.
CAPTURE_TOUR = (
    ("aks-install", "02-capture-aks-install", None),
    ("aks-mixed", "03-capture-aks-mixed", "04-recipe-aks-mixed"),
    ("oke-active", "05-capture-oke-active", None),
    ("oke-legacy-active", "06-capture-oke-legacy-active", "07-recipe-oke-legacy-active"),
    ("aks-none", "08-capture-aks-none", "09-recipe-failing"),
)


async def _recipe_step(pilot) -> None:
    """``n``: on to the recipe step, its verdict and checks in."""
    await pilot.press("n")
    await _settle(pilot, 3)


async def walk(
    size: tuple[int, int], out: Path | None, work: Path, on_step: Step | None = None
) -> list[Path]:
    """Run the demo at ``size`` and save one SVG per step under ``out`` (none when ``out``
    is None); ``on_step(pilot, name)`` runs at each step too (the 80x24 fit test checks
    every step there). Returns the files written."""
    app = create_app(demo=True)
    app.state.output_dir = work
    app.state.reports_dir = work / "reports"
    app.state.replay_speed = 0.0
    written: list[Path] = []
    tag = f"{size[0]}x{size[1]}"

    async with app.run_test(size=size) as pilot:

        async def step(name: str) -> None:
            # Toasts are transient and cover what is under them: not part of the picture.
            app.clear_notifications()
            # Tables re-lay out on idle after a refill or a resize: let them settle first.
            await pilot.wait_for_scheduled_animations()
            await pilot.pause(0.05)
            await pilot.pause()
            if out is not None:
                path = out / f"{name}-{tag}.svg"
                app.save_screenshot(filename=path.name, path=str(out))
                written.append(path)
            if on_step is not None:
                await on_step(pilot, name)

        await _settle(pilot)
        await step("01-capture-samples")
        for sample, capture_step, recipe_step in CAPTURE_TOUR:
            await _samples_step(pilot, sample)
            await step(capture_step)
            if recipe_step:
                await _recipe_step(pilot)
                await step(recipe_step)
        await pilot.press("d")
        await _settle(pilot, 3)
        await step("10-recipe-failing-diff")
        await pilot.press("d")
        await pilot.press("s")
        await _settle(pilot)
        await step("11-recipe-passing")
        await pilot.press("d")
        await _settle(pilot, 3)
        await step("12-recipe-profile-diff")
        await pilot.press("r")
        await pilot.pause()
        await step("13-recapture-command")
        await pilot.press("escape")
        await pilot.press("g")
        await _settle(pilot)
        await step("14-troubleshooting-guide")
        await pilot.press("escape")
        await pilot.press("question_mark")
        await pilot.pause()
        await step("15-help")
        await pilot.press("escape")
        await pilot.press("colon")
        await pilot.pause()
        await pilot.press(*"sandbox")
        await pilot.pause(0.5)
        await step("16-palette-guide-search")
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("b")
        await _settle(pilot, 3)
        bundle = app.screen
        await _wait(pilot, lambda: getattr(bundle, "plan", None) is not None)
        await pilot.pause(0.3)
        await step("17-bundle-preview")
        for deployer in ("helmfile", "argocd", "argocd-helm", "flux", "helm"):
            await pilot.press("d")
            await _wait(
                pilot,
                lambda d=deployer: (
                    bundle.deployer == d and getattr(bundle.plan, "deployer", d) == d
                ),
            )
            await _settle(pilot)
            if deployer != "helm":
                await step(f"18-bundle-deployer-{deployer}")
        await pilot.press("c")
        await pilot.pause()
        await step("19-bundle-checks")
        await pilot.press("v")
        await pilot.press("w")
        await pilot.pause()
        await step("20-write-dialog")
        await pilot.press("enter")
        await _wait(pilot, lambda: app.state.bundle_dir is not None)
        await pilot.pause(0.3)
        await step("21-bundle-written")
        await pilot.press("escape")
        await _settle(pilot)
        await pilot.press("v")
        await pilot.pause()
        dash = app.screen
        await _wait(pilot, lambda: bool(getattr(dash, "_ended", True)))
        await pilot.pause(0.5)
        await step("22-validation-replay")
        await pilot.press("question_mark")
        await pilot.pause()
        await step("23-validation-help")
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
