"""Issue 17: a gpuStack choice is qualified in the keystroke's own frame, and the other
values (what `s` offers) are not re-qualified on every keystroke.

Before: each choice went to a thread worker (the verdict reached the screen tens of
milliseconds later, after the select had closed and the footer was rebuilt) and each
worker also qualified every other gpuStack value to decide whether to offer `s`.
"""

from __future__ import annotations

from screens.recipe import RecipeScreen
from tests.pilot.wizard_helpers import demo_app, open_recipe, settle


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
