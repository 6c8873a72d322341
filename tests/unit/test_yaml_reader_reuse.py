"""A refused YAML text leaves nothing behind for the next one read in the same thread.

Each thread keeps its ruamel readers (building one per load costs more than a small
load). ruamel's constructor keeps the pending state of a half-built document when
construction fails (a duplicate key, say), and the next ``load_all`` on that reader ran
the old document's pending steps first: a valid file read after a refused one, as the
wizard does when a user fixes a file and loads it again, was refused with the *old*
file's error. These tests read a refused text, then a valid one, through every loader.
"""

from __future__ import annotations

import pytest

from aicr_tui.core.foundation import yamlio
from aicr_tui.core.foundation.errors import AicrError

# Null keys repeated in nested mappings: construction stops part-way, with steps pending.
DUPLICATE = ": \n   : \n   : \n   : \n: \n"
# A tab keeps a text off the C parser, so the pure reader (the one left dirty) reads it.
VALID = 'x: "1\t2"\ny: [2, 3]\n'


@pytest.mark.parametrize("load", [yamlio.load_yaml, yamlio.load_yaml_plain])
def test_a_valid_text_reads_after_a_refused_one(load) -> None:
    for _ in range(2):
        with pytest.raises(AicrError, match="first.yaml is not valid YAML"):
            load(DUPLICATE, "first.yaml")
        assert dict(load(VALID, "second.yaml")) == {"x": "1\t2", "y": [2, 3]}


def test_a_second_refusal_names_its_own_text() -> None:
    with pytest.raises(AicrError):
        yamlio.load_yaml_plain(DUPLICATE, "first.yaml")
    with pytest.raises(AicrError) as second:
        yamlio.load_yaml_plain("k:\n\tv: 1\n", "second.yaml")
    assert "second.yaml" in str(second.value)
    # The second text's own refusal (a tab indents it), not the first text's duplicate.
    assert "duplicate" not in str(second.value)


def test_safe_documents_after_a_refusal_reads_each_text_alone() -> None:
    with pytest.raises(Exception, match="duplicate key"):
        yamlio.safe_documents(DUPLICATE)
    assert yamlio.safe_documents(VALID) == [{"x": "1\t2", "y": [2, 3]}]
    assert yamlio.safe_documents("---\na: 1\n---\nb: 2\n") == [{"a": 1}, {"b": 2}]


def test_the_alias_scan_after_a_refusal_still_counts_from_zero() -> None:
    with pytest.raises(AicrError, match="its own anchor"):
        yamlio.load_yaml_plain("a: &x [1, *x]\n", "loop.yaml")
    assert yamlio.load_yaml_plain("a: &y [1]\nb: *y\n", "ok.yaml") == {"a": [1], "b": [1]}
