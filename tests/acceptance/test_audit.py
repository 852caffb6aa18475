"""The contamination audit: a sealed value in anything a role is about to receive stops the launch (exit 6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tri_agent import LeakDetected
from tri_agent.acceptance._audit import REDACTED, Exposure, before_launch, reply, sealed_keys
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
