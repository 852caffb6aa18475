"""The verdict: outcomes read from the gate's own plugin, the corpus replayed case by case, and a patch that gets
past the policy by hiding its intent still fails the run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import GIT

from tri_agent import MalformedInput
from tri_agent._errors import ExitCode
from tri_agent.patchgate import GATE_FILE, CaseOutcome, Side, TestOutcome, check, parse_gate
from tri_agent.patchgate._verdict import cases, compare, read_witness

GATE = """schema_version: 1
classes:
  scoring_properties: ["tests/scoring/properties/**/*.py"]
  ledger: tests/scoring/flake_ledger.json
held_out: ["tests/held_out/**"]
invocation: {pytest: ["-q", "tests/scoring", "tests/held_out"], seed: 7}
corpus: tests/scoring/corpus
"""
CORPUS = "tests/scoring/corpus/test_props.test_rate/2026-12-01"
FILES = {
    GATE_FILE: GATE,
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    "tests/scoring/flake_ledger.json": '{"schema_version": 1, "entries": []}\n',
    "src/pricing.py": "def rate(n):\n    return n * 2\n",
    "tests/scoring/properties/test_props.py": "from pricing import rate\n\n\ndef test_rate(n=3):\n"
                                              "    assert rate(n) == n * 3\n",
    "tests/held_out/test_h.py": "from pricing import rate\n\n\ndef test_h():\n    assert rate(2) == 6\n",
    f"{CORPUS}/c1.json": '{"n": 5}\n',
    f"{CORPUS}/c2.json": '{"n": 0}\n',
}


def _repo(tmp: Path, patch: str, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"], ["tag", "base"]):
        subprocess.run([*GIT, *args], cwd=tmp, check=True, capture_output=True)
    (tmp / "src/pricing.py").write_text(patch)
    subprocess.run([*GIT, "commit", "-qam", "patch"], cwd=tmp, check=True, capture_output=True)
    return tmp


def test_an_honest_patch_passes_and_its_fixes_are_the_improvements(tmp_path: Path) -> None:
    report, found = check(_repo(tmp_path, "def rate(n):\n    return n * 3\n"), "base", "HEAD")
    assert found == [] and report.exit_code == ExitCode.PASS and report.verdict is not None
    assert report.verdict.improvements == ["test_props.test_rate/2026-12-01/c1.json",
                                           "tests/held_out/test_h.py::test_h",
                                           "tests/scoring/properties/test_props.py::test_rate"]
    assert [c.passed for c in report.verdict.base.cases] == [False, True]  # n=0: 0 == 0 at the base too


def test_a_skip_the_policy_cannot_see_is_a_failure_of_the_run(tmp_path: Path) -> None:
    # nothing in the code names the runner: rule 12 passes it; the skip is found among the exception classes
    hidden = "def _find(base, name):\n    for c in base.__subclasses__():\n        if c.__name__ == name:\n" \
             "            return c\n        found = _find(c, name)\n        if found:\n            return found\n" \
             "    return None\n\n\ndef rate(n):\n" \
             "    raise _find(BaseException, bytes([83, 107, 105, 112, 112, 101, 100]).decode())('later')\n"
    report, found = check(_repo(tmp_path, hidden), "base", "HEAD")
    assert found == [] and report.exit_code == ExitCode.FAIL and report.verdict is not None
    assert {t.outcome for t in report.verdict.head.tests} == {"skipped"}
    assert "tests/held_out/test_h.py::test_h: skipped" in report.verdict.failures
    assert not any(c.passed for c in report.verdict.head.cases)  # outside pytest there is no skip to find


def test_a_regression_is_a_test_or_case_that_passed_at_the_base(tmp_path: Path) -> None:
    report, _ = check(_repo(tmp_path, "def rate(n):\n    return n * 2 + 1\n"), "base", "HEAD")
    assert report.verdict is not None and report.exit_code == ExitCode.FAIL
    assert report.verdict.regressions == ["test_props.test_rate/2026-12-01/c2.json"]


def _side(tests: dict[str, str], cases_: dict[str, bool] | None = None, finished: bool = True) -> Side:
    return Side(tests=[TestOutcome(node_id=n, outcome=o) for n, o in tests.items()],  # type: ignore[arg-type]
                exit_status=0 if all(o == "passed" for o in tests.values()) else 1, finished=finished,
                cases=[CaseOutcome(property="p.f", case=c, input_sha256="0" * 64, passed=p)
                       for c, p in (cases_ or {}).items()])


def test_a_test_the_base_collected_and_the_head_did_not_fails_the_patch() -> None:
    v = compare(_side({"t::a": "passed", "t::b": "passed"}), _side({"t::a": "passed"}), ["landlock"])
    assert v.failures == ["t::b: collected at the base, not with the patch"] and v.regressions == ["t::b"]


def test_a_run_without_a_sandbox_never_passes() -> None:
    v = compare(_side({"t::a": "failed"}), _side({"t::a": "passed"}), [])
    assert not v.passed and "no OS sandbox" in v.failures[-1]
    assert compare(_side({"t::a": "failed"}), _side({"t::a": "passed"}), ["bubblewrap"]).passed


def test_a_run_cut_short_or_with_no_test_fails() -> None:
    assert "cut short" in " ".join(compare(_side({}), _side({"t::a": "passed"}, finished=False), ["x"]).failures)
    assert "collected no test" in " ".join(compare(_side({}), _side({}), ["x"]).failures)


def _lines(*records: dict[str, object]) -> str:
    """Records as the plugin numbers them; a finished record counts those before it."""
    numbered = [{**r, "n": i} for i, r in enumerate(records)]
    return "".join(json.dumps({**r, "records": i} if "finished" in r else r) + "\n" for i, r in enumerate(numbered))


def _phases(node: str, setup: str = "passed", call: str | None = "passed", teardown: str = "passed",
            xfail: bool = False) -> list[dict[str, object]]:
    out: list[dict[str, object]] = [{"id": node, "when": "setup", "outcome": setup, "xfail": False}]
    if call is not None:
        out.append({"id": node, "when": "call", "outcome": call, "xfail": xfail})
    return [*out, {"id": node, "when": "teardown", "outcome": teardown, "xfail": False}]


@pytest.mark.parametrize(("records", "outcome"), [
    (_phases("t::a"), "passed"),
    (_phases("t::a", call="failed"), "failed"),
    (_phases("t::a", setup="skipped", call=None), "skipped"),
    (_phases("t::a", call="skipped", xfail=True), "xfailed"),
    (_phases("t::a", call="passed", xfail=True), "xfailed"),  # an xpass is no pass of a scoring test
    (_phases("t::a", teardown="failed"), "error"),
    (_phases("t::a", setup="failed", call=None), "error"),
    (_phases("t::a")[:2], "error"),  # no teardown: the process died in the test
    ([], "missing"),
])
def test_a_test_passes_only_when_setup_call_and_teardown_passed(records: list[dict[str, object]],
                                                               outcome: str) -> None:
    tests, finished, forged = read_witness(_lines({"collected": ["t::a"]}, *records, {"finished": 0}))
    assert [t.outcome for t in tests] == [outcome] and finished and not forged


def test_a_witness_file_written_by_another_hand_voids_the_run() -> None:
    honest = _lines({"collected": ["t::a"]}, *_phases("t::a", call="failed"), {"finished": 1})
    assert read_witness(honest)[2] is False
    assert read_witness(honest[: honest.rindex("{")] + '{"fini')[1:] == (False, False)  # torn: cut short, no forgery
    again = _lines({"collected": ["t::a"]}, *_phases("t::a", call="failed"), *_phases("t::a"), {"finished": 1})
    after = honest + json.dumps({"id": "t::a", "when": "call", "outcome": "passed", "n": 5}) + "\n"
    rewritten = _lines({"collected": ["t::a"]}, *_phases("t::a"), {"finished": 0}).replace('"n": 2', '"n": 7')
    twice = _lines({"collected": ["t::a"]}, {"collected": ["t::a"]}, *_phases("t::a"), {"finished": 0})
    for forged in (again, after, rewritten, twice):
        assert read_witness(forged)[2] is True
    v = compare(_side({"t::a": "failed"}), _side({"t::a": "passed"}).model_copy(update={"forged": True}), ["x"])
    assert not v.passed and "written by another hand" in v.failures[0]


def test_a_corpus_case_outside_a_dated_folder_or_naming_no_property_is_refused(tmp_path: Path) -> None:
    gate = parse_gate(GATE, GATE_FILE)
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert [c.case for c in cases(tmp_path, gate)] == ["2026-12-01/c1.json", "2026-12-01/c2.json"]
    (tmp_path / "tests/scoring/corpus/test_props.test_rate/c3.json").write_text("{}")
    with pytest.raises(MalformedInput, match=r"test_props\.test_rate/c3\.json.*dated folders"):
        cases(tmp_path, gate)
    (tmp_path / "tests/scoring/corpus/test_props.test_rate/c3.json").unlink()
    (tmp_path / "tests/scoring/corpus/test_other.f/2026-12-01").mkdir(parents=True)
    (tmp_path / "tests/scoring/corpus/test_other.f/2026-12-01/c.json").write_text("{}")
    with pytest.raises(MalformedInput, match="names no scoring property"):
        cases(tmp_path, gate)
