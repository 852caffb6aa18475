"""Channel 3: each relation kind passing and failing, and attribution engine vs exam."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import write_jsonl

from tri_agent import MalformedInput, ScoreInputs, UsageError, score
from tri_agent.scoring._caliber import Caliber
from tri_agent.scoring._relations import evaluate
from tri_agent.scoring._report import ScoreReport
from tri_agent.scoring._tables import table_from_rows

CAL = """schema_version: 1
key: [case, group]
fields: {total: amount, n: count}
relations:
  - {name: groups-sum, kind: sum_of_parts, field: total, by: [case],
     parts: {where_not: {group: ALL}}, total: {where: {group: ALL}}}
  - {name: order-free, kind: equal_pair, case_column: case, pairs: [[c-1, c-2]]}
  - {name: superset-grows, kind: monotone, case_column: case, field: n, pairs: [[c-1, c-3]]}
"""


def _rows(case: str, a: str = "1.10", b: str = "2.20", total: str = "3.30", n: str = "1") -> list[dict[str, str]]:
    return [{"case": case, "group": "a", "total": a, "n": n}, {"case": case, "group": "b", "total": b, "n": n},
            {"case": case, "group": "ALL", "total": total, "n": str(2 * int(n))}]


def _score(tmp: Path, answers: list[dict[str, str]], actual: list[dict[str, str]], caliber: str = CAL,
           replay: list[dict[str, str]] | None = None) -> ScoreReport:
    (tmp / "c.yaml").write_text(caliber)
    write_jsonl(tmp / "a.jsonl", answers)
    write_jsonl(tmp / "x.jsonl", actual)
    if replay is not None:
        write_jsonl(tmp / "r.jsonl", replay)
    return score(ScoreInputs(tmp / "c.yaml", tmp / "a.jsonl", tmp / "x.jsonl",
                             replay=tmp / "r.jsonl" if replay is not None else None))


def _outcome(report: ScoreReport, name: str) -> tuple[int, int, list[str]]:
    assert report.relations is not None
    [r] = [r for r in report.relations.relations if r.name == name]
    return r.checked, r.failed, [f.attribution for f in r.failures]


def test_all_relations_pass(tmp_path: Path) -> None:
    rows = _rows("c-1") + _rows("c-2") + _rows("c-3", n="2")
    report = _score(tmp_path, rows, rows)
    assert report.relations is not None and report.relations.verdict == "pass"
    assert (report.relations.passed, report.relations.total) == (5, 5)


def test_sum_of_parts_failure_is_engine_when_answers_disagree(tmp_path: Path) -> None:
    answers = _rows("c-1") + _rows("c-2") + _rows("c-3", n="2")
    actual = _rows("c-1", total="3.40") + _rows("c-2") + _rows("c-3", n="2")
    report = _score(tmp_path, answers, actual)
    assert _outcome(report, "groups-sum") == (3, 1, ["engine"])
    assert report.verdict == "fail"


def test_sum_of_parts_failure_is_exam_when_answers_agree(tmp_path: Path) -> None:
    rows = _rows("c-1", total="3.40") + _rows("c-2", total="3.40") + _rows("c-3", n="2", total="3.40")
    report = _score(tmp_path, rows, rows)
    assert report.answers.verdict == "pass"
    assert _outcome(report, "groups-sum") == (3, 3, ["exam", "exam", "exam"])


def test_sum_of_parts_within_tolerance_passes(tmp_path: Path) -> None:
    rows = _rows("c-1", total="3.31") + _rows("c-2", total="3.31") + _rows("c-3", n="2", total="3.29")
    assert _outcome(_score(tmp_path, rows, rows), "groups-sum")[1] == 0


def test_equal_pair_fails_on_a_difference_and_on_order_when_asked(tmp_path: Path) -> None:
    answers = _rows("c-1") + _rows("c-2") + _rows("c-3", n="2")
    actual = _rows("c-1") + _rows("c-2", a="1.20", b="2.10") + _rows("c-3", n="2")
    assert _outcome(_score(tmp_path, answers, actual), "order-free")[1] == 1
    strict = CAL.replace("pairs: [[c-1, c-2]]}", "pairs: [[c-1, c-2]], order_insensitive: false}")
    swapped = _rows("c-1") + list(reversed(_rows("c-2"))) + _rows("c-3", n="2")
    assert _outcome(_score(tmp_path, answers, swapped), "order-free")[1] == 0
    assert _outcome(_score(tmp_path, answers, swapped, strict), "order-free")[1] == 1


def test_monotone_fails_when_a_superset_shrinks(tmp_path: Path) -> None:
    answers = _rows("c-1", n="2") + _rows("c-2", n="2") + _rows("c-3", n="3")
    actual = _rows("c-1", n="2") + _rows("c-2", n="2") + _rows("c-3", n="1")
    assert _outcome(_score(tmp_path, answers, actual), "superset-grows") == (1, 1, ["engine"])


def test_idempotent_replay(tmp_path: Path) -> None:
    cal = CAL + "  - {name: replay-stable, kind: idempotent}\n"
    rows = _rows("c-1") + _rows("c-2") + _rows("c-3", n="2")
    assert _outcome(_score(tmp_path, rows, rows, cal, replay=rows), "replay-stable") == (9, 0, [])
    drifted = _rows("c-1", a="1.11") + _rows("c-2") + _rows("c-3", n="2")
    assert _outcome(_score(tmp_path, rows, rows, cal, replay=drifted), "replay-stable") == (9, 1, ["engine"])
    with pytest.raises(UsageError, match="--replay"):
        _score(tmp_path, rows, rows, cal)
    report = _score(tmp_path, rows, rows, cal, replay=[*rows, rows[0]])  # the target's second run: scored red
    assert report.verdict == "fail" and any(b.startswith("replay: ") and "duplicate key" in b for b in report.blockers)


def test_a_dropped_part_is_the_engines_fault_not_the_exams(tmp_path: Path) -> None:
    answers = _rows("c-1") + _rows("c-2") + _rows("c-3", n="2")
    actual = [r for r in answers if (r["case"], r["group"]) != ("c-1", "b")]
    report = _score(tmp_path, answers, actual)
    assert report.answers.rows_missing == 1
    assert _outcome(report, "groups-sum") == (3, 1, ["engine"])


def test_duplicate_pairs_count_as_separate_instances(tmp_path: Path) -> None:
    cal = CAL.replace("pairs: [[c-1, c-2]]}", "pairs: [[c-1, c-2], [c-1, c-2]]}")
    answers = _rows("c-1") + _rows("c-2") + _rows("c-3", n="2")
    actual = _rows("c-1") + _rows("c-2", a="1.20", b="2.10") + _rows("c-3", n="2")
    assert _outcome(_score(tmp_path, answers, actual, cal), "order-free")[:2] == (2, 2)


ORDERED = CAL + """  - {name: groups-in-order, kind: ordered, field: group, by: [case], rows: {where_not: {group: ALL}}}
"""


def test_ordered_fails_on_rows_out_of_order_and_blames_the_target(tmp_path: Path) -> None:
    rows = _rows("c-1") + _rows("c-2") + _rows("c-3", n="2")
    assert _outcome(_score(tmp_path, rows, rows, ORDERED), "groups-in-order") == (3, 0, [])
    swapped = [rows[1], rows[0], *rows[2:]]  # same cells, c-1's groups written b before a
    report = _score(tmp_path, rows, swapped, ORDERED)
    assert report.answers.verdict == "pass"  # cells cannot see an order
    assert _outcome(report, "groups-in-order") == (3, 1, ["engine"]) and report.verdict == "fail"
    failure = report.relations.relations[-1].failures[0] if report.relations else None
    assert failure is not None and failure.where == "case=c-1" and "'a' comes after 'b'" in failure.detail


def test_ordered_must_name_a_column_the_table_has(tmp_path: Path) -> None:
    bad = CAL + "  - {name: x, kind: ordered, field: nope}\n"
    with pytest.raises(MalformedInput, match="neither a key column nor a declared field"):
        _score(tmp_path, _rows("c-1"), _rows("c-1"), bad)


def test_the_channel_counts_every_failed_instance_over_all_relations(tmp_path: Path) -> None:
    answers = _rows("c-1") + _rows("c-2") + _rows("c-3", n="2")
    actual = (_rows("c-1", total="3.40") + _rows("c-2", a="1.20", b="2.10", total="3.50")
              + _rows("c-3", n="0", total="9.99"))
    report = _score(tmp_path, answers, actual)
    assert report.relations is not None
    assert (report.relations.verdict, report.relations.passed, report.relations.total) == ("fail", 0, 5)
    assert [(r.name, r.checked, r.failed) for r in report.relations.relations] == [
        ("groups-sum", 3, 3), ("order-free", 1, 1), ("superset-grows", 1, 1)]
    assert report.blockers[-1] == "relations: groups-sum, order-free, superset-grows failed"
    one = _score(tmp_path, answers, _rows("c-1", total="3.40") + _rows("c-2") + _rows("c-3", n="2"))
    # c-1's total breaks its own sum and its pair with c-2: two instances of five
    assert one.relations is not None and (one.relations.verdict, one.relations.passed) == ("fail", 3)


# --- each relation's findings word for word, on hand-made tables -----------------------------------------------

def _evaluate(relations: str, rows: list[dict[str, str | None]], replay: list[dict[str, str | None]] | None = None,
              failing: set[tuple[str, ...]] | None = None, fields: str = "{total: amount, n: count}",
              key: str = "[case, group]") -> list[list[tuple[str, str, str]]]:
    caliber = Caliber.model_validate(yaml.safe_load(f"key: {key}\nfields: {fields}\nrelations:\n{relations}"))
    channel = evaluate(caliber, table_from_rows("x", rows), table_from_rows("r", replay) if replay is not None
                       else None, failing or set())
    return [[(f.where, f.detail, f.attribution) for f in r.failures] for r in channel.relations]


SUMS = "  - {name: s, kind: sum_of_parts, field: total, by: [case], parts: {where_not: {group: ALL}}, " \
       "total: {where: {group: ALL}}}\n"


def _part(case: str, group: str, total: str | None, n: str | None = "1") -> dict[str, str | None]:
    return {"case": case, "group": group, "total": total, "n": n}


def test_sum_of_parts_says_what_did_not_add_up_per_group() -> None:
    rows = [_part("c-1", "a", "1.10"), _part("c-1", "b", "2.20"), _part("c-1", "ALL", "3.40"),
            _part("c-2", "a", "1.00"), _part("c-2", "ALL", "1.00"), _part("c-2", "ALL", "1.00"),
            _part("c-3", "a", "1.00"),
            _part("c-4", "a", " "), _part("c-4", "ALL", "1.00"),
            _part("c-5", "a", "x1"), _part("c-5", "ALL", "1.00"),
            _part("c-6", "a", "1.00"), _part("c-6", "ALL", None)]
    assert _evaluate(SUMS, rows, failing={("c-1", "b")}) == [[
        ("case=c-1", "2 parts sum to 3.30, total row says 3.40", "engine"),
        ("case=c-2", "expected one total row, found 2", "exam"),
        ("case=c-3", "expected one total row, found 0", "exam"),
        ("case=c-4", "unreadable value: field 'total' is blank", "exam"),
        ("case=c-5", "unreadable value: needs a decimal number literal like 12.30, found 'x1'", "exam"),
        ("case=c-6", "unreadable value: field 'total' is blank", "exam")]]


def test_sum_of_parts_over_all_rows_into_another_field_and_over_counts() -> None:
    relation = "  - {name: s, kind: sum_of_parts, field: n, total_field: m, parts: {where: {group: [a, b]}}, " \
               "total: {where: {group: ALL}}}\n"
    rows = [_part("c-1", "a", None, "2"), _part("c-1", "b", None, "3"), _part("c-1", "z", None, "100"),
            {"case": "c-1", "group": "ALL", "n": "1", "m": "6"}]
    assert _evaluate(relation, rows, fields="{n: count, m: count}") == [[
        ("all rows", "2 parts sum to 5, total row says 6", "exam")]]
    rows[3]["m"] = "5"
    assert _evaluate(relation, rows, fields="{n: count, m: count}") == [[]]
    rows[0]["n"] = "2.0"
    assert _evaluate(relation, rows, fields="{n: count, m: count}") == [[
        ("all rows", "unreadable value: needs an integer literal like 42, found '2.0'", "exam")]]


def test_a_group_by_a_column_outside_the_key_blames_the_engine_when_any_row_failed() -> None:
    relation = "  - {name: s, kind: sum_of_parts, field: total, by: [region], parts: {where_not: {group: ALL}}, " \
               "total: {where: {group: ALL}}}\n"
    rows = [dict(_part("c-1", "a", "1.00"), region="n"), dict(_part("c-1", "ALL", "2.00"), region="n")]
    assert _evaluate(relation, rows, failing={("c-9", "z")}) == [[("region=n", "1 parts sum to 1.00, total row says "
                                                                             "2.00", "engine")]]
    assert _evaluate(relation, rows) == [[("region=n", "1 parts sum to 1.00, total row says 2.00", "exam")]]


PAIR = "  - {name: p, kind: equal_pair, case_column: case, pairs: [[c-1, c-2]]}\n"


@pytest.mark.parametrize(("second", "detail"), [
    ([], "a case has no rows (2 vs 0)"),
    ([_part("c-2", "a", "1.00"), _part("c-2", "c", "2.00")], "row keys differ: [('b',), ('c',)]"),
    ([_part("c-2", "a", "1.00"), _part("c-2", "b", "2.02")], "row ('b',): total: '2.00' vs '2.02'"),
    ([_part("c-2", "a", "1.00"), _part("c-2", "b", "2.00", n="2")], "row ('b',): n: '1' vs '2'"),
    ([_part("c-2", "a", "1.00"), _part("c-2", "b", "abc")], "row ('b',): total: '2.00' vs 'abc'"),
    ([_part("c-2", "a", "1.00"), _part("c-2", "b", " ")], "row ('b',): total: '2.00' vs ' '"),
])
def test_equal_pair_says_how_the_two_cases_differ(second: list[dict[str, str | None]], detail: str) -> None:
    first = [_part("c-1", "a", "1.00"), _part("c-1", "b", "2.00")]
    assert _evaluate(PAIR, first + second, failing={("c-2", "a")}) == [[("c-1 vs c-2", detail, "engine")]]
    assert _evaluate(PAIR, first + second) == [[("c-1 vs c-2", detail, "exam")]]


def test_equal_pair_within_tolerance_blank_alike_and_field_subsets_hold() -> None:
    first = [_part("c-1", "a", "1.00", n=None), _part("c-1", "b", "2.00")]
    second = [_part("c-2", "b", "2.01", n="5"), _part("c-2", "a", "1.00", n=" ")]
    assert _evaluate(PAIR.replace("]]}", "]], fields: [total]}"), first + second) == [[]]
    assert _evaluate(PAIR, first + second) == [[("c-1 vs c-2", "row ('b',): n: '1' vs '5'", "exam")]]
    strict = PAIR.replace("]]}", "]], order_insensitive: false, fields: [total]}")
    assert _evaluate(strict, first + second) == [[("c-1 vs c-2", "same rows in a different order", "exam")]]


def test_a_replay_must_hold_the_same_rows_with_exactly_equal_values() -> None:
    rows = [_part("c-1", "a", "1.00"), _part("c-1", "b", "2.00")]
    replay = [_part("c-1", "b", "2.01"), _part("c-1", "z", "1.00")]
    assert _evaluate("  - {name: i, kind: idempotent}\n", rows, replay) == [[
        ("case=c-1, group=a", "row missing from the replay", "engine"),
        ("case=c-1, group=b", "total: '2.00' vs '2.01'", "engine"),
        ("case=c-1, group=z", "row only in the replay", "engine")]]
    assert _evaluate("  - {name: i, kind: idempotent, fields: [n]}\n", rows, [dict(r, total="9") for r in rows]) \
        == [[]]
    with pytest.raises(UsageError) as err:
        _evaluate("  - {name: i, kind: idempotent}\n", rows)
    assert err.value.line() == "relation 'i' is idempotent and needs a second run; pass --replay ACTUAL2"


MONO = "  - {name: m, kind: monotone, case_column: case, field: n, pairs: [[c-1, c-2]]}\n"


@pytest.mark.parametrize(("rows", "detail"), [
    ([_part("c-2", "a", "1", "1")], "the subset case has no rows"),
    ([_part("c-1", "a", "1", "1"), _part("c-2", "b", "1", "1")], "row ('a',) disappears in the superset"),
    ([_part("c-1", "a", "1", "3"), _part("c-2", "a", "1", "2")], "row ('a',): n shrinks from 3 to 2"),
    ([_part("c-1", "a", "1", "x"), _part("c-2", "a", "1", "2")],
     "row ('a',): unreadable value: needs an integer literal like 42, found 'x'"),
    ([_part("c-1", "a", "1", "1"), _part("c-2", "a", "1", None)], "row ('a',): unreadable value: field 'n' is blank"),
])
def test_monotone_says_where_the_superset_lost_something(rows: list[dict[str, str | None]], detail: str) -> None:
    assert _evaluate(MONO, rows, failing={("c-2", "q")}) == [[("c-1 within c-2", detail, "engine")]]
    assert _evaluate(MONO, rows) == [[("c-1 within c-2", detail, "exam")]]


def test_monotone_holds_when_every_row_grows_or_stays() -> None:
    rows = [_part("c-1", "a", "1", "2"), _part("c-1", "b", "1", "0"), _part("c-2", "a", "1", "2"),
            _part("c-2", "b", "1", "7"), _part("c-2", "c", "1", "1")]
    assert _evaluate(MONO, rows) == [[]]


def test_ordered_checks_each_group_in_written_order_either_way() -> None:
    rows = [_part("c-1", "a", "1"), _part("c-1", "c", "1"), _part("c-1", "b", "1"), _part("c-2", "b", "1"),
            _part("c-2", "a", "1")]
    ascending = "  - {name: o, kind: ordered, field: group, by: [case]}\n"
    assert _evaluate(ascending, rows) == [[("case=c-1", "'b' comes after 'c'", "engine"),
                                           ("case=c-2", "'a' comes after 'b'", "engine")]]
    descending = "  - {name: o, kind: ordered, field: group, by: [case], descending: true}\n"
    assert _evaluate(descending, rows) == [[("case=c-1", "'c' comes after 'a'", "engine")]]
    everything = "  - {name: o, kind: ordered, field: group, rows: {where: {case: c-2}}, descending: true}\n"
    assert _evaluate(everything, rows) == [[]]
    assert _evaluate(everything.replace(", descending: true", ""), rows) == [[("all rows", "'a' comes after 'b'",
                                                                              "engine")]]


def test_a_pair_relation_without_pairs_is_refused() -> None:
    with pytest.raises(MalformedInput) as err:
        _evaluate("  - {name: p, kind: equal_pair, case_column: case}\n", [_part("c-1", "a", "1")])
    assert err.value.line() == ("relation 'p' has no case pairs, so it would check nothing; list pairs in the "
                                "caliber, or score with the caliber a build wrote")


@pytest.mark.parametrize(("first_total", "second_total", "detail"), [
    ("", "", None), (" ", None, None), (None, "", None),     # blank, whitespace and absent are all no value
    ("", "5.00", "row ('b',): total: '' vs '5.00'"),          # a blank against a value is a difference
    (None, "5.00", "row ('b',): total: None vs '5.00'"),
])
def test_a_blank_first_value_equals_only_a_blank_second_one(first_total: str | None, second_total: str | None,
                                                           detail: str | None) -> None:
    first = [_part("c-1", "b", "2.00")]
    second = [_part("c-2", "b", "2.00")]
    first[0]["total"], second[0]["total"] = first_total, second_total
    assert _evaluate(PAIR, first + second) == [[("c-1 vs c-2", detail, "exam")] if detail else []]


def test_keys_that_differ_are_listed_three_at_most() -> None:
    first = [_part("c-1", g, "1.00") for g in "abcd"]
    second = [_part("c-2", g, "1.00") for g in "wxyz"]
    assert _evaluate(PAIR, first + second) == [[("c-1 vs c-2", "row keys differ: [('a',), ('b',), ('c',)]", "exam")]]


def test_a_sum_names_its_groups_in_sorted_order_by_every_by_column() -> None:
    rel = "  - {name: s, kind: sum_of_parts, field: total, by: [case, region], parts: {where_not: {group: ALL}}, " \
          "total: {where: {group: ALL}}}\n"
    rows = []
    for case, region in (("c-2", "n"), ("c-1", "s"), ("c-1", "n")):
        rows += [{"case": case, "region": region, "group": "a", "total": "1.00", "n": "1"},
                 {"case": case, "region": region, "group": "ALL", "total": "9.00", "n": "1"}]
    found = _evaluate(rel, rows, key="[case, region, group]")
    assert [w for w, _, _ in found[0]] == ["case=c-1, region=n", "case=c-1, region=s", "case=c-2, region=n"]


def test_a_scoped_relation_without_observed_behaviours_says_how_to_give_them() -> None:
    caliber = Caliber.model_validate(yaml.safe_load(
        "key: [case, group]\nfields: {total: amount}\nbehaviors: {values: [accepted, rejected]}\nrelations:\n" + SUMS
        .replace("sum_of_parts,", "sum_of_parts, scope: {behavior: accepted},")))
    with pytest.raises(UsageError) as err:
        evaluate(caliber, table_from_rows("x", [_part("c-1", "a", "1.00")]), None, set(), None)
    assert err.value.hint == "pass --expected-behaviors F --observed-behaviors F"


def test_a_scoped_pair_needs_both_its_cases_in_scope() -> None:
    caliber = Caliber.model_validate(yaml.safe_load(
        "key: [case, group]\nfields: {total: amount}\nbehaviors: {values: [accepted, rejected]}\nrelations:\n"
        + PAIR.replace("equal_pair,", "equal_pair, scope: {behavior: accepted},")))
    rows = [_part("c-1", "a", "1.00"), _part("c-2", "a", "7.00")]
    for first, second in (("rejected", "accepted"), ("accepted", "rejected")):
        channel = evaluate(caliber, table_from_rows("x", rows), None, set(), {("c-1",): {first}, ("c-2",): {second}})
        assert [f.where for f in channel.relations[0].failures] == ["all cases"]  # the pair was left out
    accepted = {("c-1",): {"accepted"}, ("c-2",): {"accepted"}}
    both = evaluate(caliber, table_from_rows("x", rows), None, set(), accepted)
    assert [(r.checked, r.failed) for r in both.relations] == [(1, 1)]


def test_a_scope_that_admits_no_case_is_the_exams_failure_not_a_silent_pass() -> None:
    caliber = Caliber.model_validate(yaml.safe_load(
        "key: [case, group]\nfields: {total: amount}\nbehaviors: {values: [accepted, rejected, timeout]}\n"
        "relations:\n" + SUMS.replace("sum_of_parts,", "sum_of_parts, scope: {behavior: timeout},")))
    rows = [_part("c-1", "a", "1.00"), _part("c-1", "ALL", "1.00")]
    channel = evaluate(caliber, table_from_rows("x", rows), None, set(), {("c-1",): {"accepted"}})
    assert (channel.verdict, channel.passed, channel.total) == ("fail", 0, 1)
    assert [(f.where, f.detail, f.attribution) for f in channel.relations[0].failures] == [
        ("all cases", "no case ended in a behaviour its scope admits, so it checked nothing", "exam")]
    admitted = evaluate(caliber, table_from_rows("x", rows), None, set(), {("c-1",): {"timeout"}})
    assert (admitted.verdict, admitted.passed, admitted.total) == ("pass", 1, 1)


def test_skip_empty_leaves_out_groups_with_neither_parts_nor_total_and_only_those() -> None:
    rows = [_part("c-1", "a", "1.00"), _part("c-1", "ALL", "1.00"),
            {"case": "c-2", "group": "q", "total": None, "n": "1"},  # in neither selector: no instance
            _part("c-3", "a", "1.00")]
    selective = "  - {name: s, kind: sum_of_parts, field: total, by: [case], parts: {where: {group: a}}, " \
                "total: {where: {group: ALL}}, skip_empty: true}\n"
    assert _evaluate(selective, rows) == [[("case=c-3", "expected one total row, found 0", "exam")]]
    assert _evaluate(selective.replace(", skip_empty: true", ""), rows) == [[
        ("case=c-2", "expected one total row, found 0", "exam"),
        ("case=c-3", "expected one total row, found 0", "exam")]]


def test_equal_pair_compares_only_the_rows_its_selector_names() -> None:
    first = [_part("c-1", "a", "1.00"), _part("c-1", "db", "5.00")]
    second = [_part("c-2", "a", "1.00"), _part("c-2", "a2", "1.00"), _part("c-2", "db", "5.00")]
    only_db = PAIR.replace("]]}", "]], rows: {where: {group: db}}}")
    assert _evaluate(only_db, first + second) == [[]]
    second[2]["total"] = "4.00"
    assert _evaluate(only_db, first + second) == [[("c-1 vs c-2", "row ('db',): total: '5.00' vs '4.00'", "exam")]]
    assert _evaluate(PAIR, first + second)[0][0][1] == "row keys differ: [('a2',)]"


@pytest.mark.parametrize("blanked", [{"case": None}, {"group": None}, {"case": None, "group": None}, {"case": ""}])
def test_a_target_row_without_its_key_is_a_red_score_and_an_engine_failure_never_a_crash(
        tmp_path: Path, blanked: dict[str, str | None]) -> None:
    """A row whose key the target left null or blank fails as blank_key in channel 1; every relation instance it
    could belong to is then attributed to the engine (it was an internal IndexError before)."""
    rows = _rows("c-1") + _rows("c-2") + _rows("c-3", n="2")
    actual = [{**rows[0], **blanked}, *rows[1:]]  # type: ignore[dict-item]
    report = _score(tmp_path, rows, actual)
    assert report.verdict == "fail" and report.answers.failures[0].reason == "blank_key"
    checked, _failed, attributions = _outcome(report, "groups-sum")
    assert checked >= 3 and set(attributions) <= {"engine"}  # a failure here is never blamed on the exam
