"""Channel 3: each relation kind passing and failing, and attribution engine vs exam."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_jsonl

from tri_agent import MalformedInput, ScoreInputs, UsageError, score
from tri_agent.scoring._report import ScoreReport

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
