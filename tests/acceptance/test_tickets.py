"""Tickets from a red toy-grades round: routed, stable across seeds, and never carrying sealed values."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml
from conftest import toy_copy, write_jsonl

from tri_agent import score
from tri_agent.acceptance._judging import case_files
from tri_agent.acceptance._smells import Smell
from tri_agent.acceptance._tickets import (
    Sources,
    Ticket,
    builder_folder,
    guard,
    locate,
    plan_line,
    plan_sections,
    redacted_text,
    relation_columns,
    resolved_text,
    smell_tickets,
    ticket_id,
    ticket_kind,
    tickets_from,
    where_parts,
)
from tri_agent.scoring._caliber import Caliber, load_caliber
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
    tickets = tickets_from(report, _toy_sources(toy_build))
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


def _toy_sources(build: Path) -> Sources:
    from conftest import TOY

    return Sources(inputs=lambda case: case_files(build / "visible", case),
                   caliber=load_caliber(build / "caliber.yaml")[0], plan=(TOY / "exam" / "TESTPLAN.md").read_text())


def test_toy_tickets_point_at_the_row_the_input_line_and_the_promise(toy_build: Path, tmp_path: Path) -> None:
    tickets = {t.signature: t for t in tickets_from(_red_report(toy_build, tmp_path), _toy_sources(toy_build))}
    total = tickets["builder:total:out_of_tolerance"].body.split("\n\n")[1].splitlines()
    assert total[0].startswith("Example: case c-") and ", row group='" in total[0]
    assert total[0].endswith("', column 'total': the target wrote '" + total[0].split("wrote '")[1])
    case, group = total[0].split("case ")[1].split(",")[0], total[0].split("group=")[1].split(",")[0].strip("'")
    lines = (toy_build / "visible" / "inputs" / case / "scores.csv").read_text().splitlines()
    first = next(i for i, line in enumerate(lines, 1) if group in line.split(","))  # the key as a whole cell
    assert total[1] == f"Input: scores.csv line {first}: {lines[first - 1]!r}"
    assert total[2] == "Spec: caliber field 'total' is amount: exact decimal, |actual - expected| <= 0.01"
    assert total[3].startswith("Test plan: TESTPLAN.md line 13: 5. Metamorphic relations: group totals and counts")
    unexpected = tickets["builder:row:unexpected_row"].body.split("\n\n")[1].splitlines()
    assert unexpected[2] == "Spec: caliber rows are keyed by case, group: one row per key the spec calls for"
    drift = tickets["builder:average:drift"].body.split("\n\n")[1].splitlines()
    assert drift[1] == ("Spec: caliber field 'average' is amount: exact decimal, |actual - expected| <= 0.01, "
                        "written with 2 decimal places")
    assert drift[2].startswith("Test plan: TESTPLAN.md line 5: 1. Ordinary score sheets") and "HALF_UP" in drift[2]


def test_no_ticket_ever_states_a_sealed_value(toy_build: Path, tmp_path: Path) -> None:
    report = _red_report(toy_build, tmp_path)
    inputs = "".join(p.read_text() for p in (toy_build / "visible").rglob("*.csv"))
    plan = _toy_sources(toy_build).plan
    sealed = {f.expected for f in report.answers.failures if f.expected and f.expected not in inputs + plan}
    tickets = tickets_from(report, _toy_sources(toy_build))
    assert len(sealed) > 20 and len(tickets) >= 5  # what could leak: every expected value the target missed
    for t in tickets:
        text = t.markdown()
        assert not any(value in text for value in sealed), t.signature
    missing = next(t for t in tickets if t.signature == "builder:total:missing_row")
    assert "group=" not in missing.body and "a row the target did not write (its key is the sealed answer's" \
        in missing.body and "Input: not located (the row's key is not shown)" in missing.body
    for t in tickets:
        (tmp_path / f"{t.id}.md").write_text(t.markdown())
    hits = scan_leaks([toy_build / "sealed" / "answers.jsonl"], [tmp_path / f"{t.id}.md" for t in tickets],
                      inputs=[toy_build / "visible"], key=["case", "group"]).hits
    assert hits == []


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


CALIBER = Caliber.model_validate(yaml.safe_load("""
key: [case, customer, currency]
fields: {avg: amount, paid: {class: amount, places: 2}, label: text, state: {class: status, values: [open, done]}}
behaviors: {values: [accepted, rejected, crashed]}
relations:
  - {name: sums, kind: sum_of_parts, field: avg, total_field: paid, by: [case, currency],
     parts: {where_not: {customer: ALL}}, total: {where: {customer: ALL}}, scope: {behavior: accepted}}
  - {name: order-free, kind: equal_pair, case_column: case, fields: [label, avg, label], pairs: [[c-2, c-9]]}
  - {name: sorted, kind: ordered, field: customer}
"""))
PLAN = """# Plan

Ordinary orders: several customers
in two currencies.

1. The paid amounts: written with two places.
2. Totals add up (sums).
- Unreadable files are rejected: the behaviour is checked.
"""
INPUTS = {"c-2": {"orders.csv": "customer,currency,amount\nACME,USD,1\nACME,EUR,2\n", "more.csv": "BOLT,EUR,3\n"},
          "c-9": {"only.csv": "y" * 2500}}
SOURCES = Sources(inputs=lambda case: INPUTS.get(case, {}), caliber=CALIBER, plan=PLAN)


def test_a_cell_ticket_names_the_row_by_its_two_column_key_the_input_line_and_the_promise() -> None:
    failures = [_cell("c-2", "paid", "out_of_tolerance", customer="ACME", currency="EUR"),
                _cell("c-1", "paid", "out_of_tolerance", customer="ACME", currency="EUR")]
    [ticket] = tickets_from(_report(failures), SOURCES)
    assert ticket.cases == ["c-1", "c-2"] and ticket.title == "paid: out of tolerance in 2 cell(s)"
    assert ticket.body == (
        "2 cell(s) of field 'paid' fail as out of tolerance. The value is further from the spec's result than its "
        "tolerance allows.\n\n"
        "Example: case c-2, row customer='ACME', currency='EUR', column 'paid': the target wrote '1.50'.\n"
        "Input: orders.csv line 3: 'ACME,EUR,2'\n"
        "Spec: caliber field 'paid' is amount: exact decimal, |actual - expected| <= 0.01, written with 2 decimal "
        "places\n"
        "Test plan: TESTPLAN.md line 6: 1. The paid amounts: written with two places.\n\n"
        "Input of that case (orders.csv):\n\n```\ncustomer,currency,amount\nACME,USD,1\nACME,EUR,2\n\n```")


def test_the_input_line_is_the_first_that_holds_every_key_value_in_any_input_file() -> None:
    files = INPUTS["c-2"]
    assert locate(files, ["ACME", "EUR"]) == ("orders.csv", 3, "ACME,EUR,2")
    assert locate(files, ["ACME"]) == ("orders.csv", 2, "ACME,USD,1")
    assert locate(files, ["EUR", "BOLT"]) == ("more.csv", 1, "BOLT,EUR,3")
    assert locate(files, ["BOLT", "USD"]) is None and locate(files, []) is None and locate(files, [" ", ""]) is None
    assert locate(files, ["ACME", " "]) == ("orders.csv", 2, "ACME,USD,1")  # a blank value looks for nothing
    # a whole cell first, in any file; then the text of any line
    spaced = {"a.csv": "s1, ACME,1\ns2,ACMEX;2\n", "b.tsv": "s3\tACME|3\n", "c.json": '{"c": "ACME"}\n'}
    assert locate(spaced, ["ACME"]) == ("b.tsv", 1, "s3\tACME|3")
    assert locate(spaced, [" ACME"]) == ("a.csv", 1, "s1, ACME,1")
    assert locate(spaced, ["ACMEX", "2"]) == ("a.csv", 2, "s2,ACMEX;2")
    assert locate({"c.json": '{"c": "ACME"}\n'}, ["ACME"]) == ("c.json", 1, '{"c": "ACME"}')
    assert locate({"a.csv": "x,ACME\n", "b.csv": "ACME,EUR\n"}, ["ACME", "EUR"]) == ("b.csv", 1, "ACME,EUR")
    [moved] = tickets_from(_report([_cell("c-2", "label", "not_equal", actual="b", customer="BOLT", currency="EUR")]),
                           SOURCES)
    assert "Input: more.csv line 1: 'BOLT,EUR,3'\n" in moved.body
    assert moved.body.endswith("Input of that case (more.csv):\n\n```\nBOLT,EUR,3\n\n```")


@pytest.mark.parametrize(("case", "key", "line"), [
    ("c-2", {"customer": "ZED", "currency": "EUR"}, "Input: not located (no line of orders.csv, more.csv holds 'ZED' "
                                                    "and 'EUR')"),
    ("c-2", {}, "Input: not located (the key names only the case; its inputs: orders.csv, more.csv)"),
    ("c-7", {"customer": "ACME"}, "Input: not located (no input file of case c-7 is at hand)"),
    ("", {"customer": "ACME"}, "Input: not located (no input file of case - is at hand)"),
])
def test_an_input_line_not_found_is_said_so(case: str, key: dict[str, str], line: str) -> None:
    [ticket] = tickets_from(_report([_cell(case, "label", "not_equal", actual="b", **key)]), SOURCES)
    lines = ticket.body.split("\n\n")[1].splitlines()
    assert lines[1] == line
    repro = "\n\nInput of that case (orders.csv):\n\n```\n" + INPUTS["c-2"]["orders.csv"] + "\n```"
    assert ticket.body.endswith(repro) if case == "c-2" else "Input of that case" not in ticket.body


def test_long_inputs_and_lines_are_clipped() -> None:
    long_line = "ACME," + "x" * 400
    sources = Sources(inputs=lambda _c: {"a.csv": long_line + "\n" + "z" * 3000}, caliber=CALIBER)
    [ticket] = tickets_from(_report([_cell("c-1", "label", "not_equal", actual="b", customer="ACME")]), sources)
    assert f"Input: a.csv line 1: {long_line[:300] + '...'!r}\n" in ticket.body
    assert ticket.body.endswith("```\n" + (long_line + "\n" + "z" * 3000)[:2000] + "\n```")
    exact = Sources(inputs=lambda _c: {"a.csv": "ACME," + "x" * 295}, caliber=CALIBER)
    [whole] = tickets_from(_report([_cell("c-1", "label", "not_equal", actual="b", customer="ACME")]), exact)
    assert f"Input: a.csv line 1: {'ACME,' + 'x' * 295!r}\n" in whole.body


def test_rows_the_target_did_not_write_or_should_not_have_written() -> None:
    failures = [_cell("c-2", None, "unexpected_row", actual=None, customer="ACME", currency="USD"),
                _cell("c-2", "avg", "missing_row", actual=None, customer="ACME", currency="EUR"),
                _cell("c-2", "state", "missing_field", actual=None, customer="ACME", currency="EUR")]
    missing, unexpected, state = tickets_from(_report(failures), SOURCES)
    assert missing.body.startswith("1 cell(s) of field 'avg' fail as missing row. Rows the spec requires are "
                                   "absent.\n\nExample: ")
    assert missing.body.split("\n\n")[1] == (
        "Example: case c-2, a row the target did not write (its key is the sealed answer's, so it is not shown), "
        "column 'avg': the target wrote nothing there.\n"
        "Input: not located (the row's key is not shown)\n"
        "Spec: caliber field 'avg' is amount: exact decimal, |actual - expected| <= 0.01\n"
        "Test plan: no section of TESTPLAN.md mentions 'avg'")
    assert "EUR" not in missing.body.split("Input of that case")[0]
    assert missing.body.endswith("Input of that case (orders.csv):\n\n```\n" + INPUTS["c-2"]["orders.csv"] + "\n```")
    assert state.body.split("\n\n")[1] == (
        "Example: case c-2, row customer='ACME', currency='EUR', column 'state': the target wrote nothing there.\n"
        "Input: orders.csv line 3: 'ACME,EUR,2'\n"
        "Spec: caliber field 'state' is status: exact equality against an enum, one of open, done\n"
        "Test plan: no section of TESTPLAN.md mentions 'state'")
    assert unexpected.body.split("\n\n")[1] == (
        "Example: case c-2, row customer='ACME', currency='USD', the whole row: the target wrote a row the spec does "
        "not call for.\n"
        "Input: orders.csv line 2: 'ACME,USD,1'\n"
        "Spec: caliber rows are keyed by case, customer, currency: one row per key the spec calls for\n"
        "Test plan: TESTPLAN.md line 3: Ordinary orders: several customers in two currencies.")
    [only_case] = tickets_from(_report([_cell("c-2", "label", "not_equal", actual="b")]), SOURCES)
    assert only_case.body.split("\n\n")[1].startswith("Example: case c-2, its only row, column 'label': ")


def test_without_a_caliber_or_plan_a_ticket_says_what_it_lacks() -> None:
    failures = [_cell("c-2", "avg", "not_equal", customer="ACME"), _cell("c-2", None, "unexpected_row", actual=None)]
    avg, row = tickets_from(_report(failures), Sources(inputs=lambda case: INPUTS.get(case, {})))
    assert avg.body.split("\n\n")[1].splitlines()[2:] == ["Spec: the caliber at hand declares no field 'avg'",
                                                          "Test plan: no section of TESTPLAN.md mentions 'avg'"]
    assert row.body.split("\n\n")[1].splitlines()[2:] == ["Spec: the caliber at hand declares no key",
                                                          "Test plan: not searched (no column names this "
                                                          "failure)"]
    [odd] = tickets_from(_report([_cell("c-2", "nope", "not_equal")]), SOURCES)
    assert "Spec: the caliber at hand declares no field 'nope'\n" in odd.body


def test_the_test_plan_is_read_in_sections_and_searched_by_word() -> None:
    assert plan_sections(PLAN) == [(1, "# Plan"), (3, "Ordinary orders: several customers in two currencies."),
                                   (6, "1. The paid amounts: written with two places."),
                                   (7, "2. Totals add up (sums)."),
                                   (8, "- Unreadable files are rejected: the behaviour is checked.")]
    assert plan_sections("## A\nunder it\n  * b\n  c\n3) d") == [(1, "## A"), (2, "under it"), (3, "* b c"),
                                                                 (5, "3) d")]
    assert plan_sections("text\n  ### B\nunder B\n+ e") == [(1, "text"), (2, "### B"), (3, "under B"), (4, "+ e")]
    assert plan_line(PLAN, ["total"]) == "Test plan: TESTPLAN.md line 7: 2. Totals add up (sums)."
    assert plan_line(PLAN, ["customer", "sum"]) == ("Test plan: TESTPLAN.md line 3: Ordinary orders: several "
                                                    "customers in two currencies.")
    assert plan_line(PLAN, ["sum"]) == "Test plan: TESTPLAN.md line 7: 2. Totals add up (sums)."
    assert plan_line(PLAN, ["pai"]) == "Test plan: no section of TESTPLAN.md mentions 'pai'"  # whole words only
    assert plan_line(PLAN, ["aid"]) == "Test plan: no section of TESTPLAN.md mentions 'aid'"
    assert plan_line(PLAN, ["", "x.y"]) == "Test plan: no section of TESTPLAN.md mentions 'x.y'"
    assert plan_line(PLAN, [""]) == plan_line(PLAN, []) == "Test plan: not searched (no column names this failure)"
    assert plan_line("word " * 100, ["word"]) == "Test plan: TESTPLAN.md line 1: " + "word " * 59 + "..."


def test_each_reason_says_what_it_means_and_what_the_target_wrote() -> None:
    meanings = {
        "not_equal": "The value is not the one the spec calls for.",
        "not_in_enum": "The value is not one of the categories the spec allows.",
        "missing_field": "A value the spec requires is absent.",
        "wrong_places": "The value is written with other decimal places than the spec prescribes.",
        "unexpected_row": "Rows appear that the spec does not produce (check how keys are normalised).",
        "duplicate_key": "",
    }
    for reason, meaning in meanings.items():
        [ticket] = tickets_from(_report([_cell("c-1", "avg", reason)]))
        words = reason.replace("_", " ")
        assert ticket.body.startswith(f"1 cell(s) of field 'avg' fail as {words}. {meaning}\n\nExample: case c-1, ")
        shown = {"missing_field": "the target wrote nothing there.",
                 "unexpected_row": "the target wrote a row the spec does not call for."}.get(reason,
                                                                                          "the target wrote '1.50'.")
        assert f"column 'avg': {shown}\n" in ticket.body


def test_a_ticket_names_at_most_three_cases_in_order() -> None:
    failures = [_cell(f"c-{i}", "avg", "not_equal") for i in (5, 1, 4, 2, 3)]
    [ticket] = tickets_from(_report(failures))
    assert ticket.cases == ["c-1", "c-2", "c-3"] and ticket.title == "avg: not equal in 5 cell(s)"
    assert "Example: case c-5, " in ticket.body  # the first failure as the report lists it


@pytest.mark.parametrize(("positive", "negative", "way"), [(1, 5, "below"), (5, 1, "above"), (3, 3, "above")])
def test_a_systematic_drift_is_one_builder_ticket_with_its_direction(positive: int, negative: int, way: str) -> None:
    [ticket] = tickets_from(_report(drift=[_audit(positive, negative), _audit(9, 0, systematic=False)]))
    assert ticket.signature == "builder:avg:drift" and ticket.cases == []
    assert ticket.title == f"avg: systematic drift {way} the spec's results"
    n = positive + negative
    assert ticket.body == (f"{n} values of 'avg' lie within tolerance but all {way} the spec's "
                           "results: a systematic difference such as a rounding mode (half-even instead of half-up) "
                           "or a truncation. Check the rounding and precision rules the spec states.\n\n"
                           f"Column 'avg'; no single row is named: the drift is a pattern over {n} passing cells.\n"
                           "Spec: the caliber at hand declares no field 'avg'\n"
                           "Test plan: no section of TESTPLAN.md mentions 'avg'")
    [paid] = tickets_from(_report(drift=[_audit(0, 4).model_copy(update={"field": "paid"})]), SOURCES)
    assert paid.body.endswith("Spec: caliber field 'paid' is amount: exact decimal, |actual - expected| <= 0.01, "
                              "written with 2 decimal places\nTest plan: TESTPLAN.md line 6: 1. The paid amounts: "
                              "written with two places.")


def test_behaviour_tickets_group_by_what_was_observed_and_point_at_the_case() -> None:
    cells = [_cell("c-2", "behavior", "not_equal", actual="crashed"), _cell("c-1", "behavior", "not_equal",
                                                                            actual="crashed"),
             _cell("c-3", "behavior", "not_equal", actual="accepted")]
    accepted, crashed = tickets_from(_report(behaviors=cells), SOURCES)
    assert (accepted.signature, crashed.signature) == ("builder:behavior:observed-accepted",
                                                       "builder:behavior:observed-crashed")
    assert crashed.title == "behaviour 'crashed' where the spec calls for another"
    assert crashed.cases == ["c-1", "c-2"]
    assert crashed.body == (
        "2 case(s) behaved as 'crashed'; re-read how the spec says such inputs must be handled.\n\n"
        "Example: case c-2, column 'behavior': the target's run ended 'crashed'.\n"
        "Input: not located (the key names only the case; its inputs: orders.csv, more.csv)\n"
        "Spec: caliber behaviours: each case's run ends in one of accepted, rejected, crashed (column 'behavior'), "
        "compared for equality\n"
        "Test plan: TESTPLAN.md line 8: - Unreadable files are rejected: the behaviour is checked.\n\n"
        "Input of that case (orders.csv):\n\n```\ncustomer,currency,amount\nACME,USD,1\nACME,EUR,2\n\n```")
    assert accepted.body.startswith("1 case(s) behaved as 'accepted';") and accepted.cases == ["c-3"]
    assert "Input: not located (no input file of case c-3 is at hand)\n" in accepted.body
    bare = _cell("", None, "not_equal", actual="crashed")
    [plain] = tickets_from(_report(behaviors=[bare]))
    assert plain.body.split("\n\n")[1] == (
        "Example: case -, column 'behavior': the target's run ended 'crashed'.\n"
        "Input: not located (no input file of case - is at hand)\n"
        "Spec: the caliber at hand declares no behaviours\n"
        "Test plan: no section of TESTPLAN.md mentions 'behavior' or 'behaviour'")


def test_relation_failures_go_to_the_builder_or_the_examiner_by_attribution() -> None:
    fails = [RelationFailure(where="case=c-2, currency=EUR", detail="total 3 != 1 + 1", attribution="engine"),
             RelationFailure(where="case=c-1, currency=USD", detail="total 4 != 1 + 1", attribution="engine"),
             RelationFailure(where="case=c-3, currency=EUR", detail="total 5 != 1 + 1", attribution="exam")]
    held = RelationOutcome(name="order-free", kind="equal_pair", checked=2, failed=0, failures=[])
    sums = RelationOutcome(name="sums", kind="sum_of_parts", checked=5, failed=3, failures=fails)
    builder, exam = tickets_from(_report(relations=[held, sums]), SOURCES)
    assert (builder.signature, exam.signature) == ("builder:sums:relation", "exam:sums:relation")
    assert builder.title == exam.title == "relation sums fails"
    assert builder.cases == ["c-2"] and exam.cases == ["c-3"]
    declared = ('{"scope":{"behavior":"accepted"},"field":"avg","total_field":"paid","by":["case","currency"],'
                '"parts":{"where_not":{"customer":"ALL"}},"total":{"where":{"customer":"ALL"}}}')
    assert builder.body == (
        "Relation 'sums' (sum_of_parts) fails in 2 of 5 instance(s), e.g. at case=c-2, currency=EUR: total 3 != 1 + 1"
        "\n\nExample: case c-2, at case=c-2, currency=EUR, column(s) 'avg', 'paid': total 3 != 1 + 1\n"
        "Input: orders.csv line 3: 'ACME,EUR,2'\n"
        "Spec: caliber relation 'sums' (sum_of_parts): The parts' 'field' adds up to the total row's 'total_field', "
        f"within the field's tolerance. Declared as {declared}.\n"
        "Test plan: TESTPLAN.md line 6: 1. The paid amounts: written with two places.\n\n"
        "Input of that case (orders.csv):\n\n```\ncustomer,currency,amount\nACME,USD,1\nACME,EUR,2\n\n```")
    assert exam.body.startswith(
        "Relation 'sums' (sum_of_parts) fails in 1 of 5 instance(s), e.g. at case=c-3, currency=EUR: total 5 != 1 + 1"
        "\n\nThe sealed answers agree with the target there: the caliber declares an identity the "
        "spec does not promise, or the oracle is wrong.\n\nExample: case c-3, at case=c-3, currency=EUR, ")
    only_exam = sums.model_copy(update={"failures": fails[2:]})
    assert [t.route for t in tickets_from(_report(relations=[only_exam]))] == ["exam"]


def test_a_pair_relation_points_at_its_first_case_and_names_its_columns() -> None:
    pair = RelationOutcome(name="order-free", kind="equal_pair", checked=1, failed=1, failures=[
        RelationFailure(where="c-2 vs c-9", detail="row keys differ", attribution="engine")])
    [ticket] = tickets_from(_report(relations=[pair]), SOURCES)
    assert ticket.cases == ["c-2", "c-9"]
    example = ticket.body.split("\n\n")[1].splitlines()
    assert example[:3] == ["Example: case c-2, at c-2 vs c-9, column(s) 'label', 'avg': row keys differ",
                           "Input: not located (the key names only the case; its inputs: orders.csv, more.csv)",
                           "Spec: caliber relation 'order-free' (equal_pair): Two cases whose inputs differ only in "
                           "a way the spec says is irrelevant give equal outputs. Declared as {\"case_column\":"
                           "\"case\",\"fields\":[\"label\",\"avg\",\"label\"]}."]  # no case pairs
    assert example[3] == "Test plan: no section of TESTPLAN.md mentions 'order-free' or 'label' or 'avg'"
    unknown = pair.model_copy(update={"name": "gone"})
    [lost] = tickets_from(_report(relations=[unknown]), SOURCES)
    assert lost.body.split("\n\n")[1].startswith("Example: case c-2, at c-2 vs c-9, column(s) -: row keys differ\n")
    assert "Spec: the caliber at hand declares no relation 'gone'\n" in lost.body
    whole = RelationOutcome(name="sorted", kind="ordered", checked=1, failed=1, failures=[
        RelationFailure(where="all rows", detail="'A' comes after 'B'", attribution="engine")])
    [ordered] = tickets_from(_report(relations=[whole]), SOURCES)
    assert ordered.cases == [] and ordered.body.split("\n\n")[1].splitlines()[:2] == [
        "Example: case -, at all rows, column(s) 'customer': 'A' comes after 'B'",
        "Input: not located (no input file of case - is at hand)"]


def test_relation_where_and_columns_are_read_for_the_input_line() -> None:
    assert where_parts("case=c-1, group=a=b, currency=EUR") == (["c-1"], ["a=b", "EUR"])
    assert where_parts("c-1 vs c-2") == (["c-1", "c-2"], [])
    assert where_parts("c-1 within c-2") == (["c-1", "c-2"], [])
    assert where_parts("c-1 vs c-2 vs c-3") == (["c-1", "c-2 vs c-3"], [])
    assert where_parts("c-1 within c-2 within c-3") == (["c-1", "c-2 within c-3"], [])
    assert where_parts("all rows") == ([], [])
    assert where_parts("group=x") == ([], ["x"])
    declared = {r.name: r for r in CALIBER.relations}
    assert relation_columns(declared["sums"]) == ["avg", "paid"]
    assert relation_columns(declared["order-free"]) == ["label", "avg"]
    assert relation_columns(declared["sorted"]) == ["customer"]
    free = Caliber.model_validate({"key": ["case"], "fields": {"a": "text"}, "relations": [
        {"name": "p", "kind": "equal_pair", "case_column": "case"}]}).relations[0]
    assert relation_columns(free) == []
    [ticket] = tickets_from(_report(relations=[RelationOutcome(name="p", kind="equal_pair", checked=1, failed=1,
                                                               failures=[RelationFailure(where="c-1 vs c-2", detail="d",
                                                                                         attribution="engine")])]),
                            Sources(caliber=Caliber.model_validate({"key": ["case"], "fields": {"a": "text"},
                                                                     "relations": [free.model_dump()]})))
    assert "column(s) every field: d\n" in ticket.body


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
    # a ticket for someone else passes through and the next one is still guarded
    assert [t.id for t in guard([exam, leaky, clean], [answers], [tmp_path / "inputs"], ["case"])] == [
        "t-3", "t-1", ticket_id("orchestrator:builder:avg:not_equal:leak-guard"), "t-2"]


# --- the builder's folder: open tickets on top, resolved ones moved aside -------------------------------------

def _md(tid: str, body: str = "B") -> str:
    return Ticket(id=tid, route="builder", signature=f"builder:{tid}:x", title=f"T {tid}", body=body,
                  cases=["c-1"]).markdown()


def test_a_ticket_not_filed_again_moves_to_resolved_with_the_round_that_resolved_it() -> None:
    rounds = [(1, {"t-a": _md("t-a"), "t-b": _md("t-b", "first")}), (2, {"t-b": _md("t-b", "second")}),
              (3, {"t-c": _md("t-c")}), (4, {})]
    open_tickets, resolved = builder_folder(rounds[:3])
    assert open_tickets == {"t-c": _md("t-c")}
    assert resolved == {"t-a": "# T t-a\n\nticket: t-a\nroute: builder\ncases: c-1\nresolved: round 2 (last filed in "
                                "round 1)\n\nB\n",
                        "t-b": "# T t-b\n\nticket: t-b\nroute: builder\ncases: c-1\nresolved: round 3 (last filed in "
                                "round 2)\n\nsecond\n"}
    assert list(resolved) == ["t-a", "t-b"]
    assert builder_folder(rounds) == ({}, {**resolved, "t-c": resolved_text(_md("t-c"), 4, 3)})
    assert builder_folder([]) == ({}, {}) and builder_folder(rounds[:1]) == (rounds[0][1], {})


def test_a_ticket_filed_again_is_open_again_and_resolved_anew_later() -> None:
    rounds = [(1, {"t-a": _md("t-a")}), (2, {}), (3, {"t-a": _md("t-a", "back")}), (4, {}), (5, {})]
    assert builder_folder(rounds[:3]) == ({"t-a": _md("t-a", "back")}, {})
    assert builder_folder(rounds) == ({}, {"t-a": resolved_text(_md("t-a", "back"), 4, 3)})
    assert builder_folder(rounds[:2])[1]["t-a"].count("resolved: round 2 (last filed in round 1)") == 1


def test_the_resolved_line_joins_the_header_lines_whatever_the_body_holds() -> None:
    text = _md("t-a", "para one\n\npara two")
    assert resolved_text(text, 7, 6) == ("# T t-a\n\nticket: t-a\nroute: builder\ncases: c-1\nresolved: round 7 "
                                         "(last filed in round 6)\n\npara one\n\npara two\n")
    assert resolved_text("# bare", 2, 1) == "# bare\nresolved: round 2 (last filed in round 1)"


def test_a_redacted_text_keeps_the_title_and_header_lines_only() -> None:
    text = resolved_text(_md("t-a", "the target wrote '64.88'.\n\nmore"), 3, 1)
    assert redacted_text(text) == ("# T t-a\n\nticket: t-a\nroute: builder\ncases: c-1\nresolved: round 3 (last filed "
                                   "in round 1)\n\n(redacted: the description shares a value with a later round's "
                                   "sealed answers)\n")
    assert redacted_text("# bare") == "# bare\n\n(redacted: the description shares a value with a later round's " \
                                      "sealed answers)\n"


def test_a_failure_without_a_case_column_names_no_case_and_reads_no_input() -> None:
    everywhere = Sources(inputs=lambda _case: {"any.csv": "ACME,1\n"}, caliber=CALIBER)  # would answer any case
    blank = CellFailure(key={}, field=None, cls=None, expected=None, actual=None, reason="blank_key")
    [ticket] = tickets_from(_report([blank]), everywhere)
    assert ticket.cases == [""] and ticket.body.split("\n\n")[1].splitlines()[:2] == [
        "Example: case -, its only row, the whole row: the target wrote None.",
        "Input: not located (no input file of case - is at hand)"]
    assert "Input of that case" not in ticket.body
    named = _cell("", "label", "not_equal", actual="b", customer="ACME")
    [empty] = tickets_from(_report([named]), everywhere)
    assert empty.body.split("\n\n")[1].startswith("Example: case -, row customer='ACME', column 'label': ")
    assert "Input: not located (no input file of case - is at hand)\n" in empty.body
    observed = CellFailure(key={}, field="behavior", cls=None, expected=None, actual="crashed", reason="not_equal")
    [behaved] = tickets_from(_report(behaviors=[observed]), everywhere)
    assert behaved.cases == [""] and behaved.body.split("\n\n")[1].splitlines()[:2] == [
        "Example: case -, column 'behavior': the target's run ended 'crashed'.",
        "Input: not located (no input file of case - is at hand)"]


def test_behaviour_and_relation_tickets_show_the_input_file_they_located() -> None:
    wider = _cell("c-2", "behavior", "not_equal", actual="crashed", customer="BOLT")
    [behaved] = tickets_from(_report(behaviors=[wider]), SOURCES)
    assert "\nInput: more.csv line 1: 'BOLT,EUR,3'\n" in behaved.body
    assert behaved.body.endswith("Input of that case (more.csv):\n\n```\nBOLT,EUR,3\n\n```")
    sums = RelationOutcome(name="sums", kind="sum_of_parts", checked=1, failed=1, failures=[
        RelationFailure(where="case=c-2, customer=BOLT", detail="d", attribution="engine")])
    [related] = tickets_from(_report(relations=[sums]), SOURCES)
    assert "\nInput: more.csv line 1: 'BOLT,EUR,3'\n" in related.body
    assert related.body.endswith("Input of that case (more.csv):\n\n```\nBOLT,EUR,3\n\n```")
