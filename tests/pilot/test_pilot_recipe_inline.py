"""Issue 17: a gpuStack choice is qualified in the keystroke's own frame, and the other
values (what `s` offers) are not re-qualified on every keystroke.

Before: each choice went to a thread worker (the verdict reached the screen tens of
milliseconds later, after the select had closed and the footer was rebuilt) and each
worker also qualified every other gpuStack value to decide whether to offer `s`.
"""

from __future__ import annotations

from aicr_tui.screens.recipe import RecipeScreen
from tests.pilot.wizard_helpers import count_layouts, demo_app, open_recipe, settle


async def test_gpustack_choice_is_qualified_synchronously_and_alternatives_are_cached(tmp_path):
    app = demo_app(tmp_path)
    calls: list[str | None] = []
    qualify = app.services.qualify

    def counting(criteria, profile, snapshot, warnings):  # type: ignore[no-untyped-def]
        calls.append(profile)
        return qualify(criteria, profile, snapshot, warnings)

    app.services.qualify = counting
    async with app.run_test(size=(80, 24)) as pilot:
        await open_recipe(pilot, "aks-install")
        screen = app.screen
        assert isinstance(screen, RecipeScreen)
        assert app.state.verdict.ok and app.state.profile_value is None
        # The first verdict ran in a worker and learnt which values qualify this capture:
        # the default (azure-managed) from the verdict itself, the other one qualified.
        assert calls == [None, "gpuStack=operator-managed"]
        assert screen.switch_target() is None  # the default (azure-managed) already passes
        calls.clear()

        select = screen.query_one("#sel-profile")
        select.value = "operator-managed"
        # No await: the verdict is already the new one, rendered before any message or
        # frame, and only the chosen value was qualified.
        assert app.state.profile_value == "operator-managed"
        assert app.state.verdict.profile_value == "operator-managed"
        assert not app.state.verdict.ok
        assert str(screen.query_one("#verdict-line").render()).startswith("FAIL  gpuStack=")
        assert calls == ["gpuStack=operator-managed"]
        # `s` is offered from the cache: azure-managed qualifies the same capture.
        assert screen.switch_target() == "azure-managed"
        assert "s: switch to gpuStack=azure-managed" in screen.trouble_text()

        await pilot.pause()
        select.value = "__default__"
        assert app.state.profile_value is None
        assert app.state.verdict.ok
        assert calls == ["gpuStack=operator-managed", None]
        await settle(pilot)
        assert not app.workers._workers or all(w.is_finished for w in app.workers)
        # The Changed messages that follow found the state up to date: nothing re-ran.
        assert calls == ["gpuStack=operator-managed", None]


async def test_a_step_to_criteria_never_qualified_is_qualified_in_the_keystroke(tmp_path):
    """Before: the first step to criteria not yet qualified (another intent, an OS no
    overlay covers) went to a thread worker, 30-45 ms from the key to the painted verdict
    in GIL hand-offs, and a worker's wall time, inflated by the same waits, could send
    the next steps there too. Now, with the core warm, every step is qualified in the
    keystroke, the other gpuStack values with it (what `s` offers), and only the first
    qualification (the catalog loads) runs in a worker."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_recipe(pilot, "aks-none")
        screen = app.screen
        assert isinstance(screen, RecipeScreen)
        workers: list[int] = []
        in_worker = screen._qualify

        def counting(seq, given, profile):  # type: ignore[no-untyped-def]
            workers.append(seq)
            return in_worker(seq, given, profile)

        screen._qualify = counting  # type: ignore[method-assign]
        qualify = app.services.qualify
        for field, steps in (("intent", 2), ("os", 2), ("platform", 3)):
            select = screen.query_one(f"#sel-{field}")
            for _ in range(steps):
                select.focus()
                await pilot.press("right")
                # No pause: the verdict of the new criteria is the screen's already.
                shown = app.state.verdict
                assert shown is not None and screen.shown_seq == screen._seq
                assert app.state.criteria[field] == select.value
                given = {k: v for k, v in screen._criteria().items()}
                again = qualify(given, None, app.state.snapshot, app.state.warnings).verdict
                assert (shown.ok, str(shown.error)) == (again.ok, str(again.error))
                await settle(pilot)
        assert workers == []
        # `s` was learnt in the same keystrokes: whatever it offers qualifies.
        target = screen.switch_target()
        if target is not None:
            given = dict(screen._criteria())
            offered = qualify(given, f"gpuStack={target}", app.state.snapshot, app.state.warnings)
            assert offered.verdict.ok


async def test_a_verdict_as_many_rows_tall_lays_nothing_out(tmp_path):
    """A verdict of six wrapped lines shows three rows (max-height 3), as one of three
    does: the change repaints the line and lays the screen out not once (it did, at each
    step between an OS no overlay covers and one that resolves)."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_recipe(pilot, "aks-install")
        screen = app.screen
        line = screen.query_one("#verdict-line")
        line.show("three rows " * 9, False)
        await settle(pilot)
        assert line.region.height == 3
        layouts = count_layouts(screen)
        line.show("six rows, three shown " * 10, False)
        await settle(pilot)
        assert len(line._lines) > 3 and line.region.height == 3 and len(layouts) == 0
        line.show("one row", True)
        await settle(pilot)
        assert line.region.height == 1 and len(layouts) > 0  # this one moves what is below
