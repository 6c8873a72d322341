"""``recipe``/``query`` help lists the criteria values the shipped catalog registers (issue 33):
it named b200 after the catalog dropped every B200 leaf, and a100/l40s were missing after the
catalog added them. The values come from the catalog's overlays, read only when help is shown."""

from __future__ import annotations

import re

import pytest

from aicr_tui.cli import build_parser
from aicr_tui.core.recipe.catalog import load_catalog

FLAGS = {
    "service": "--service SERVICE",
    "accelerator": "--accelerator ACCELERATOR, --gpu ACCELERATOR",
    "os": "--os OS",
    "intent": "--intent INTENT",
    "platform": "--platform PLATFORM",
}


def _help_line(text: str, flag: str) -> str:
    """The help text that follows ``flag`` in argparse's option listing (joined lines)."""
    flat = re.sub(r"\s+", " ", text)
    start = flat.rindex(flag) + len(flag)  # the options listing, after the usage line
    following = re.search(r" --?[a-z]", flat[start:])
    assert following is not None, flat[start:]
    return flat[start : start + following.start()].strip()


@pytest.mark.parametrize("command", ["recipe", "query"])
def test_criteria_help_lists_what_the_catalog_registers(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser([command]).parse_args([command, "--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    registered = load_catalog().registered
    for dimension, flag in FLAGS.items():
        listed = re.search(r"\(([^)]*)\)", _help_line(text, flag))
        assert listed is not None, (flag, _help_line(text, flag))
        assert listed.group(1).split(", ") == sorted(registered[dimension]), (flag, listed.group(1))
    # the values the catalog dropped or never served are not offered
    gpus = re.findall(r"[a-z0-9-]+", _help_line(text, FLAGS["accelerator"]))
    assert "b200" not in gpus and "gb200" in gpus, gpus
    assert {"a100", "l40s"} <= set(registered["accelerator"])


def test_parsing_reads_no_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only help reads the catalog: parsing criteria flags does not load it."""
    import aicr_tui.core.recipe.catalog as catalog

    calls: list[object] = []
    monkeypatch.setattr(catalog, "load_catalog", lambda *a, **k: calls.append(a))
    args = build_parser(["recipe"]).parse_args(["recipe", "--service", "aks", "--gpu", "h100"])
    assert (args.service, args.accelerator) == ("aks", "h100")
    assert calls == []
