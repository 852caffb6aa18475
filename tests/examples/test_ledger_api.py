"""The ledger-api example end to end: a real service (uvicorn) over a real database (SQLite) in every case's
jail; round 1 finds the three planted bugs, each through the channel the README names, and the fix is
accepted (a simulation: every role scripted, so passed, not certified)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import GIT, round_record, round_score

from tri_agent.acceptance._rounds import accept

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ledger-api"


@pytest.fixture(scope="module")
def accepted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("ledger") / "ledger-api"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("out", "__pycache__"))
    config = project / "acceptance.yaml"  # one fresh seed per hunt: the gate's own tests test the proof's depth
    config.write_text(config.read_text().replace("mutation: {hunt_seeds: 3}", "mutation: {hunt_seeds: 1}"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "the service as the agent built it"]):
        subprocess.run([*GIT, *args], cwd=project, check=True, capture_output=True)
    verdict = accept(project)
    assert verdict.decision == "accepted" and not verdict.certified, verdict
    return project


def test_round_one_finds_every_planted_bug_through_its_channel(accepted: Path) -> None:
    score = round_score(accepted, "round-0001")
    failures = score["answers"]["failures"]
    steps = {(f["key"]["step"], f["field"]) for f in failures}
    # authorisation dropped: another account's listing answered 200 where the spec says 403
    assert any(f["key"]["step"] == "list" and f["field"] == "status" and (f["expected"], f["actual"]) == ("403", "200")
               for f in failures)
    # money rounded wrong: half-cent fees, in the answers and in the database after the case
    assert ("pay-0", "fee") in steps or any(s.startswith("pay-") and fld == "fee" for s, fld in steps)
    assert any(f["key"]["step"] == "transfers" and f["field"] == "fee" for f in failures)
    assert any(f["key"]["step"] == "accounts" and f["field"] == "balance" for f in failures)
    # page boundary off by one: the walk repeats an item, so the page sizes add up to more than the count
    relations = {r["name"]: r for r in score["relations"]["relations"]}
    assert relations["pages-add-up"]["failed"] > 0 and relations["replay-changes-nothing"]["failed"] == 0
    assert any(s.startswith("page-") and fld == "ids" for s, fld in steps)
    tickets = " ".join(p.read_text() for p in (round_record(accepted, "round-0001") / "tickets").glob("builder-*.md"))
    assert "pages-add-up" in tickets and "fee" in tickets and "status" in tickets


def test_the_fix_is_green_to_the_final_round(accepted: Path) -> None:
    rounds = sorted(p.name for p in round_record(accepted, "round-0001").parent.glob("round-*"))
    gates = [json.loads((round_record(accepted, r) / "gate.json").read_text())["green"] for r in rounds]
    assert gates[0] is False and all(gates[1:]) and len(rounds) >= 3
    final = round_score(accepted, rounds[-1])
    assert final["verdict"] == "pass" and final["answers"]["passed"] == final["answers"]["total"]


def test_every_case_ran_a_real_service_in_its_own_jail(accepted: Path) -> None:
    run = json.loads((round_record(accepted, "round-0001") / "run.json").read_text())
    assert run["isolation"] == ["bubblewrap"] and run["cases"] >= 14
    provenance = [json.loads(line) for line in (round_record(accepted, "round-0001") / "provenance.jsonl").read_text()
                  .splitlines()]
    assert {p["behavior"] for p in provenance} == {"answered"}
    assert all(p["argv"][:3] == ["python3", "-m", "uvicorn"] for p in provenance)
