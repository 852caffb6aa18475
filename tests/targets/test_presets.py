"""Presets: the shipped ones validate; a broken one is one line with file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tri_agent import MalformedInput, UsageError
from tri_agent.targets._presets import get_preset, load_presets


def test_shipped_presets_load() -> None:
    presets = load_presets()
    assert set(presets) == {"warehouse", "document", "api", "gui"}
    assert (presets["gui"].target_kind, presets["gui"].baseline_restore) == ("browser", "session-reset-snapshot")
    assert presets["warehouse"].tolerance_classes == ["amount", "ratio", "count"]
    assert presets["document"].tolerance_classes == ["text", "json", "set"]


def test_bad_preset_names_the_line(tmp_path: Path) -> None:
    text = (Path(__file__).resolve().parents[2] / "presets" / "warehouse.yaml").read_text()
    (tmp_path / "warehouse.yaml").write_text(text.replace("[amount, ratio, count]", "[amount, money]"))
    with pytest.raises(MalformedInput, match="unknown tolerance class 'money'") as err:
        load_presets(tmp_path)
    assert err.value.where.endswith("warehouse.yaml:8")


def test_unknown_preset_is_usage_error() -> None:
    with pytest.raises(UsageError, match="known presets: api, document, gui, warehouse"):
        get_preset("gui-in-space")
