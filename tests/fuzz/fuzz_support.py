"""Shared pieces of the fuzz suite: the contract every parser must keep, and input strategies.

The contract: for any input a parser either returns, or raises ``AicrError`` whose rendered
message is non-empty and one line. Any other exception is a crash and fails the property.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from aicr_tui.core.foundation.errors import AicrError

REPO = Path(__file__).resolve().parents[2]
CAPTURES = REPO / "aicr_tui" / "recipes" / "samples" / "captures"
SNAPSHOTS = REPO / "aicr_tui" / "recipes" / "samples" / "snapshots"

T = TypeVar("T")

# Reproducible in CI (derandomize) and quick: the whole suite stays well under a minute.
FUZZ = settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
FUZZ_SMALL = settings(FUZZ, max_examples=20)


def check_contract(fn: Callable[[], T], *, names: str | None = None) -> T | AicrError:
    """Call ``fn``; return its result or the ``AicrError`` it raised, after checking the
    error is one non-empty line (and mentions ``names`` when given). Other exceptions escape."""
    try:
        return fn()
    except AicrError as err:
        text = err.render()
        assert text.strip(), "an AicrError with an empty message"
        assert err.message.strip(), f"an AicrError with an empty message: {text!r}"
        assert "\n" not in text and "\r" not in text, f"a multi-line error: {text!r}"
        assert str(err) == text
        if names is not None:
            assert names in text, f"the error does not name {names!r}: {text!r}"
        return err


# -- JSON-ish values --------------------------------------------------------------------
_KEYS = st.one_of(
    st.sampled_from(
        [
            "name",
            "Name",
            "NAME",
            "vmSize",
            "vmsize",
            "gpuProfile",
            "gpuprofile",
            "driver",
            "nvidia",
            "managementMode",
            "data",
            "lifecycle-state",
            "kind",
            "apiVersion",
            "items",
            "metadata",
            "labels",
            "status",
            "desiredNumberScheduled",
            "namespace",
            "type",
            "subtypes",
            "subtype",
            "measurements",
        ]
    ),
    st.text(max_size=8),
)

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=16),
    st.sampled_from(
        [
            "Standard_ND96isr_H100_v5",
            "Standard_NC24ads_A100_v4",
            "Standard_ND96isr_MI300X_v5",
            "Standard_D4s_v5",
            "Install",
            "None",
            "Unmanaged",
            "Managed",
            "NvidiaGpuPlugin",
            "NvidiaGpuOperator",
            "ACTIVE",
            "DELETING",
            "DaemonSet",
            "List",
            "DaemonSetList",
            "nvidia-gpu-device-plugin",
            "kube-system",
            "Reconcile",
            "addonmanager.kubernetes.io/mode",
            "Snapshot",
            "aicr.run/v1",
            "K8s",
            "\ud800",  # a lone surrogate: JSON escapes it, and Python would keep it
        ]
    ),
)

json_values: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(_KEYS, children, max_size=5)
    ),
    max_leaves=25,
)


def to_json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()


# -- byte-level mutations of a valid document -------------------------------------------
@st.composite
def mutated(draw: st.DrawFn, original: bytes) -> bytes:
    """``original`` truncated, with bytes flipped, spliced or duplicated: what a bad copy,
    a hand edit or a newer release produces."""
    data = bytearray(original)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        op = draw(st.sampled_from(["truncate", "flip", "insert", "delete", "dup"]))
        if not data:
            data.extend(draw(st.binary(min_size=1, max_size=8)))
            continue
        i = draw(st.integers(min_value=0, max_value=len(data) - 1))
        if op == "truncate":
            del data[i:]
        elif op == "flip":
            data[i] = draw(st.integers(min_value=0, max_value=255))
        elif op == "insert":
            data[i:i] = draw(
                st.one_of(
                    st.binary(max_size=6),
                    st.sampled_from([b"null", b"[", b"{", b'"', b",", b"1e999", b"\xff", b"}"]),
                )
            )
        elif op == "delete":
            j = draw(st.integers(min_value=i, max_value=min(len(data), i + 16)))
            del data[i:j]
        else:
            j = draw(st.integers(min_value=i, max_value=min(len(data), i + 32)))
            data[i:i] = data[i:j]
    return bytes(data)


@functools.cache
def scratch_root() -> Path:
    """One temporary directory for the whole fuzz run, removed when the run ends
    (hypothesis examples cannot use pytest's function-scoped ``tmp_path``)."""
    root = Path(tempfile.mkdtemp(prefix="aicr-fuzz-"))
    atexit.register(shutil.rmtree, root, True)
    return root


def scratch_dir(name: str) -> Path:
    """A fresh, empty directory ``name`` under :func:`scratch_root`."""
    d = scratch_root() / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    return d


def sample_bytes(name: str) -> bytes:
    return (CAPTURES / name).read_bytes()


def sample_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def qualify_aks_training(catalog: Any, profile: str | None) -> Any:
    """Qualify AKS / H100 / Ubuntu / training against ``catalog`` with no snapshot."""
    from aicr_tui.core.documents.criteria import parse_criteria
    from aicr_tui.core.recipe.qualification import qualify

    criteria = parse_criteria(
        service="aks",
        accelerator="h100",
        os="ubuntu",
        intent="training",
        registered=catalog.registered,
    )
    return qualify(criteria, profile, None, catalog=catalog)
