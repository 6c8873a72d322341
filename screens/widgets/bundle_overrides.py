"""The bundle preview's overrides editor, without widgets: lines in, a plan and feedback out.

One entry per line, written as on the command line::

    --set gpu-operator:driver.version=580.95.05
    --set-json nvsentinel:labeler={"assumeDriverInstalled": true}
    --set-file gpu-operator:toolkit=./toolkit.yaml
    --dynamic gpu-operator:driver.repository
    --accelerated-node-toleration sku=gpu:NoSchedule

``--flag=entry`` works too, a line without a flag is a ``--set``, and blank lines and ``#``
comments are ignored. Every line gets a verdict: *accepted*, *warning* (accepted, with the
bundler's deprecation or policy note) or *rejected* (with the message the CLI would print).
GPU allocation-policy keys (#1327) follow the brief: a static ``--set`` of one (or of an
advertiser's ``enabled``) is a *warning* (deprecated: validators verify the recipe-resolved
policy, so it shows up as drift; the note names the recipe-overlay replacement), and the
coherence verdict of all lines together (dual advertisement, no advertiser, inert waiver)
is added to each policy-key line as a warning, never per line, so the three lines of the
DRA-only flip read as one coherent change; ``--dynamic`` on a policy key and
``--set-json``/``--set-file`` on ``enabled`` stay *rejected*.
A rejected line is left out of the plan, so the preview still shows what the other lines do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.foundation.errors import AicrError

Verdict = Literal["accepted", "warning", "rejected"]

FLAGS: dict[str, str] = {
    "--set": "set",
    "--set-json": "set-json",
    "--set-file": "set-file",
    "--dynamic": "dynamic",
    "--accelerated-node-toleration": "toleration",
}


@dataclass
class EditorLine:
    """One non-empty, non-comment line of the editor."""

    lineno: int  # 1-based, as the editor shows it
    raw: str
    kind: str = ""  # set | set-json | set-file | dynamic | toleration
    text: str = ""  # the entry after the flag
    entry: Any = None  # core.bundler OverrideEntry or Toleration once parsed
    verdict: Verdict = "accepted"
    message: str = ""

    @property
    def flag(self) -> str:
        for flag, kind in FLAGS.items():
            if kind == self.kind:
                return flag
        return ""

    def reject(self, message: str) -> None:
        self.verdict = "rejected"
        self.message = message

    def warn(self, message: str) -> None:
        if self.verdict != "rejected":
            self.verdict = "warning"
            self.message = f"{self.message}; {message}" if self.message else message


@dataclass
class PreviewResult:
    """What one re-plan produced: the plan (or why there is none) and per-line verdicts."""

    lines: list[EditorLine] = field(default_factory=list)
    plan: Any = None  # core.bundler BundlePlan
    error: str = ""  # a failure not attributable to one line (the plan itself was refused)
    generation: int = 0

    @property
    def rejected(self) -> list[EditorLine]:
        return [line for line in self.lines if line.verdict == "rejected"]


def split_lines(text: str) -> list[EditorLine]:
    """Split the editor text into entries, recognising the flag on each line."""
    out: list[EditorLine] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        line = EditorLine(lineno=number, raw=stripped)
        head, _, rest = stripped.partition(" ")
        flag, eq, inline = head.partition("=")
        if flag.startswith("--"):
            kind = FLAGS.get(flag)
            if kind is None:
                line.reject(
                    f"unknown flag {flag}; expected one of {', '.join(FLAGS)}",
                )
                out.append(line)
                continue
            line.kind = kind
            line.text = (inline + (" " + rest if rest else "")) if eq else rest.strip()
        else:
            line.kind = "set"
            line.text = stripped
        if not line.text:
            line.reject(f"{line.flag} needs an entry")
        out.append(line)
    return out


def parse_lines(lines: Sequence[EditorLine], *, base_dir: Path | None = None) -> None:
    """Parse each line's entry in place; a bad entry rejects that line only."""
    from core.bundler.overrides import parse_entry
    from core.bundler.tolerations import parse_toleration

    for line in lines:
        if line.verdict == "rejected":
            continue
        try:
            if line.kind == "toleration":
                line.entry = parse_toleration(line.text)
            else:
                line.entry = parse_entry(line.kind, line.text, base_dir=base_dir)
        except AicrError as err:
            line.reject(err.render())


def overrides_of(lines: Sequence[EditorLine]) -> tuple[Any, list[Any] | None]:
    """The accepted lines as ``(BundleOverrides, tolerations or None)`` for ``plan_bundle``."""
    from core.bundler.overrides import BundleOverrides

    sets: list[Any] = []
    set_json: list[Any] = []
    set_file: list[Any] = []
    dynamic: list[Any] = []
    tolerations: list[Any] = []
    buckets: dict[str, list[Any]] = {
        "set": sets,
        "set-json": set_json,
        "set-file": set_file,
        "dynamic": dynamic,
        "toleration": tolerations,
    }
    for line in lines:
        if line.verdict != "rejected" and line.entry is not None:
            buckets[line.kind].append(line.entry)
    overrides = BundleOverrides(
        sets=tuple(sets), set_json=tuple(set_json), set_file=tuple(set_file), dynamic=tuple(dynamic)
    )
    return overrides, (tolerations or None)


Planner = Callable[[Any, list[Any] | None], Any]
Checker = Callable[[str, str], list[Any]]


def preview(
    text: str,
    planner: Planner,
    *,
    checker: Checker | None = None,
    base_dir: Path | None = None,
    generation: int = 0,
) -> PreviewResult:
    """Parse the editor text and plan the bundle, attributing every refusal to its line.

    ``planner(overrides, tolerations)`` is ``plan_bundle`` bound to the recipe;
    ``checker(kind, text)`` is ``check_override_entry`` bound to it, giving each line its
    lock and policy verdict (an ``error`` rejects the line, a ``warning`` flags it). When the
    plan with every parsed line is refused (and the recipe alone is not), each line is tried
    on its own to find the ones the bundler rejects; those are marked and the plan is made
    from the rest, so the preview never goes blank because of one bad entry.
    """
    result = PreviewResult(lines=split_lines(text), generation=generation)
    parse_lines(result.lines, base_dir=base_dir)
    if checker is not None:
        for line in result.lines:
            if line.verdict == "rejected" or line.kind == "toleration":
                continue
            _apply_feedback(line, checker(line.kind, line.text))
    try:
        result.plan = planner(*overrides_of(result.lines))
    except AicrError as whole:
        try:
            planner(*overrides_of([]))
        except AicrError:
            # The recipe cannot be planned even without overrides: no line is to blame.
            result.error = whole.render()
            return result
        for line in result.lines:
            if line.verdict == "rejected":
                continue
            try:
                planner(*overrides_of([line]))
            except AicrError as err:
                line.reject(err.render())
        try:
            result.plan = planner(*overrides_of(result.lines))
        except AicrError as err:
            result.error = err.render()
    _attribute_warnings(result)
    return result


def _apply_feedback(line: EditorLine, feedback: list[Any]) -> None:
    errors = [item.message for item in feedback if item.level == "error"]
    if errors:
        line.reject("; ".join(errors))
        return
    for item in feedback:
        if item.level == "warning":
            line.warn(item.message)
        elif item.level == "info" and not line.message:
            line.message = item.message


def _attribute_warnings(result: PreviewResult) -> None:
    """Hang each plan warning on the line whose component path it names."""
    plan = result.plan
    if plan is None:
        return
    for warning in getattr(plan, "warnings", ()) or ():
        text = warning_text(warning)
        for line in result.lines:
            entry = line.entry
            if line.verdict == "rejected" or entry is None or line.kind == "toleration":
                continue
            if text in line.message:
                continue
            if f"{entry.key}:{entry.path}" in text:
                line.warn(text)
            elif text.startswith("GPU allocation policy:") and "allocation-policy key" in (
                line.message
            ):
                line.warn(text)  # the verdict of the lines together, on each policy-key line


def warning_text(item: Any) -> str:
    """A warning or blocking error from the plan as one line of text."""
    if isinstance(item, str):
        return item
    message = getattr(item, "message", None) or getattr(item, "text", None) or str(item)
    return " ".join(str(message).split())
