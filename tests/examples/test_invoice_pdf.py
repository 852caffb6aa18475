"""The invoice-pdf example end to end: a real renderer writes real PDF and HTML files, and each is read by a real
parser in a jail of its own; round 1 finds the three planted bugs through the document channel, and the fix is
accepted (a simulation: every role scripted, so passed, not certified)."""

from __future__ import annotations

import json
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest
from conftest import GIT, round_record, round_score

from tri_agent.acceptance._rounds import accept

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "invoice-pdf"


@pytest.fixture(scope="module")
def accepted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("invoice") / "invoice-pdf"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("out", "__pycache__"))
    config = project / "acceptance.yaml"  # one fresh seed per hunt: the gate's own tests test the proof's depth
    config.write_text(config.read_text().replace("mutation: {hunt_seeds: 3}", "mutation: {hunt_seeds: 1}"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "the renderer as the agent built it"]):
        subprocess.run([*GIT, *args], cwd=project, check=True, capture_output=True)
    verdict = accept(project)
    assert verdict.decision == "accepted" and not verdict.certified, verdict
    return project


def test_round_one_finds_every_planted_bug_through_a_document(accepted: Path) -> None:
    failures = round_score(accepted, "round-0001")["answers"]["failures"]
    # the last line of a wrapped description lost: the PDF's lines after it move up one, its last line is missing
    assert any(f["key"]["part"] == "line" and f["reason"] == "missing_row" for f in failures)
    # the tax rounded half-even: a half cent after an even digit, in the PDF and in the HTML
    taxes = [f for f in failures if str(f["expected"]).startswith("Tax ")]
    assert any(f["key"]["part"] == "line" for f in taxes) and any(f["key"]["part"] == "table" for f in taxes)
    # the customer's name decomposed in the HTML: the same letters to the eye, other code points
    names = [f for f in failures if f["key"]["part"] == "block" and str(f["expected"]).startswith("Bill to:")]
    assert names and all(f["actual"] != f["expected"] == unicodedata.normalize("NFC", f["actual"]) for f in names)
    tickets = " ".join(p.read_text() for p in (round_record(accepted, "round-0001") / "tickets").glob("builder-*.md"))
    assert "missing row" in tickets and "not equal" in tickets  # sealed values are never shown: redacted


def test_the_fix_is_green_to_the_final_round(accepted: Path) -> None:
    rounds = sorted(p.name for p in round_record(accepted, "round-0001").parent.glob("round-*"))
    gates = [json.loads((round_record(accepted, r) / "gate.json").read_text())["green"] for r in rounds]
    assert gates[0] is False and all(gates[1:]) and len(rounds) >= 3
    final = round_score(accepted, rounds[-1])
    assert final["verdict"] == "pass" and final["answers"]["passed"] == final["answers"]["total"]


def test_every_document_was_read_by_a_parser_in_a_jail_and_chaos_was_refused(accepted: Path) -> None:
    record = round_record(accepted, "round-0001")
    run = json.loads((record / "run.json").read_text())
    assert run["isolation"] == ["bubblewrap"] and run["cases"] >= 17
    provenance = [json.loads(line) for line in (record / "provenance.jsonl").read_text().splitlines()]
    assert {p["behavior"] for p in provenance} == {"accepted", "rejected"}
    rows = [json.loads(line) for line in (record / "actual.jsonl").read_text().splitlines()]
    parts = {r["part"] for r in rows}
    assert {"line", "pages", "h1", "block", "table", "volatile"} <= parts and not {"script", "hidden"} & parts
    # one creation date per PDF, found among the values read and replaced; the file id lives in the bytes only
    assert {(r["n"], r["value"]) for r in rows if r["part"] == "volatile"} == {("created", "1"), ("file-id", "0")}


def test_the_report_shows_a_failing_first_page_beside_the_golden_one(accepted: Path) -> None:
    kept = sorted((round_record(accepted, "round-0001") / "pages").glob("*.png"))
    failing = {f["key"]["case"] for f in round_score(accepted, "round-0001")["answers"]["failures"]
               if f["key"]["part"] == "line"}
    assert kept and {p.stem for p in kept} <= failing  # a PDF case that failed, rendered in round 1
    lost = json.loads(kept[0].with_suffix(".json").read_text())
    assert set(lost["golden"]) - set(lost["seen"])  # the golden page holds a line the target's page lacks
    from tri_agent.acceptance._scoreboard import write_reports

    write_reports(accepted)  # as `tri-agent accept` does at the end, from the trail alone
    page = (accepted / "REPORT.html").read_text()
    assert "First pages of failing cases" in page and "the golden page" in page
    assert 'style="color:#b00"' in page  # that line, marked where a person looks
