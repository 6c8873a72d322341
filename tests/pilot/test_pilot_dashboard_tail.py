"""Issue 17: the dashboard's log pane follows a flood without relayouting the screen.

Key latency under 5,000 events/s missed its budget partly because each repaint of the
log tail (clear, then one write of the burst's newest lines) changed the log's virtual
size twice, and every such change makes Textual reflow the whole screen (7-40 ms of the
event loop at 80x24, several times a second, measured in bench/dashboard_bench.py). Not
timed here: the test pins the remedy, a tail of the same size asks for no layout.
"""

from __future__ import annotations

from rich.text import Text
from textual import messages
from textual.app import App, ComposeResult

from aicr_tui.screens.widgets.live_text import TailLog


class LogHost(App[None]):
    def compose(self) -> ComposeResult:
        yield TailLog(id="log", max_lines=1000, wrap=True, markup=False, min_width=20)


def _lines(start: int, count: int) -> Text:
    return Text(
        "\n".join(
            f"#  {i:>8}  all_reduce_perf  busbw 157.29 ok" for i in range(start, start + count)
        )
    )


async def test_replacing_a_tail_of_the_same_size_asks_for_no_layout() -> None:
    app = LogHost()
    async with app.run_test(size=(80, 24)) as pilot:
        log = app.query_one(TailLog)
        log.write(_lines(0, 21))
        await pilot.pause()
        layouts: list[object] = []
        post = app.screen.post_message

        def spy(message):  # type: ignore[no-untyped-def]
            if isinstance(message, messages.Layout):
                layouts.append(message.widget)
            return post(message)

        app.screen.post_message = spy  # type: ignore[method-assign]
        log.replace(_lines(100, 21))
        await pilot.pause()
        assert [line.text.split()[1] for line in log.lines] == [str(i) for i in range(100, 121)]
        assert log not in layouts

        # A tail of another size does move things (the scrollbar): that still relayouts.
        log.replace(_lines(200, 40))
        await pilot.pause()
        assert len(log.lines) == 40 and log.lines[0].text.split()[1] == "200"
        assert log in layouts
