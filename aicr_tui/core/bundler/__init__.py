"""The bundler: turn a RecipeResult plus bundle-time overrides into a deployable bundle.

Public calls (see :mod:`aicr_tui.core.bundler.api` and :mod:`aicr_tui.core.bundler.writer`): :func:`parse_overrides`, :func:`plan_bundle`,
:func:`write_bundle`, :func:`check_override_entry`, :func:`refusal` (the one line for a
refused plan). The faces call them through :mod:`aicr_tui.core.services.bundle`.
"""

from aicr_tui.core.bundler.api import check_override_entry, plan_bundle
from aicr_tui.core.bundler.model import (
    BlockingError,
    BundlePlan,
    BundleWriteResult,
    ComponentPlan,
    Feedback,
)
from aicr_tui.core.bundler.overrides import (
    BundleOverrides,
    OverrideEntry,
    parse_entry,
    parse_overrides,
)
from aicr_tui.core.bundler.tolerations import Toleration, parse_toleration, parse_tolerations
from aicr_tui.core.bundler.writer import refusal, write_bundle

__all__ = [
    "BlockingError",
    "BundleOverrides",
    "BundlePlan",
    "BundleWriteResult",
    "ComponentPlan",
    "Feedback",
    "OverrideEntry",
    "Toleration",
    "check_override_entry",
    "parse_entry",
    "parse_overrides",
    "parse_toleration",
    "parse_tolerations",
    "plan_bundle",
    "refusal",
    "write_bundle",
]
