"""Relations scoped by how a case's run ended: a rejected run's partial output does not break an identity."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import write_jsonl

from tri_agent import MalformedInput, ScoreInputs, UsageError, load_caliber, score
from tri_agent.exam._build import _write_caliber
from tri_agent.scoring._caliber import Caliber, Scope
from tri_agent.scoring._relations import evaluate
from tri_agent.scoring._report import ScoreReport
from tri_agent.scoring._tables import table_from_rows

SUM = ("{name: groups-sum, kind: sum_of_parts, field: total, by: [case], parts: {where_not: {group: ALL}}, "
       "total: {where: {group: ALL}}%s}")
BASE = """schema_version: 1
key: [case, group]
fields: {total: amount, n: count}
behaviors: {values: [accepted, rejected, warned]}
relations:
"""
SCOPED = ", scope: {behavior: accepted}"


def _caliber(*relations: str) -> str:
    return BASE + "".join(f"  - {r}\n" for r in relations)


def _rows(case: str, total: str = "3.30", partial: bool = False) -> list[dict[str, str]]:
    rows = [{"case": case, "group": "a", "total": "1.10", "n": "1"}, {"case": case, "group": "b", "total": "2.20",
                                                                      "n": "1"}]
    return rows[:1] if partial else [*rows, {"case": case, "group": "ALL", "total": total, "n": "2"}]


# c-1 ran to the end; c-2 was rejected half-way and wrote its first group only (the spec says so: the oracle too)
ANSWERS = [*_rows("c-1"), *_rows("c-2", partial=True)]
EXPECTED = {"c-1": "accepted", "c-2": "rejected"}


def _score(tmp: Path, caliber: str, actual: list[dict[str, str]], observed: dict[str, str] | None = None,
           answers: list[dict[str, str]] = ANSWERS, replay: list[dict[str, str]] | None = None) -> ScoreReport:
    (tmp / "c.yaml").write_text(caliber)
    write_jsonl(tmp / "a.jsonl", answers)
    write_jsonl(tmp / "x.jsonl", actual)
    write_jsonl(tmp / "eb.jsonl", [{"case": c, "behavior": b} for c, b in EXPECTED.items()])
    write_jsonl(tmp / "ob.jsonl", [{"case": c, "behavior": b} for c, b in (observed or EXPECTED).items()])
    if replay is not None:
        write_jsonl(tmp / "r.jsonl", replay)
    return score(ScoreInputs(tmp / "c.yaml", tmp / "a.jsonl", tmp / "x.jsonl", tmp / "eb.jsonl", tmp / "ob.jsonl",
                             tmp / "r.jsonl" if replay is not None else None))


def _outcome(report: ScoreReport, name: str = "groups-sum") -> tuple[int, int, list[str]]:
    assert report.relations is not None
    [r] = [r for r in report.relations.relations if r.name == name]
    return r.checked, r.failed, [f.where for f in r.failures]


def test_a_rejected_runs_partial_output_breaks_an_unscoped_sum(tmp_path: Path) -> None:
    report = _score(tmp_path, _caliber(SUM % ""), ANSWERS)
    assert _outcome(report) == (2, 1, ["case=c-2"])
    assert report.verdict == "fail" and report.blockers == ["relations: groups-sum failed"]


def test_scoped_to_accepted_the_rejected_case_is_left_out(tmp_path: Path) -> None:
    report = _score(tmp_path, _caliber(SUM % SCOPED), ANSWERS)
    assert _outcome(report) == (1, 0, [])
    assert report.verdict == "pass" and report.blockers == []


def test_scoped_to_accepted_an_accepted_case_still_fails(tmp_path: Path) -> None:
    wrong = [*_rows("c-1", total="3.40"), *_rows("c-2", partial=True)]
    report = _score(tmp_path, _caliber(SUM % SCOPED), wrong, answers=wrong)  # the oracle agrees: an exam fault
    assert _outcome(report) == (1, 1, ["case=c-1"])
    assert report.relations is not None and report.relations.relations[0].failures[0].attribution == "exam"
    assert report.verdict == "fail"


def test_a_scope_naming_both_behaviours_checks_both(tmp_path: Path) -> None:
    report = _score(tmp_path, _caliber(SUM % ", scope: {behavior: [accepted, rejected]}"), ANSWERS)
    assert _outcome(report) == (2, 1, ["case=c-2"])


def test_the_scope_reads_the_observed_behaviour_and_channel_2_keeps_it_honest(tmp_path: Path) -> None:
    # c-1 should have been accepted; a target that rejects it leaves the relation's scope, and fails channel 2
    actual = [*_rows("c-1", total="9.99"), *_rows("c-2", partial=True)]
    report = _score(tmp_path, _caliber(SUM % SCOPED), actual, observed={"c-1": "rejected", "c-2": "rejected"})
    assert _outcome(report) == (1, 1, ["all cases"])  # a scope that admits nothing fails
    assert report.behaviors is not None and report.behaviors.verdict == "fail"
    assert report.verdict == "fail" and "behaviors: 1/2 cases pass" in report.blockers


def test_a_case_with_no_observed_behaviour_is_checked(tmp_path: Path) -> None:
    actual = [*ANSWERS, *_rows("c-3", total="0.01")]
    report = _score(tmp_path, _caliber(SUM % SCOPED), actual)
    assert _outcome(report) == (2, 1, ["case=c-3"])


def test_a_warned_case_is_outside_an_accepted_scope(tmp_path: Path) -> None:
    report = _score(tmp_path, _caliber(SUM % SCOPED), [*_rows("c-1", total="0.01"), *_rows("c-2", partial=True)],
                    observed={"c-1": "warned", "c-2": "rejected"})
    assert _outcome(report) == (1, 1, ["all cases"])


def test_a_scoped_pair_relation_skips_a_pair_with_a_case_out_of_scope(tmp_path: Path) -> None:
    pair = "{name: same, kind: equal_pair, case_column: case, pairs: [[c-1, c-2], [c-1, c-1]]%s}"
    unscoped = _score(tmp_path, _caliber(pair % ""), ANSWERS)
    assert _outcome(unscoped, "same") == (2, 1, ["c-1 vs c-2"])
    scoped = _score(tmp_path, _caliber(pair % SCOPED), ANSWERS)
    assert _outcome(scoped, "same") == (1, 0, [])
    first_out = "{name: same, kind: equal_pair, case_column: case, pairs: [[c-2, c-1]]%s}"  # out of scope first
    assert _outcome(_score(tmp_path, _caliber(first_out % ""), ANSWERS), "same") == (1, 1, ["c-2 vs c-1"])
    assert _outcome(_score(tmp_path, _caliber(first_out % SCOPED), ANSWERS), "same") == (1, 1, ["all cases"])


def test_a_scoped_monotone_relation_skips_a_pair_with_a_case_out_of_scope(tmp_path: Path) -> None:
    mono = "{name: grows, kind: monotone, case_column: case, field: n, pairs: [[c-1, c-2]]%s}"
    assert _outcome(_score(tmp_path, _caliber(mono % ""), ANSWERS), "grows") == (1, 1, ["c-1 within c-2"])
    assert _outcome(_score(tmp_path, _caliber(mono % SCOPED), ANSWERS), "grows") == (1, 1, ["all cases"])


def test_a_scoped_idempotent_relation_leaves_out_the_replay_rows_of_cases_out_of_scope(tmp_path: Path) -> None:
    replay = [*_rows("c-1"), {"case": "c-2", "group": "a", "total": "1.11", "n": "1"}]  # c-2 unstable
    idem = "{name: stable, kind: idempotent%s}"
    assert _outcome(_score(tmp_path, _caliber(idem % ""), ANSWERS, replay=replay), "stable") == (
        4, 1, ["case=c-2, group=a"])
    assert _outcome(_score(tmp_path, _caliber(idem % SCOPED), ANSWERS, replay=replay), "stable") == (3, 0, [])


def test_a_scoped_ordered_relation_leaves_out_cases_out_of_scope(tmp_path: Path) -> None:
    rows = [*_rows("c-1"), {"case": "c-2", "group": "b", "total": "2.20", "n": "1"},
            {"case": "c-2", "group": "a", "total": "1.10", "n": "1"}]
    order = "{name: sorted, kind: ordered, field: group, by: [case], rows: {where_not: {group: ALL}}%s}"
    assert _outcome(_score(tmp_path, _caliber(order % ""), rows, answers=rows), "sorted") == (2, 1, ["case=c-2"])
    assert _outcome(_score(tmp_path, _caliber(order % SCOPED), rows, answers=rows), "sorted") == (1, 0, [])


def test_scope_admits() -> None:
    scope = Scope(behavior=["accepted", "warned"])
    assert scope.admits({"accepted"}) and scope.admits({"rejected", "warned"})
    assert not scope.admits({"rejected"}) and not Scope(behavior="accepted").admits({"accepted "})
    assert not Scope(behavior="accepted").admits({"accept"})  # one category, not a substring of its name
    assert scope.admits(None) and scope.admits(set())  # unknown: checked


def test_evaluate_without_observed_behaviours_is_a_usage_error() -> None:
    caliber = Caliber.model_validate(yaml.safe_load(_caliber(SUM % SCOPED)))
    table = table_from_rows("x", ANSWERS)
    with pytest.raises(UsageError) as err:
        evaluate(caliber, table, None, set())
    assert err.value.line() == ("relation 'groups-sum' is scoped by behaviour and needs the observed behaviours; "
                                "pass --expected-behaviors F --observed-behaviors F")
    assert evaluate(caliber, table, None, set(), {("c-2",): {"rejected"}}).verdict == "pass"
    assert evaluate(caliber, table, None, set(), {("c-2",): {"accepted"}}).verdict == "fail"


@pytest.mark.parametrize(("text", "message"), [
    ("schema_version: 1\nkey: [case, group]\nfields: {total: amount}\nrelations:\n  - " + SUM % SCOPED + "\n",
     r"Value error, relation 'groups-sum' has a scope, which needs a 'behaviors' section"),
    (_caliber(SUM % ", scope: {behavior: crashed}"),
     r"relation 'groups-sum': scope behaviour 'crashed' is not one of the declared behaviors"),
    (_caliber(SUM % ", scope: {behavior: [accepted, Accepted]}"), r"scope behaviour 'Accepted' is not one"),
    (_caliber(SUM % SCOPED).replace("behaviors: {", "behaviors: {key: [run], "),
     r"the behaviour key \['run'\] is not part of the caliber's key \['case', 'group'\]"),
    (_caliber(SUM % ", scope: {}"), r"scope\.behavior: Field required"),
    (_caliber(SUM % ", scope: {behavior: accepted, case: c-1}"), r"scope\.case: unknown key 'case'"),
])
def test_a_scope_that_cannot_work_is_refused(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "c.yaml").write_text(text)
    with pytest.raises(MalformedInput, match=message):
        load_caliber(tmp_path / "c.yaml")


def test_a_scoped_pair_relation_needs_its_case_column_as_the_behaviour_key(tmp_path: Path) -> None:
    text = BASE.replace("key: [case, group]", "key: [run, group]").replace("behaviors: {", "behaviors: {key: [run], ")
    text += "  - {name: same, kind: equal_pair, case_column: group, pairs: [[a, b]], scope: {behavior: accepted}}\n"
    (tmp_path / "c.yaml").write_text(text)
    with pytest.raises(MalformedInput, match=r"relation 'same' has a scope, which for a pair relation needs the "
                                             r"behaviour key to be its case column \['group'\], not \['run'\]"):
        load_caliber(tmp_path / "c.yaml")


def test_the_scope_is_sealed_with_the_caliber(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(_caliber(SUM % SCOPED))
    scoped = load_caliber(tmp_path / "c.yaml")[0]
    _write_caliber(scoped, tmp_path / "built.yaml")
    again, sha = load_caliber(tmp_path / "built.yaml")
    assert again == scoped and again.relations[0].scope == Scope(behavior="accepted")
    (tmp_path / "c.yaml").write_text(_caliber(SUM % ""))
    _write_caliber(load_caliber(tmp_path / "c.yaml")[0], tmp_path / "plain.yaml")
    assert load_caliber(tmp_path / "plain.yaml")[1] != sha
    assert b"scope" not in (tmp_path / "plain.yaml").read_bytes()


def test_a_behaviour_key_equal_to_the_calibers_key_is_enough(tmp_path: Path) -> None:
    text = ("schema_version: 1\nkey: [case]\nfields: {n: count}\nbehaviors: {values: [accepted]}\nrelations:\n"
            "  - {name: sorted, kind: ordered, field: n, scope: {behavior: accepted}}\n")
    (tmp_path / "c.yaml").write_text(text)
    assert load_caliber(tmp_path / "c.yaml")[0].relations[0].scope == Scope(behavior="accepted")


def test_scope_messages_name_everything(tmp_path: Path) -> None:
    cases = {
        _caliber(SUM % ", scope: {behavior: crashed}"):
            "relation 'groups-sum': scope behaviour 'crashed' is not one of the declared behaviors "
            "['accepted', 'rejected', 'warned']",
        _caliber(SUM % SCOPED).replace("behaviors: {", "behaviors: {key: [run], "):
            "relation 'groups-sum' has a scope, but the behaviour key ['run'] is not part of the caliber's key "
            "['case', 'group'], so a row's case cannot be told",
    }
    for text, message in cases.items():
        (tmp_path / "c.yaml").write_text(text)
        with pytest.raises(MalformedInput) as err:
            load_caliber(tmp_path / "c.yaml")
        assert err.value.message.endswith(f"(document): Value error, {message}")
