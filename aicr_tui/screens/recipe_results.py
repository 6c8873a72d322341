"""What the recipe screen's workers hand back (a qualification verdict, the catalog's
criteria values, a profile diff) and the plain functions that read a verdict for it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from aicr_tui.core.recipe.qualification import QualificationVerdict


class VerdictReady(Message):
    """A qualification finished for selection number ``seq``.

    ``qualifying`` lists the other profile values that qualify the same capture (what
    ``s`` may switch to); ``notes`` say which criteria came from the snapshot.
    """

    def __init__(
        self,
        seq: int,
        verdict: QualificationVerdict | None,
        error: str,
        elapsed_ms: float,
        *,
        qualifying: tuple[str, ...] | None = (),
        notes: tuple[str, ...] = (),
    ) -> None:
        super().__init__()
        self.seq = seq
        self.verdict = verdict
        self.error = error
        self.elapsed_ms = elapsed_ms
        # The fastest qualification made for this message (alternatives included), in CPU
        # ms: whether the core is warm, once the first call has loaded the catalog.
        self.fastest_ms = elapsed_ms
        self.qualifying = qualifying
        self.notes = notes


def qualifying_values(
    values: list[str], current: str | None, known: dict[str, bool]
) -> tuple[str, ...] | None:
    """The declared values other than ``current`` that qualify, or None while any is
    still unknown."""
    others = [v for v in values if v != current]
    if any(v not in known for v in others):
        return None
    return tuple(v for v in others if known[v])


class ChoicesReady(Message):
    def __init__(self, choices: dict[str, list[str]], error: str) -> None:
        super().__init__()
        self.choices = choices
        self.error = error


class DiffReady(Message):
    def __init__(self, rows: list[tuple[str, str, str, str]], title: str, error: str) -> None:
        super().__init__()
        self.rows = rows
        self.title = title
        self.error = error


def profile_info(
    verdict: QualificationVerdict | None,
) -> tuple[str, list[str], str | None, str | None]:
    """(profile name, declared values, default, selected) as the verdict reports them."""
    if verdict is None:
        return "gpuStack", [], None, None
    name = verdict.profile_name or "gpuStack"
    return name, list(verdict.profile_values), verdict.profile_default, verdict.profile_value


def finding_line(title: str, evidence: str) -> str:
    """A guide finding as one line that names the state once: when the evidence restates
    the title (``pools read Mixed (…)`` under "Pools read Mixed") only its detail in
    parentheses is kept."""
    if not evidence:
        return title
    head = " ".join(title.lower().split()[:3])
    if evidence.lower().startswith(head):
        start, end = evidence.find("("), evidence.find(")")
        detail = evidence[start + 1 : end] if 0 <= start < end else ""
        return f"{title} ({detail})" if detail else title
    return f"{title} ({evidence})"


def diff_cell(value: object) -> str:
    if value is None:
        return "(absent)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
