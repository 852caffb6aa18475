"""The contamination audit: a sealed value in anything a role is about to receive stops the launch (exit 6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tri_agent import LeakDetected
from tri_agent.acceptance._audit import REDACTED, Exposure, before_launch, public_spec, reply, sealed_keys
from tri_agent.drivers._episode import Attempt, EpisodeResult
from tri_agent.isolation._contract import load_charter


def _secret(build: Path) -> str:
    """A distinctive sealed value: a total that appears in no input."""
    inputs = "".join(p.read_text() for p in (build / "visible").rglob("*.csv"))
    rows = [json.loads(x) for x in (build / "sealed" / "answers.jsonl").read_text().splitlines()]
    return next(r["total"] for r in rows if r["total"] not in inputs and len(r["total"]) >= 5)


@pytest.fixture
def keys(toy_build: Path, tmp_path: Path) -> list[Path]:
    builds = tmp_path / "builds"
    shutil.copytree(toy_build, builds / "round-0001")
    return sealed_keys(builds)


def _workspace(tmp_path: Path, files: dict[str, str]) -> Path:
    ws = tmp_path / "ws"
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws


def test_a_clean_workspace_launches(keys: list[Path], tmp_path: Path) -> None:
    ws = _workspace(tmp_path, {"exam/TESTPLAN.md": "# Plan\n\nEvery group, every chaos input.\n"})
    before_launch(load_charter("tester").contract, ws, {"task": "Round 1."}, keys)


@pytest.mark.parametrize("where", ["file", "name", "task", "charter"])
def test_a_sealed_value_anywhere_the_tester_looks_stops_the_launch(keys: list[Path], tmp_path: Path,
                                                                   where: str) -> None:
    value = _secret(keys[0])
    files = {"exam/TESTPLAN.md": f"# Plan\n\nexpect {value}\n" if where == "file" else "# Plan\n"}
    if where == "name":
        files[f"exam/plan-{value}.md"] = "x\n"
    texts = {"task": f"Round 1. The total is {value}." if where == "task" else "Round 1.",
             "charter": f"Remember {value}." if where == "charter" else "You are the tester."}
    with pytest.raises(LeakDetected, match="contamination audit: the tester was about to receive") as err:
        before_launch(load_charter("tester").contract, _workspace(tmp_path, files), texts, keys)
    assert err.value.exit_code == 6 and value not in err.value.line()


def test_roles_that_may_see_answers_are_not_audited_on_the_way_in(keys: list[Path], tmp_path: Path) -> None:
    ws = _workspace(tmp_path, {"exam/notes.md": f"{_secret(keys[0])}\n"})
    before_launch(load_charter("judge").contract, ws, {}, keys)
    before_launch(load_charter("examiner").contract, ws, {}, keys)


def test_values_a_role_may_hold_are_not_leaks(keys: list[Path], tmp_path: Path) -> None:
    value = _secret(keys[0])
    served = tmp_path / "served.jsonl"
    served.write_text(json.dumps({"total": value}) + "\n")
    ws = _workspace(tmp_path, {"exam/judge/notes.md": f"case gave {value}\n"})
    before_launch(load_charter("tester").contract, ws, {}, keys, Exposure((served,)))


def _result(role: str, summary: str) -> EpisodeResult:
    return EpisodeResult(role=role, status="ok", summary=summary, simulation=False,
                         attempts=[Attempt(driver="openai", model="m", status="ok", cost_basis="x", seconds=0.0)])


def test_a_reply_with_a_sealed_value_is_never_stored(keys: list[Path]) -> None:
    value = _secret(keys[0])
    with pytest.raises(LeakDetected, match="builder's reply held a sealed value") as err:
        reply(_result("builder", f"I made it print {value}"), load_charter("builder").contract, keys)
    assert value not in err.value.line()
    judged = reply(_result("judge", f"the total should be {value}"), load_charter("judge").contract, keys)
    assert judged.summary == REDACTED
    clean = _result("tester", "ran every case")
    assert reply(clean, load_charter("tester").contract, keys) == clean


def test_the_builders_own_code_is_not_what_it_receives(keys: list[Path], tmp_path: Path) -> None:
    """An honest test that asserts a value which happens to be in a key is judged by the leak scan of what the
    builder wrote (a ticket), not by a stop before its launch."""
    ws = _workspace(tmp_path, {"target/tests/test_grades.py": f"assert average() == {_secret(keys[0])}\n"})
    before_launch(load_charter("builder").contract, ws, {"task": "Round 2."}, keys)
    (ws / "exam" / "tickets" / "builder").mkdir(parents=True)
    (ws / "exam" / "tickets" / "builder" / "t-1.md").write_text(f"expected {_secret(keys[0])}\n")
    with pytest.raises(LeakDetected, match=r"exam/tickets/builder/t-1\.md"):
        before_launch(load_charter("builder").contract, ws, {"task": "Round 2."}, keys)


def test_only_a_build_with_both_a_key_and_a_caliber_is_a_sealed_key(keys: list[Path], tmp_path: Path) -> None:
    builds = keys[0].parent
    shutil.copytree(keys[0], builds / "round-0002")
    shutil.copytree(keys[0], builds / "round-0003")
    (builds / "round-0002" / "caliber.yaml").unlink()
    (builds / "round-0003" / "sealed" / "answers.jsonl").unlink()
    (builds / "notes.txt").write_text("not a build\n")
    assert sealed_keys(builds) == [builds / "round-0001"]
    assert sealed_keys(tmp_path / "no-builds") == []


def test_the_stop_names_the_place_relative_to_the_workspace_and_counts_the_hits(keys: list[Path],
                                                                               tmp_path: Path) -> None:
    value = _secret(keys[0])
    ws = _workspace(tmp_path, {"exam/TESTPLAN.md": f"# Plan\n\nfirst {value}\nagain {value}\n",
                               f"exam/zz-{value}": "x\n", "exam/a.md": "x\n"})
    with pytest.raises(LeakDetected) as err:
        before_launch(load_charter("tester").contract, ws, {"task": "Round 1."}, keys)
    message = err.value.message
    assert message.startswith("contamination audit: the tester was about to receive a sealed value at "
                              "exam/TESTPLAN.md:3, written by the examiner (")
    assert message.endswith("); 3 hit(s), nothing was launched")
    assert err.value.hint == ("remove the value from what the role receives (an examiner's TESTPLAN or SPEC, a ticket, "
                              "a file name); the run cannot continue with it")
    (ws / "exam" / "TESTPLAN.md").write_text("# Plan\n")
    with pytest.raises(LeakDetected, match=r"at the file and folder names:4 \("):
        before_launch(load_charter("tester").contract, ws, {"task": "Round 1."}, keys)


def test_case_inputs_and_key_values_are_not_secrets(keys: list[Path], tmp_path: Path) -> None:
    """The build's visible inputs (in the run and in the workspace) and the key columns' values never count."""
    rows = [json.loads(x) for x in (keys[0] / "sealed" / "answers.jsonl").read_text().splitlines()]
    case = max((r["case"] for r in rows), key=len)
    ws = _workspace(tmp_path, {"exam/TESTPLAN.md": f"# Plan\n\nsee {case}\n"})
    before_launch(load_charter("tester").contract, ws, {}, keys)
    value = _secret(keys[0])
    visible = next(p for p in (keys[0] / "visible").rglob("*.csv"))
    visible.write_text(visible.read_text() + f"s999,Zed,{value}\n")
    (ws / "exam" / "TESTPLAN.md").write_text(f"# Plan\n\nan input holds {value}\n")
    before_launch(load_charter("tester").contract, ws, {}, keys)


def test_a_copy_of_a_build_the_role_is_meant_to_run_is_not_a_leak(keys: list[Path], tmp_path: Path) -> None:
    value = _secret(keys[0])
    served = "builds/round-0001/visible/inputs/c-1/scores.csv"
    ws = _workspace(tmp_path, {"exam/TESTPLAN.md": f"# Plan\n\n{value}\n",
                               served: f"student,group,score\ns1,A,{value}\n"})
    before_launch(load_charter("tester").contract, ws, {}, keys)
    with pytest.raises(LeakDetected, match="reply held a sealed value in the summary:1"):
        reply(_result("tester", f"saw {value}"), load_charter("tester").contract, keys)


def test_a_reply_is_scanned_in_its_reason_too_and_the_redaction_keeps_what_was_absent(keys: list[Path]) -> None:
    value = _secret(keys[0])
    failed = _result("judge", "").model_copy(update={"status": "failed", "reason": f"expected {value}"})
    with pytest.raises(LeakDetected, match=r"in the reason:1 \(") as err:
        reply(failed.model_copy(update={"role": "tester"}), load_charter("tester").contract, keys)
    assert err.value.hint == "a role that never sees answers cannot name one: look for the channel it used"
    redacted = reply(failed, load_charter("judge").contract, keys)
    assert (redacted.summary, redacted.reason) == (REDACTED, REDACTED)
    only_summary = reply(_result("judge", f"total {value}"), load_charter("judge").contract, keys)
    assert (only_summary.summary, only_summary.reason) == (REDACTED, None)


@pytest.fixture
def word_key(tmp_path: Path) -> list[Path]:
    """A hand-made build whose sealed values are words, and whose key values appear in no input."""
    build = tmp_path / "builds" / "round-0001"
    (build / "sealed").mkdir(parents=True)
    (build / "visible").mkdir()
    (build / "caliber.yaml").write_text("schema_version: 1\nkey: [case]\nfields: {label: text}\n")
    rows = [{"case": f"case-{w}", "label": f"{w}-quasar"} for w in ("alpha", "bravo", "charlie", "delta")]
    (build / "sealed" / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return sealed_keys(tmp_path / "builds")


def test_key_values_name_rows_and_are_never_secrets(word_key: list[Path], tmp_path: Path) -> None:
    ws = _workspace(tmp_path, {"exam/TESTPLAN.md": "# Plan\n\ncase-alpha and case-delta\n"})
    before_launch(load_charter("tester").contract, ws, {}, word_key)
    (ws / "exam" / "TESTPLAN.md").write_text("# Plan\n\ncase-alpha is alpha-quasar\n")
    with pytest.raises(LeakDetected) as err:
        before_launch(load_charter("tester").contract, ws, {}, word_key)
    assert "exam/TESTPLAN.md:3, written by the examiner (field 'label' of row 1 (case=case-alpha))" in err.value.message


@pytest.mark.parametrize("name", ["alpha-quasar", "zulu/delta-quasar"])
def test_a_file_named_by_a_sealed_word_is_found_first_middle_or_last(word_key: list[Path], tmp_path: Path,
                                                                     name: str) -> None:
    ws = _workspace(tmp_path, {"exam/TESTPLAN.md": "# Plan\n", "exam/b.md": "x\n", name: "x\n"})
    with pytest.raises(LeakDetected) as err:
        before_launch(load_charter("tester").contract, ws, {}, word_key)
    line = 1 if name == "alpha-quasar" else 5
    assert f"at the file and folder names:{line} (" in err.value.message


def test_a_stopped_reply_says_it_was_not_stored(word_key: list[Path]) -> None:
    with pytest.raises(LeakDetected) as err:
        reply(_result("tester", "bravo-quasar"), load_charter("tester").contract, word_key)
    assert err.value.message == ("the tester's reply held a sealed value in the summary:1 (field 'label' of row 2 "
                                 "(case=case-bravo)); it was not stored")


@pytest.mark.parametrize("field", ["model", "denials", "error"])
def test_what_an_agent_reports_about_itself_is_scanned_too(keys: list[Path], field: str) -> None:
    """A command agent's reply carries its model's name, the denials it lists and its attempts' errors: each is
    stored, so each is scanned like the summary."""
    value = _secret(keys[0])
    result = _result("tester", "ran every case")
    if field == "denials":
        result = result.model_copy(update={"breach_attempts": [f"read exam answer total {value}"]})
    else:
        attempt = result.attempts[0].model_copy(update={field: f"{value} {value}"})
        result = result.model_copy(update={"attempts": [attempt]})
    with pytest.raises(LeakDetected, match="tester's reply held a sealed value") as err:
        reply(result, load_charter("tester").contract, keys)
    assert value not in err.value.line()
    redacted = reply(result.model_copy(update={"role": "judge"}), load_charter("judge").contract, keys)
    assert value not in redacted.model_dump_json()


def test_values_the_spec_states_are_public_and_a_value_it_does_not_state_is_still_a_leak(keys: list[Path],
                                                                                        tmp_path: Path) -> None:
    """A service's spec describes its fixture data (whole rows of the answer key): what the spec states is no
    secret, in any file of spec/, listed in acceptance.yaml or not. A sealed value it does not state still stops
    the builder, in its task or in a file it receives."""
    rows = [json.loads(x) for x in (keys[0] / "sealed" / "answers.jsonl").read_text().splitlines()]
    inputs = "".join(p.read_text() for p in (keys[0] / "visible").rglob("*.csv"))
    stated, unstated = [r["total"] for r in rows if r["total"] not in inputs and len(r["total"]) >= 5][:2]
    project = _workspace(tmp_path, {"spec/SPEC.md": "# Grades\n", "spec/fixture.csv": f"total\n{stated}\n",
                                    "target/grades.py": "print()\n"})
    builder = load_charter("builder").contract
    public = Exposure(public_spec(project, ["spec/SPEC.md"]))
    before_launch(builder, project, {"task": f"Fix ticket 1: the fixture total {stated}."}, keys, public)
    with pytest.raises(LeakDetected, match="at the task:1"):
        before_launch(builder, project, {"task": f"Fix ticket 1: expected {unstated}."}, keys, public)
    (project / "exam" / "tickets" / "builder").mkdir(parents=True)
    (project / "exam" / "tickets" / "builder" / "t1.md").write_text(f"expected {unstated}\n")
    with pytest.raises(LeakDetected, match=r"at exam/tickets/builder/t1\.md"):
        before_launch(builder, project, {}, keys, public)
    (project / "exam" / "tickets" / "builder" / "t1.md").unlink()
    with pytest.raises(LeakDetected, match=r"at spec/fixture\.csv"):  # before: only the listed file was public
        before_launch(builder, project, {}, keys, Exposure((project / "spec" / "SPEC.md",)))
