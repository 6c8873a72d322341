"""The troubleshooting guide is a data file (issue 36, item 4): aicr_tui/core/recipe/
troubleshooting.yaml, read and validated where it is loaded; a file that does not match
the schema is one line naming the file and the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.foundation.yamlio import dump_yaml, load_yaml_plain
from aicr_tui.core.recipe.troubleshooting import GUIDE, GUIDE_FILE, load_guide


def shipped() -> dict[str, object]:
    data = load_yaml_plain(GUIDE_FILE.read_text(encoding="utf-8"), str(GUIDE_FILE))
    assert isinstance(data, dict)
    return data


def test_the_guide_is_the_shipped_file() -> None:
    assert GUIDE_FILE.suffix == ".yaml" and GUIDE_FILE.is_file()
    entries = shipped()["entries"]
    assert isinstance(entries, list) and len(GUIDE) == len(entries) >= 20
    assert [e.id for e in GUIDE] == [e["id"] for e in entries]
    assert load_guide() == GUIDE
    assert {s for e in GUIDE for s in e.services} == {"aks", "oke"}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda d: d["entries"][0].pop("remedy"), "entries.0.remedy"),
        (lambda d: d["entries"][1].update(services=["gke"]), "entries.1.services.0"),
        (lambda d: d["entries"][2].update(title=""), "entries.2.title"),
        (lambda d: d["entries"][0].update(extra="x"), "entries.0.extra"),
        (lambda d: d["entries"][3].update(commands="kubectl get pods"), "entries.3.commands"),
        (lambda d: d["entries"][1].update(id=d["entries"][0]["id"]), "appears twice"),
        (lambda d: d.update(kind="Other"), "kind"),
    ],
)
def test_a_malformed_guide_is_one_line_naming_the_file(
    tmp_path: Path, change, problem: str
) -> None:  # type: ignore[no-untyped-def]
    data = shipped()
    change(data)
    path = tmp_path / "guide.yaml"
    path.write_text(dump_yaml(data), encoding="utf-8")
    with pytest.raises(AicrError) as exc:
        load_guide(path)
    text = exc.value.render()
    assert exc.value.exit_code == 2 and "\n" not in text
    assert f"the troubleshooting guide {path} is malformed" in text and problem in text
