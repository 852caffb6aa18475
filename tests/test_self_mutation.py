"""The project's own mutation command (benchmarks/mutation.py): how it counts, what it leaves out, what it prints.
Running mutmut itself takes minutes and is not part of the suite; the counting rules are."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import load_script

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return load_script(ROOT / "benchmarks" / "mutation.py", "self_mutation")


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


def test_scoring_counts_timeouts_as_killed_and_leaves_out_only_matching_equivalents(
        tool: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = ("    m.x__mutmut_1: killed\n    m.x__mutmut_2: timeout\n    m.x__mutmut_3: survived\n"
              "    m.x__mutmut_4: no tests\n    m.x__mutmut_5: survived\n    m.x__mutmut_6: skipped\n"
              "    m.x__mutmut_7: survived\n    m.x__mutmut_8: survived\n")
    diffs = {"m.x__mutmut_3": _diff("    a = 1", "    a = 2"), "m.x__mutmut_4": _diff("    b = 1", "    b = 2"),
             "m.x__mutmut_5": _diff("    c = 1", "    c = None"),
             "m.x__mutmut_7": _diff('    t = s.encode("utf-8")', '    t = s.encode("UTF-8")'),
             "m.x__mutmut_8": _diff("    d = 1", "    d = 3")}
    monkeypatch.setattr(tool.subprocess, "run", lambda *a, **k: type("Done", (), {"stdout": listed})())
    monkeypatch.setattr(tool, "_show", lambda _scratch, name: diffs[name])
    monkeypatch.setattr(tool, "SURVIVORS", tmp_path)
    equivalents = {"m.x__mutmut_5": ("+    c = None", "c is never read again, so no value of it matters"),
                   "m.x__mutmut_8": ("+    d = 4", "a stale entry: the change recorded is not the mutant's")}
    score = tool._score(tmp_path, "m", equivalents)
    assert (score.killed, score.judged, score.excluded) == (2, 5, 3)
    assert score.survivors == ["m.x__mutmut_3", "m.x__mutmut_4", "m.x__mutmut_8"]
    assert "equivalent entry m.x__mutmut_8 no longer matches" in capsys.readouterr().err
    written = (tmp_path / "m.txt").read_text()
    assert written.startswith("## m.x__mutmut_3: survived\n") and "## m.x__mutmut_4: no tests\n" in written
    monkeypatch.setattr(tool.subprocess, "run", lambda *a, **k: type("Done", (), {"stdout": "    m.y: segfault\n"
                                                                                  "    m.z: not checked\n"})())
    with pytest.raises(SystemExit, match=r"mutant m\.z ended 'not checked'"):
        tool._score(tmp_path, "m", {})
