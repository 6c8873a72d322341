"""The validator catalog: which checks exist, in which phase, with what budget and knobs.

The embedded catalog is ``aicr_tui/recipes/validators/catalog.yaml``; ``--data DIR`` merges
``DIR/validators/catalog.yaml`` over it (an entry with the same name replaces the embedded
one entirely, new names add checks), as upstream's validator extension does. Image
rewrites from ``AICR_VALIDATOR_IMAGE_REGISTRY`` / ``AICR_VALIDATOR_IMAGE_TAG`` apply at
load. Inference tuning knobs (``AICR_INFERENCE_PERF_*``) are read from the entry's ``env``
only, never from the CLI's shell (upstream rule), so ``--data`` is how a user changes them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from aicr_tui.core.documents.recipe_result import PHASES
from aicr_tui.core.foundation.errors import invalid, malformed
from aicr_tui.core.foundation.fileio import read_document
from aicr_tui.core.foundation.yamlio import load_yaml_plain

CATALOG_KIND = "ValidatorCatalog"
CATALOG_API_VERSIONS = ("validator.nvidia.com/v1alpha1", "aicr.nvidia.com/v1")
CATALOG_PHASES = tuple(p for p in PHASES if p != "readiness")
DEFAULT_TIMEOUT_S = 300.0
EMBEDDED_CATALOG = Path(__file__).resolve().parents[2] / "recipes" / "validators" / "catalog.yaml"

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}


def parse_duration(text: str, what: str) -> float:
    """Parse a Go duration (``10m``, ``1h5m``, ``90s``) into seconds; ``what`` names it."""
    s = str(text).strip()
    if s in ("0", ""):
        return 0.0
    pos = 0
    total = 0.0
    for m in _DURATION_PART.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if pos != len(s) or pos == 0:
        raise invalid(f'{what} "{text}" is not a duration; expected e.g. 90s, 10m or 1h5m')
    return total


def format_duration(seconds: float) -> str:
    whole = int(round(seconds))
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    out = (f"{h}h" if h else "") + (f"{m}m" if m else "") + (f"{s}s" if s else "")
    return out or "0s"


class EnvVar(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)
    name: str
    value: str = ""

    @field_validator("value", mode="before")
    @classmethod
    def _stringify(cls, v: Any) -> Any:
        return "" if v is None else str(v)


class CatalogEntry(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)
    name: str
    phase: str
    description: str = ""
    image: str
    timeout: str = "0"
    args: list[str] = Field(default_factory=list)
    env: list[EnvVar] = Field(default_factory=list)
    note: str = ""

    @property
    def timeout_s(self) -> float:
        seconds = parse_duration(self.timeout, f'timeout of validator "{self.name}"')
        return seconds if seconds > 0 else DEFAULT_TIMEOUT_S

    def env_value(self, name: str) -> str | None:
        """The last value the entry sets for ``name`` (later entries win), or None."""
        found: str | None = None
        for var in self.env:
            if var.name == name:
                found = var.value
        return found


class CatalogMetadata(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)
    name: str = ""
    version: str = ""


class ValidatorCatalog(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)
    apiVersion: str
    kind: str
    metadata: CatalogMetadata = Field(default_factory=CatalogMetadata)
    validators: list[CatalogEntry] = Field(default_factory=list)

    def entry(self, name: str, phase: str | None = None) -> CatalogEntry | None:
        for e in self.validators:
            if e.name == name and (phase is None or e.phase == phase):
                return e
        return None

    def phase_entries(self, phase: str) -> list[CatalogEntry]:
        return [e for e in self.validators if e.phase == phase]


def _parse_catalog(text: str, source: str) -> ValidatorCatalog:
    raw = load_yaml_plain(text, f'validator catalog "{source}"')
    if not isinstance(raw, dict):
        raise invalid(f'validator catalog "{source}" is not a mapping with a validators list')
    kind = raw.get("kind")
    if kind != CATALOG_KIND:
        raise invalid(f'validator catalog "{source}" has kind "{kind}", expected "{CATALOG_KIND}"')
    api = raw.get("apiVersion")
    if api not in CATALOG_API_VERSIONS:
        raise invalid(
            f'validator catalog "{source}" has apiVersion "{api}", expected one of '
            + ", ".join(CATALOG_API_VERSIONS)
        )
    try:
        catalog = ValidatorCatalog.model_validate(raw)
    except ValidationError as exc:
        raise malformed(exc, f'validator catalog "{source}"') from exc
    _check_entries(catalog.validators, source)
    return catalog


def _check_entries(entries: Sequence[CatalogEntry], source: str) -> None:
    seen: set[str] = set()
    for e in entries:
        if not e.name:
            raise invalid(f'validator catalog "{source}" has an entry without a name')
        if not _DNS_LABEL.match(e.name):
            raise invalid(f'validator catalog "{source}": name "{e.name}" is not a DNS-1123 label')
        if e.name in seen:
            raise invalid(f'validator catalog "{source}": validator "{e.name}" is listed twice')
        seen.add(e.name)
        if e.phase not in CATALOG_PHASES:
            raise invalid(
                f'validator catalog "{source}": validator "{e.name}" has phase "{e.phase}", '
                f"expected one of {', '.join(CATALOG_PHASES)}"
            )
        if not e.image.strip():
            raise invalid(f'validator catalog "{source}": validator "{e.name}" has no image')
        # a malformed duration fails at load, naming the file and the entry
        parse_duration(e.timeout, f'validator catalog "{source}": timeout of validator "{e.name}"')


def rewrite_image(image: str, env: Mapping[str, str]) -> str:
    """Apply AICR_VALIDATOR_IMAGE_REGISTRY / AICR_VALIDATOR_IMAGE_TAG to an nvidia image."""
    out = image
    registry = env.get("AICR_VALIDATOR_IMAGE_REGISTRY", "").strip().rstrip("/")
    if registry and out.startswith("ghcr.io/nvidia/"):
        out = registry + "/" + out[len("ghcr.io/nvidia/") :]
    tag = env.get("AICR_VALIDATOR_IMAGE_TAG", "").strip()
    if tag and "@" not in out and out.startswith((registry or "ghcr.io/nvidia") + "/"):
        name = out.rsplit(":", 1)[0] if ":" in out.rsplit("/", 1)[-1] else out
        out = f"{name}:{tag}"
    return out


def load_validator_catalog(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    embedded: str | os.PathLike[str] | None = None,
) -> ValidatorCatalog:
    """Load the embedded catalog, merge ``data_dir``'s over it, apply image rewrites."""
    env = os.environ if environ is None else environ
    base_path = Path(embedded) if embedded is not None else EMBEDDED_CATALOG
    catalog = _parse_catalog(read_document(base_path, "validator catalog"), str(base_path))
    if data_dir is not None:
        root = Path(data_dir)
        if not root.is_dir():
            raise invalid(f'--data "{root}" is not a directory')
        ext = root / "validators" / "catalog.yaml"
        if ext.exists():
            extra = _parse_catalog(read_document(ext, "validator catalog"), str(ext))
            by_name = {e.name: i for i, e in enumerate(catalog.validators)}
            merged = list(catalog.validators)
            for e in extra.validators:
                if e.name in by_name:
                    merged[by_name[e.name]] = e
                else:
                    merged.append(e)
            catalog = catalog.model_copy(update={"validators": merged})
    rewritten = [
        e.model_copy(update={"image": rewrite_image(e.image, env)}) for e in catalog.validators
    ]
    return catalog.model_copy(update={"validators": rewritten})


def preflight_declared_checks(
    declared: Mapping[str, Sequence[str]], catalog: ValidatorCatalog
) -> None:
    """Every declared check resolves to exactly one catalog entry in its phase.

    All offenders are reported in one INVALID_REQUEST (exit 2), before any cluster work.
    """
    problems: list[str] = []
    for phase in CATALOG_PHASES:
        names = list(declared.get(phase, ()))
        seen: set[str] = set()
        for name in names:
            if name in seen:
                problems.append(
                    f'declared check "{name}" is declared more than once in phase {phase}'
                )
                continue
            seen.add(name)
            if catalog.entry(name, phase) is not None:
                continue
            elsewhere = [e.phase for e in catalog.validators if e.name == name]
            if elsewhere:
                problems.append(
                    f'declared check "{name}" in phase {phase} matches no validator in the '
                    f"catalog (found under phase: {elsewhere[0]})"
                )
            else:
                problems.append(
                    f'declared check "{name}" in phase {phase} matches no validator in the catalog'
                )
    if problems:
        raise invalid("; ".join(problems))


def knob(entry: CatalogEntry, name: str, default: str) -> str:
    """A tuning knob from the catalog entry's env, else ``default``."""
    value = entry.env_value(name)
    return default if value is None or value == "" else value


def knob_duration(entry: CatalogEntry, name: str, default: str) -> float:
    return parse_duration(knob(entry, name, default), f"{name} of validator {entry.name}")


def knob_positive_int(entry: CatalogEntry, name: str, default: int) -> int:
    raw = knob(entry, name, str(default))
    try:
        value = int(raw)
    except ValueError as exc:
        raise invalid(
            f'{name} of validator {entry.name} is "{raw}", expected a positive integer'
        ) from exc
    if value <= 0:
        raise invalid(f'{name} of validator {entry.name} is "{raw}", expected a positive integer')
    return value


__all__ = [
    "CatalogEntry",
    "ValidatorCatalog",
    "format_duration",
    "knob",
    "knob_duration",
    "knob_positive_int",
    "load_validator_catalog",
    "parse_duration",
    "preflight_declared_checks",
    "rewrite_image",
]
