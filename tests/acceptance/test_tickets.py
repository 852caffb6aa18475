"""Tickets from a red toy-grades round: routed, stable across seeds, and never carrying sealed values."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from conftest import toy_copy, write_jsonl

from tri_agent import score
from tri_agent.acceptance._smells import Smell
from tri_agent.acceptance._tickets import Ticket, guard, smell_tickets, ticket_id, ticket_kind, tickets_from
from tri_agent.scoring._leaks import scan_leaks
from tri_agent.scoring._report import (
    AnswersChannel,
    CellFailure,
    DriftAudit,
    RelationFailure,
    RelationOutcome,
    RelationsChannel,
    ScoreReport,
)
from tri_agent.targets._gateway import run_exam, run_score_inputs


def _red_report(toy_build: Path, tmp: Path):  # type: ignore[no-untyped-def]
    toy = toy_copy(tmp / "toy", fixed=False)
    run_exam(toy_build, toy / "target.yaml", tmp / "run")
    return score(run_score_inputs(toy_build, tmp / "run"))


def test_buggy_toy_grades_tickets(toy_build: Path, tmp_path: Path) -> None:
    report = _red_report(toy_build, tmp_path)
    visible = toy_build / "visible"

    def case_input(case: str) -> str | None:
        path = visible / "inputs" / case / "scores.csv"
        return path.read_text() if path.exists() else None

    tickets = tickets_from(report, case_input)
    signatures = {t.signature for t in tickets}
    assert "builder:average:drift" in signatures  # the rounding bug
    assert "builder:row:unexpected_row" in signatures  # the untrimmed keys
    assert all(t.route == "builder" for t in tickets) and all(t.id.startswith("t-") for t in tickets)
    drift = next(t for t in tickets if t.signature == "builder:average:drift")
    assert "below" in drift.body and "-0.01" not in drift.body
    # no builder ticket carries a sealed value
    for t in tickets:
        (tmp_path / f"{t.id}.md").write_text(t.markdown())
    hits = scan_leaks([toy_build / "sealed" / "answers.jsonl"], [tmp_path / f"{t.id}.md" for t in tickets],
                      inputs=[visible], key=["case", "group"]).hits
    assert hits == []
    assert guard(tickets, toy_build / "sealed" / "answers.jsonl", [visible], ["case", "group"]) == tickets


def test_a_ticket_that_would_leak_is_redacted(toy_build: Path, tmp_path: Path) -> None:
    answers = toy_build / "sealed" / "answers.jsonl"
    inputs = "".join(p.read_text() for p in (toy_build / "visible" / "inputs").rglob("*.csv"))
    averages = [line.split('"average": "')[1].split('"')[0] for line in answers.read_text().splitlines()]
    sealed_average = next(a for a in averages if a not in inputs)  # a value only the key holds
    leaky = Ticket(id="t-x", route="builder", signature="builder:average:not_equal", title="average wrong",
                   body=f"the average should be {sealed_average}", cases=[])
    guarded = guard([leaky], answers, [toy_build / "visible"], ["case", "group"])
    assert "redacted" in guarded[0].body and sealed_average not in guarded[0].markdown()
    assert guarded[1].route == "orchestrator" and "leak-guard" in guarded[1].signature


def test_signatures_survive_a_new_seed(toy_build: Path, tmp_path: Path) -> None:
    from conftest import TOY

    from tri_agent.exam._build import build_exam

    other = build_exam(TOY / "exam", "2", tmp_path / "b2") and tmp_path / "b2"
    first = {t.signature for t in tickets_from(_red_report(toy_build, tmp_path / "1"))}
    second = {t.signature for t in tickets_from(_red_report(other, tmp_path / "2"))}
    assert {"builder:average:drift", "builder:row:unexpected_row"} <= first & second


# --- each ticket kind, on reports built by hand: what the builder (or the examiner) reads -----------------------

def _cell(case: str, field: str | None, reason: str, actual: str | None = "1.50", **key: str) -> CellFailure:
    return CellFailure(key={"case": case, **key}, field=field, cls="amount", expected="1.00", actual=actual,
                       reason=reason)


def _report(failures: list[CellFailure] = [], drift: list[DriftAudit] = [],  # noqa: B006 - never mutated
            behaviors: list[CellFailure] | None = None, relations: list[RelationOutcome] | None = None) -> ScoreReport:
    def channel(cells: list[CellFailure], audits: list[DriftAudit] = []) -> AnswersChannel:  # noqa: B006
        return AnswersChannel(verdict="fail", passed=0, total=1, rows_expected=1, rows_actual=1, rows_missing=0,
                              rows_unexpected=0, fields={}, failures=cells, drift=audits)

    rel = None if relations is None else RelationsChannel(verdict="fail", passed=0, total=1, relations=relations)
    return ScoreReport(verdict="fail", blockers=[], caliber_sha256="c", answers_sha256="a", actual_sha256="x",
                       inputs=[], answers=channel(failures, drift),
                       behaviors=None if behaviors is None else channel(behaviors), relations=rel)


def _audit(positive: int, negative: int, systematic: bool = True) -> DriftAudit:
    return DriftAudit(field="avg", cls="amount", tolerance="0.01", nonzero=positive + negative, positive=positive,
                      negative=negative, top_deltas=[], systematic=systematic)


def test_cell_tickets_group_by_field_and_reason_and_show_the_targets_own_output() -> None:
    inputs = {"c-2": "id,score\n1,x\n", "c-9": "y" * 2500}
    failures = [_cell("c-2", "avg", "out_of_tolerance"), _cell("c-1", "avg", "out_of_tolerance"),
                _cell("c-1", "avg", "out_of_tolerance"), _cell("c-9", "label", "not_equal", actual="b"),
                _cell("c-3", None, "unexpected_row", actual=None, group="z"),
                _cell("", None, "missing_row", actual=None)]
    tickets = tickets_from(_report(failures), inputs.get)
    assert [t.signature for t in tickets] == ["builder:avg:out_of_tolerance", "builder:label:not_equal",
                                              "builder:row:missing_row", "builder:row:unexpected_row"]
    avg, label, missing, unexpected = tickets
    assert avg.id == ticket_id("builder:avg:out_of_tolerance") and avg.route == "builder"
    assert avg.title == "avg: out of tolerance in 3 cell(s)" and avg.cases == ["c-1", "c-2"]
    assert avg.body == ("3 cell(s) of field 'avg' fail as out of tolerance. The value is further from the spec's "
                        "result than its tolerance allows.\n\nExample case c-2: the target wrote '1.50'.\n\n"
                        "Input of that case:\n\n```\nid,score\n1,x\n\n```")
    assert label.body.endswith("Example case c-9: the target wrote 'b'.\n\nInput of that case:\n\n```\n"
                               + "y" * 2000 + "\n```")
    assert missing.body == ("1 cell(s) of field 'row' fail as missing row. Rows the spec requires are absent.\n\n"
                            "Example case -: the target wrote nothing there.") and missing.cases == [""]
    assert unexpected.body.endswith("Example case c-3: the target wrote a row the spec does not call for "
                                    "(group='z').")


def test_a_ticket_names_at_most_three_cases_in_order() -> None:
    failures = [_cell(f"c-{i}", "avg", "not_equal") for i in (5, 1, 4, 2, 3)]
    [ticket] = tickets_from(_report(failures))
    assert ticket.cases == ["c-1", "c-2", "c-3"] and ticket.title == "avg: not equal in 5 cell(s)"


@pytest.mark.parametrize(("reason", "meaning"), [
    ("not_equal", "The value is not the one the spec calls for."),
    ("not_in_enum", "The value is not one of the categories the spec allows."),
    ("missing_field", "A value the spec requires is absent."),
    ("wrong_places", "The value is written with other decimal places than the spec prescribes."),
    ("unexpected_row", "Rows appear that the spec does not produce (check how keys are normalised)."),
    ("duplicate_key", ""),
])
def test_each_reason_says_what_it_means(reason: str, meaning: str) -> None:
    [ticket] = tickets_from(_report([_cell("c-1", "avg", reason)]))
    shown = "the target wrote nothing there." if reason == "missing_field" else None
    assert ticket.body.startswith(f"1 cell(s) of field 'avg' fail as {reason.replace('_', ' ')}. {meaning}\n\n")
    if shown:
        assert ticket.body.endswith(shown)


@pytest.mark.parametrize(("positive", "negative", "way"), [(1, 5, "below"), (5, 1, "above"), (3, 3, "above")])
def test_a_systematic_drift_is_one_builder_ticket_with_its_direction(positive: int, negative: int, way: str) -> None:
    [ticket] = tickets_from(_report(drift=[_audit(positive, negative), _audit(9, 0, systematic=False)]))
    assert ticket.signature == "builder:avg:drift" and ticket.cases == []
    assert ticket.title == f"avg: systematic drift {way} the spec's results"
    assert ticket.body == (f"{positive + negative} values of 'avg' lie within tolerance but all {way} the spec's "
                           "results: a systematic difference such as a rounding mode (half-even instead of half-up) "
                           "or a truncation. Check the rounding and precision rules the spec states.")


def test_behaviour_tickets_group_by_what_was_observed() -> None:
    cells = [_cell("c-2", "behavior", "not_equal", actual="crashed"), _cell("c-1", "behavior", "not_equal",
                                                                            actual="crashed"),
             _cell("c-3", "behavior", "not_equal", actual="accepted")]
    accepted, crashed = tickets_from(_report(behaviors=cells))
    assert (accepted.signature, crashed.signature) == ("builder:behavior:observed-accepted",
                                                       "builder:behavior:observed-crashed")
    assert crashed.title == "behaviour 'crashed' where the spec calls for another"
    assert crashed.body == ("2 case(s) behaved as 'crashed'; re-read how the spec says such inputs must be "
                            "handled.") and crashed.cases == ["c-1", "c-2"]
    assert accepted.body.startswith("1 case(s) behaved as 'accepted';") and accepted.cases == ["c-3"]


def test_relation_failures_go_to_the_builder_or_the_examiner_by_attribution() -> None:
    fails = [RelationFailure(where="c-1", detail="total 3 != 1 + 1", attribution="engine"),
             RelationFailure(where="c-2", detail="total 4 != 1 + 1", attribution="engine"),
             RelationFailure(where="c-3", detail="total 5 != 1 + 1", attribution="exam")]
    held = RelationOutcome(name="order-free", kind="equal_pair", checked=2, failed=0, failures=[])
    sums = RelationOutcome(name="sums", kind="sum_of_parts", checked=5, failed=3, failures=fails)
    builder, exam = tickets_from(_report(relations=[held, sums]))
    assert (builder.signature, exam.signature) == ("builder:sums:relation", "exam:sums:relation")
    assert builder.title == exam.title == "relation sums fails"
    assert builder.body == "Relation 'sums' (sum_of_parts) fails in 2 of 5 instance(s), e.g. at c-1: total 3 != 1 + 1"
    assert exam.body == ("Relation 'sums' (sum_of_parts) fails in 1 of 5 instance(s), e.g. at c-3: total 5 != 1 + 1"
                         "\n\nThe sealed answers agree with the target there: the caliber declares an identity the "
                         "spec does not promise, or the oracle is wrong.")
    only_exam = sums.model_copy(update={"failures": fails[2:]})
    assert [t.route for t in tickets_from(_report(relations=[only_exam]))] == ["exam"]


def test_every_channel_contributes_and_the_whole_list_is_sorted_by_signature() -> None:
    relation = RelationOutcome(name="a-rel", kind="monotone", checked=1, failed=1,
                               failures=[RelationFailure(where="c-1", detail="shrinks", attribution="engine")])
    tickets = tickets_from(_report([_cell("c-1", "z", "not_equal")], [_audit(0, 4)],
                                   [_cell("c-1", "behavior", "not_equal", actual="crashed")], [relation]))
    assert [t.signature for t in tickets] == ["builder:a-rel:relation", "builder:avg:drift",
                                              "builder:behavior:observed-crashed", "builder:z:not_equal"]


@pytest.mark.parametrize(("signature", "kind"), [("builder:avg:drift", "builder"), ("exam:sums:relation", "exam"),
                                                 ("orchestrator:t-1:leak-guard", "process"), ("odd", "process")])
def test_ticket_kinds_are_named_for_readers(signature: str, kind: str) -> None:
    assert ticket_kind(signature) == kind


def test_a_ticket_renders_as_markdown_with_its_header_lines() -> None:
    ticket = Ticket(id="t-1", route="exam", signature="exam:x:relation", title="T", body="B", cases=["c-1", "c-2"])
    assert ticket.markdown() == "# T\n\nticket: t-1\nroute: exam\ncases: c-1, c-2\n\nB\n"
    assert ticket.model_copy(update={"cases": []}).markdown() == "# T\n\nticket: t-1\nroute: exam\ncases: -\n\nB\n"
    assert ticket_id("builder:avg:drift") == "t-" + hashlib.sha256(b"builder:avg:drift").hexdigest()[:10]


def test_blocker_smells_become_one_ticket_per_name_listing_at_most_ten_places() -> None:
    found = [Smell(name="skip-added", severity="blocker", path=f"tests/t{i}.py", line=i or None, detail="a skip")
             for i in range(12)]
    found += [Smell(name="assert-dropped", severity="blocker", path="tests/a.py", line=3, detail="one assert less"),
              Smell(name="slow", severity="note", path="tests/b.py", line=1, detail="noted only")]
    dropped, skipped = smell_tickets(found)
    assert (dropped.signature, skipped.signature) == ("builder:smell:assert-dropped", "builder:smell:skip-added")
    assert skipped.title == "test-quality smell: skip-added (12)" and dropped.title.endswith("(1)")
    assert dropped.body == ("What you changed weakens what checks the target:\n\n- tests/a.py:3: one assert less"
                            "\n\nRestore the checks; make the target pass them instead.")
    listed = [line for line in skipped.body.splitlines() if line.startswith("- ")]
    assert listed[:2] == ["- tests/t0.py: a skip", "- tests/t1.py:1: a skip"] and len(listed) == 10


def test_the_guard_redacts_only_builder_tickets_and_reports_each_redaction(tmp_path: Path) -> None:
    answers = write_jsonl(tmp_path / "answers.jsonl", [{"case": "c-1", "avg": "123.45"}])
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "in.csv").write_text("id,score\n1,99\n")
    leaky = Ticket(id="t-1", route="builder", signature="builder:avg:not_equal", title="avg", body="want 123.45",
                   cases=[])
    clean = leaky.model_copy(update={"id": "t-2", "body": "the average is wrong"})
    exam = leaky.model_copy(update={"id": "t-3", "route": "exam"})
    guarded = guard([leaky, clean, exam], [answers], [tmp_path / "inputs"], ["case"])
    assert [t.id for t in guarded] == ["t-1", ticket_id("orchestrator:builder:avg:not_equal:leak-guard"), "t-2",
                                       "t-3"]
    assert guarded[0].body == "(redacted: the description would have revealed a sealed value)"
    assert guarded[1].route == "orchestrator" and guarded[1].title == "ticket t-1 was redacted"
    assert guarded[1].body.startswith("The builder ticket t-1 would have revealed a sealed value (")
    assert guarded[1].body.endswith("); the judge must describe it without it.") and "123.45" not in guarded[1].body
    assert guarded[2:] == [clean, exam]
    assert guard([leaky], answers, [tmp_path / "inputs"], ["case"])[0].body.startswith("(redacted")
