"""Node-scheduling flags: tolerations (``key[=value]:Effect``) and selectors (``key=value``).

When ``--accelerated-node-toleration`` is absent the bundler injects upstream's default, the
single wildcard ``{operator: Exists}``; on AKS that default is exactly what
CheckWildcardAcceleratedToleration blocks.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from aicr_tui.core.foundation.errors import invalid
from aicr_tui.core.foundation.names import LABEL_KEY, LABEL_VALUE, TAINT_KEY, TAINT_VALUE, shown

EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


class Toleration(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    key: str = ""
    operator: str = "Exists"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def to_values(self) -> dict[str, Any]:
        """The Kubernetes shape with empty fields omitted, in upstream field order."""
        out: dict[str, Any] = {}
        if self.key:
            out["key"] = self.key
        if self.operator:
            out["operator"] = self.operator
        if self.value:
            out["value"] = self.value
        if self.effect:
            out["effect"] = self.effect
        if self.toleration_seconds is not None:
            out["tolerationSeconds"] = self.toleration_seconds
        return out

    @property
    def is_wildcard(self) -> bool:
        return not self.key


WILDCARD = Toleration.model_construct(operator="Exists")


def parse_toleration(text: str, flag: str = "--accelerated-node-toleration") -> Toleration:
    """``key=value:Effect`` (operator Equal) or ``key:Effect`` (operator Exists).

    The key is a taint key (a Kubernetes qualified name) and the value a taint value (a
    label value), checked here so nothing outside those grammars reaches a manifest; an
    empty key (every taint with that effect) is only meaningful with operator Exists.
    """
    if text.count(":") != 1:
        raise invalid(f"{flag} {text!r}: expected key[=value]:Effect with exactly one ':'")
    left, effect = text.split(":", 1)
    if effect not in EFFECTS:
        raise invalid(f"{flag} {text!r}: effect {effect!r} must be one of {', '.join(EFFECTS)}")
    if "=" in left:
        key, value = left.split("=", 1)
        TAINT_KEY.check(key, f"{flag} {shown(text)}:")
        TAINT_VALUE.check(value, f"{flag} {shown(text)}:")
        return Toleration.model_construct(key=key, operator="Equal", value=value, effect=effect)
    if left:
        TAINT_KEY.check(left, f"{flag} {shown(text)}:")
    return Toleration.model_construct(key=left, operator="Exists", effect=effect)


def parse_tolerations(
    texts: list[str] | tuple[str, ...] | None, flag: str = "--accelerated-node-toleration"
) -> list[Toleration] | None:
    """Parse a repeatable flag; ``None`` (flag absent) stays ``None`` so the default applies."""
    if not texts:
        return None
    return [parse_toleration(t, flag) for t in texts]


def parse_selector(text: str, flag: str) -> tuple[str, str]:
    """``key=value``: a Kubernetes label key and label value (apimachinery's grammars)."""
    if "=" not in text:
        raise invalid(f"{flag} {text!r}: expected key=value")
    key, value = text.split("=", 1)
    if not key:
        raise invalid(f"{flag} {text!r}: the label key is empty")
    LABEL_KEY.check(key, f"{flag} {shown(text)}:")
    LABEL_VALUE.check(value, f"{flag} {shown(text)}:")
    return key, value


def parse_selectors(texts: list[str] | tuple[str, ...] | None, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for t in texts or ():
        k, v = parse_selector(t, flag)
        out[k] = v
    return out


def toleration_identity(item: Any) -> tuple[str, ...]:
    if not isinstance(item, dict):
        return (repr(item),)
    return tuple(
        str(item.get(k, "")) for k in ("key", "operator", "value", "effect", "tolerationSeconds")
    )


__all__ = [
    "EFFECTS",
    "WILDCARD",
    "Toleration",
    "parse_selector",
    "parse_selectors",
    "parse_toleration",
    "parse_tolerations",
    "toleration_identity",
]
