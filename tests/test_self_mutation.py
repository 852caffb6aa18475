"""The project's own mutation command (benchmarks/mutation.py): how it counts, what it leaves out, what it prints.
Running mutmut itself takes minutes and is not part of the suite; the counting rules are."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("self_mutation", ROOT / "benchmarks" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["self_mutation"] = module
    spec.loader.exec_module(module)
    return module


def _diff(old: str, new: str) -> str:
    return f"# m: survived\n--- a.py\n+++ a.py\n@@ -1,1 +1,1 @@\n-{old}\n+{new}\n"


def test_the_line_is_exactly_module_killed_of_n(tool: ModuleType) -> None:
    assert tool.Score("scoring._tables", killed=191, judged=200).line() == "scoring._tables: 191 killed of 200 (95.5%)"
    assert tool.Score("x", killed=0, judged=0).line() == "x: 0 killed of 0 (100.0%)"


@pytest.mark.parametrize(("old", "new", "same"), [
    ('    b = s.encode("utf-8")', '    b = s.encode("UTF-8")', True),
    ('    t = p.read_text(encoding="utf-8")', '    t = p.read_text(encoding="Utf-8")', True),
    ('    b = s.encode("utf-8")', '    b = s.encode("XXutf-8XX")', False),
    ('    state = "late"', '    state = "LATE"', False),
    ('    b = s.encode("utf-8")', '    b = s.encode("utf-8")', False),
])
def test_only_a_codec_names_case_is_left_out_by_rule(tool: ModuleType, old: str, new: str, same: bool) -> None:
    assert tool._same_codec(_diff(old, new)) is same


def test_every_module_listed_has_test_files_that_exist(tool: ModuleType) -> None:
    modules = tool._modules()
    assert "scoring._channels" in modules and "evidence._trail" in modules
    for module, tests in modules.items():
        assert (ROOT / "tri_agent" / (module.replace(".", "/") + ".py")).is_file(), module
        assert tests and all((ROOT / t).exists() for t in tests), (module, tests)


def test_equivalents_name_a_listed_module_a_change_and_a_reason(tool: ModuleType) -> None:
    modules = tool._modules()
    for module, entries in tool._equivalents().items():
        assert module in modules
        for mutant, (change, reason) in entries.items():
            assert mutant.startswith(f"tri_agent.{module}.") and change.startswith("+") and len(reason) > 20


def test_an_unknown_module_is_one_line_and_exit_2(tool: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    assert tool.main(["scoring._nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mutation: unknown module 'scoring._nope'; listed in pyproject.toml") and err.count("\n") == 1
