"""The one door to the Helm engine (``helm-python-sdk``, import ``helm_python``).

Nothing else in the project imports ``helm_python``, and this module imports it only when a
chart is actually loaded, so the wizard and the other commands start without it. The
package is an optional extra (``pip install 'aicr-tui[verify]'``, about 250 MB installed);
without it :func:`require_engine` raises one line that says how to install it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.foundation.errors import AicrError, ErrorCode, invalid

INSTALL_HINT = "pip install 'aicr-tui[verify]'"


def _module() -> Any:
    try:
        import helm_python
    except ImportError as exc:
        raise invalid(
            "verify needs the Helm engine (helm-python-sdk), which is not installed",
            remedy=f"install it with: {INSTALL_HINT}",
        ) from exc
    return helm_python


def require_engine() -> None:
    """Raise the one-line install hint when the engine is missing."""
    _module()


def engine_version() -> str:
    hp = _module()
    try:
        return f"helm-python-sdk {hp.__version__} (Helm {hp.helm_sdk_version()})"
    except Exception:  # the version probe is informational only
        return f"helm-python-sdk {getattr(hp, '__version__', '?')}"


class RenderError(Exception):
    """A template or values error from the engine, as one line."""


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


@dataclass
class LoadedChart:
    """A chart loaded once; renders are memoised on the values (charts are immutable)."""

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
    _chart: Any = field(repr=False)
    _renders: dict[str, dict[str, str] | str] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def render(self, values: dict[str, Any], *, release: str, namespace: str) -> dict[str, str]:
        """Template path -> rendered text. Raises :class:`RenderError` on a template error."""
        import json

        key = json.dumps([release, namespace, values], sort_keys=True, default=str)
        with self._lock:
            cached = self._renders.get(key)
        if cached is None:
            try:
                cached = dict(self._chart.render(values, name=release, namespace=namespace))
            except Exception as exc:  # HelmRenderError, HelmValuesError
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
        try:
            self._chart.validate_schema(values)
        except Exception as exc:
            return _one_line(exc)
        return None


_LOADED: dict[str, LoadedChart] = {}
_LOADED_LOCK = threading.Lock()


def load_chart(path: Path) -> LoadedChart:
    """Load a chart directory or ``.tgz`` (memoised per resolved path and mtime)."""
    hp = _module()
    try:
        st = path.stat()
    except OSError as exc:
        raise invalid(f"chart {path} cannot be read", exc.strerror or str(exc)) from None
    key = f"{path.resolve()}\0{st.st_mtime_ns}"
    with _LOADED_LOCK:
        hit = _LOADED.get(key)
    if hit is not None:
        return hit
    try:
        chart = hp.Chart.load(str(path))
        meta = chart.metadata
        defaults = chart.merge_values({})
        raw_values = chart.values
        crds = [str(c.get("data", "")) for c in chart.crds]
        has_schema = chart.schema is not None
    except Exception as exc:
        raise invalid(f"chart {path} cannot be loaded", _one_line(exc)) from None
    loaded = LoadedChart(
        path=path,
        name=str(meta.get("name") or ""),
        version=str(meta.get("version") or ""),
        kube_version=str(meta.get("kubeVersion") or ""),
        defaults=defaults,
        raw_values=raw_values,
        has_schema=has_schema,
        crds=crds,
        _chart=chart,
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


def parse_document(text: str) -> dict[str, Any] | None:
    """One YAML document parsed the way Helm and kubectl read it (Go's YAML 1.1 reader,
    so ``yes`` is a boolean and ``=`` a string); None for an empty document.

    Raises :class:`RenderError` with the parser's message for invalid YAML or a
    document that is not a map.
    """
    hp = _module()
    key = hash(text)
    hit = _PARSED.get(key)
    if hit is not None and hit[0] == text:
        return hit[1]  # type: ignore[no-any-return]
    try:
        doc = hp.values_from_yaml(text)
    except Exception as exc:
        raise RenderError(_one_line(exc)) from None
    out = doc if isinstance(doc, dict) and doc else None
    if len(_PARSED) > 4096:
        _PARSED.clear()
    _PARSED[key] = (text, out)
    return out
