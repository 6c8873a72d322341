"""The one door to the Helm engine (``helm-python-sdk``, import ``helm_python``).

Nothing else in the project imports ``helm_python``. Everything that reads a chart (load,
schema check, render) or parses a document the Helm way runs in the engine child of
:mod:`aicr_tui.core.verify.engine`, bounded in time and memory, on a private copy of the chart
(:mod:`aicr_tui.core.verify.chartfiles`); only :func:`pull_chart` (Helm's own download, which runs
no chart code) uses the package in this process. The package is an optional extra
(``pip install 'aicr-tui[verify]'``, about 250 MB installed); without it
:func:`require_engine` raises one line that says how to install it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aicr_tui.core.foundation.errors import AicrError, ErrorCode, invalid
from aicr_tui.core.verify.engine import (
    ENGINE,
    ChartRefusedError,
    EngineMissing,
    RenderError,
    RenderLimit,
)

__all__ = ["RenderError", "RenderLimit"]

INSTALL_HINT = "pip install 'aicr-tui[verify]'"


def _module() -> Any:
    """``helm_python`` in this process, for :func:`pull_chart` only."""
    try:
        import helm_python
    except ImportError as exc:
        raise _missing() from exc
    return helm_python


def _missing() -> AicrError:
    return invalid(
        "verify needs the Helm engine (helm-python-sdk), which is not installed",
        remedy=f"install it with: {INSTALL_HINT}",
    )


def require_engine() -> None:
    """Start the engine child; raise the one-line install hint when the engine is missing."""
    engine_version()


def engine_version() -> str:
    try:
        return ENGINE.version()
    except EngineMissing:
        raise _missing() from None
    except RenderError as exc:
        raise invalid("the Helm engine cannot be started", str(exc)) from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _cut(text: str, limit: int = 400) -> str:
    """An engine message quoting the chart (a 5000-digit version) kept to one short line."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class LoadedChart:
    """A chart loaded once; renders are memoised on the values (charts are immutable).

    The chart itself lives in the engine child, loaded from a private copy; a replaced
    child loads it again from ``path``."""

    path: Path
    name: str
    version: str
    kube_version: str
    defaults: dict[str, Any]
    """The chart's defaults coalesced with its subcharts' (what an install starts from)."""
    raw_values: dict[str, Any]
    """The chart's own values.yaml as written (nulls kept)."""
    has_schema: bool
    crds: list[str]
    """Text of every file under crds/ (chart and subcharts)."""
    _id: int = field(repr=False)
    _renders: dict[str, dict[str, str] | str] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _call(self, op: str, what: str, **body: Any) -> Any:
        return ENGINE.call(op, what, (self._id, str(self.path)), id=self._id, **body)

    def render(self, values: dict[str, Any], *, release: str, namespace: str) -> dict[str, str]:
        """Template path -> rendered text. Raises :class:`RenderError` on a template error
        (:class:`RenderLimit` when the engine overran a limit and was stopped)."""
        import json

        key = json.dumps([release, namespace, values], sort_keys=True, default=str)
        with self._lock:
            cached = self._renders.get(key)
        if cached is None:
            what = f"rendering chart {self.name}"
            try:
                out = self._call("render", what, values=values, name=release, namespace=namespace)
                cached = {str(k): str(v) for k, v in dict(out).items()}
            except RenderLimit:
                raise  # not memoised: another run may be given more time
            except RenderError as exc:
                cached = _one_line(exc)
            with self._lock:
                if len(self._renders) > 256:
                    self._renders.clear()
                self._renders[key] = cached
        if isinstance(cached, str):
            raise RenderError(cached)
        return cached

    def schema_errors(self, values: dict[str, Any]) -> str | None:
        """``values.schema.json`` violations (chart and subcharts) as one line, or None."""
        out = self._call("schema", f"checking chart {self.name} against its schema", values=values)
        return None if out is None else " ".join(str(out).split())


_LOADED: dict[str, LoadedChart] = {}
_LOADED_LOCK = threading.Lock()


def load_chart(path: Path) -> LoadedChart:
    """Load a chart directory or ``.tgz`` (memoised per path and mtime), refusing links,
    special files and schema references outside the chart with one line."""
    try:
        st = path.lstat()
    except OSError as exc:
        raise invalid(f"chart {path} cannot be read", exc.strerror or str(exc)) from None
    key = f"{path.absolute()}\0{st.st_mtime_ns}"
    with _LOADED_LOCK:
        hit = _LOADED.get(key)
    if hit is not None:
        return hit
    chart_id = ENGINE.new_id()
    try:
        got = ENGINE.call("load", f"loading chart {path}", id=chart_id, path=str(path.absolute()))
    except ChartRefusedError as exc:
        raise invalid(f"chart {path} is refused", str(exc)) from None
    except EngineMissing:
        raise _missing() from None
    except RenderError as exc:
        raise invalid(f"chart {path} cannot be loaded", _cut(_one_line(exc))) from None
    loaded = LoadedChart(
        path=path.absolute(),
        name=str(got["name"]),
        version=str(got["version"]),
        kube_version=str(got["kubeVersion"]),
        defaults=dict(got["defaults"]),
        raw_values=dict(got["raw"]),
        has_schema=bool(got["has_schema"]),
        crds=[str(c) for c in got["crds"]],
        _id=chart_id,
    )
    with _LOADED_LOCK:
        _LOADED[key] = loaded
    return loaded


def pull_chart(
    chart: str, *, repository: str, version: str, destination: Path, timeout: float
) -> Path:
    """Helm's own pull into ``destination``; returns the ``.tgz``.

    The engine call has no timeout of its own, so it runs in a daemon thread that is
    abandoned (not waited for) when ``timeout`` passes.
    """
    hp = _module()
    destination.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            if repository.startswith("oci://"):
                ref = f"{repository.rstrip('/')}/{chart}"
                result["out"] = hp.pull(ref, version=version, destination=str(destination))
            else:
                result["out"] = hp.pull(
                    chart, repo_url=repository, version=version, destination=str(destination)
                )
        except Exception as exc:
            result["error"] = _one_line(exc)

    worker = threading.Thread(target=work, name=f"helm-pull-{chart}", daemon=True)
    worker.start()
    worker.join(timeout)
    where = f"{chart} {version} from {repository}"
    if worker.is_alive():
        raise AicrError(
            ErrorCode.TIMEOUT,
            f"pulling chart {where} did not finish within {timeout:g}s",
            None,
            remedy="check network access to the chart repository, or pass --charts DIR",
        )
    if "error" in result:
        raise AicrError(
            ErrorCode.SERVICE_UNAVAILABLE,
            f"cannot pull chart {where}",
            result["error"],
            remedy="offline? pass --charts DIR with <component>-<version>/ chart trees or .tgz",
        )
    found = sorted(destination.glob("*.tgz"))
    if not found:
        raise AicrError(ErrorCode.SERVICE_UNAVAILABLE, f"pulling chart {where} produced no archive")
    return found[0]


_PARSED: dict[int, Any] = {}
ParseResult = dict[str, Any] | None | RenderError


def parse_documents(texts: list[str]) -> list[ParseResult]:
    """Each YAML document parsed the way Helm and kubectl read it (Go's YAML 1.1 reader,
    so ``yes`` is a boolean and ``=`` a string), in the engine child: a map, None for an
    empty document or one that is not a map, or the :class:`RenderError` naming why it
    cannot be read (invalid YAML, nested deeper than the limit)."""
    out: list[ParseResult] = [None] * len(texts)
    todo: list[int] = []
    for i, text in enumerate(texts):
        hit = _PARSED.get(hash(text))
        if hit is not None and hit[0] == text:
            out[i] = hit[1]
        else:
            todo.append(i)
    if todo:
        try:
            got = ENGINE.call("parse", "parsing YAML", texts=[texts[i] for i in todo])
        except EngineMissing:
            raise _missing() from None
        if len(_PARSED) > 4096:
            _PARSED.clear()
        for i, (status, value) in zip(todo, got, strict=True):
            result: ParseResult
            if status == "ok":
                result = value if isinstance(value, dict) and value else None
            else:
                result = RenderError(" ".join(str(value).split()))
            _PARSED[hash(texts[i])] = (texts[i], result)
            out[i] = result
    return out


def parse_document(text: str) -> dict[str, Any] | None:
    """One YAML document as :func:`parse_documents` reads it; None for an empty document.

    Raises :class:`RenderError` with the parser's message for invalid YAML or a
    document nested deeper than the limit.
    """
    (result,) = parse_documents([text])
    if isinstance(result, RenderError):
        raise result
    return result
