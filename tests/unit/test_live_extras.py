"""A live command whose cloud SDK is not installed says which extra installs it, in one
line, exit 2, nothing written (issue 36: the SDKs are extras, ``pip install aicr-tui``
alone runs every offline command). The SDKs are hidden here with ``sys.modules[name] =
None``; tests/cli/test_wheel_install.py checks the same from a venv without them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from aicr_tui.cli import main
from aicr_tui.core.foundation.errors import AicrError
from aicr_tui.core.live.extras import EXTRAS, require_extra


@pytest.mark.parametrize("extra", sorted(EXTRAS))
def test_a_missing_sdk_names_its_extra(monkeypatch: pytest.MonkeyPatch, extra: str) -> None:
    require_extra(extra)  # installed in the test venv: nothing to say
    top = EXTRAS[extra][1][0].split(".")[0]
    monkeypatch.setitem(sys.modules, top, None)
    with pytest.raises(AicrError) as exc:
        require_extra(extra)
    assert exc.value.exit_code == 2
    assert f"install it with: pip install 'aicr-tui[{extra}]'" in exc.value.render()


def test_snapshot_with_a_kubeconfig_and_no_kubernetes_client(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\n", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "kubernetes", None)
    out = tmp_path / "out" / "live.yaml"
    rc = main(["snapshot", "-k", str(kubeconfig), "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert len(err.splitlines()) == 1, err
    assert "pip install 'aicr-tui[kubernetes]'" in err and "Traceback" not in err
    assert not out.exists() and not out.parent.exists()
