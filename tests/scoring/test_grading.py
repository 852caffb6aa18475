"""Grading: what a report records about its inputs, what makes it red, and how behaviour files are asked for."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from conftest import ANSWERS, CALIBER, write_csv, write_jsonl

from tri_agent import MalformedInput, ScoreInputs, UsageError, score

BEHAVIORS = CALIBER + "behaviors: {values: [accepted, rejected]}\n"
EXPECTED_B = [{"case": "c-1", "behavior": "accepted"}, {"case": "c-2", "behavior": "rejected"}]


def _files(tmp: Path, caliber: str = BEHAVIORS) -> dict[str, Path]:
    (tmp / "c.yaml").write_text(caliber)
    return {"caliber": tmp / "c.yaml", "answers": write_jsonl(tmp / "a.jsonl", ANSWERS),
            "actual": write_csv(tmp / "x.csv", ANSWERS[:2]),
            "expected_behaviors": write_jsonl(tmp / "eb.jsonl", EXPECTED_B),
            "observed_behaviors": write_jsonl(tmp / "ob.jsonl", EXPECTED_B),
            "replay": write_jsonl(tmp / "r.jsonl", ANSWERS)}


def test_the_report_names_every_input_with_its_role_format_rows_and_digest(tmp_path: Path) -> None:
    files = _files(tmp_path)
    report = score(ScoreInputs(**files))
    got = [(d.role, d.name, d.format, d.rows, d.sha256) for d in report.inputs]
    sha = {role: hashlib.sha256(path.read_bytes()).hexdigest() for role, path in files.items()}
    assert got == [("caliber", "c.yaml", "yaml", None, sha["caliber"]),
                   ("answers", "a.jsonl", "jsonl", 3, sha["answers"]),
                   ("actual", "x.csv", "csv", 2, sha["actual"]),
                   ("expected_behaviors", "eb.jsonl", "jsonl", 2, sha["expected_behaviors"]),
                   ("observed_behaviors", "ob.jsonl", "jsonl", 2, sha["observed_behaviors"]),
                   ("replay", "r.jsonl", "jsonl", None, sha["replay"])]
    assert (report.caliber_sha256, report.answers_sha256, report.actual_sha256) == (
        sha["caliber"], sha["answers"], sha["actual"])


def test_each_red_channel_has_its_own_blocker_line(tmp_path: Path) -> None:
    files = _files(tmp_path)
    actual = [dict(ANSWERS[0], avg="9.99", n="7"), dict(ANSWERS[1], avg="0.00")]
    write_csv(files["actual"], actual)
    write_jsonl(files["observed_behaviors"], [{"case": "c-1", "behavior": "rejected"},
                                              {"case": "c-2", "behavior": "accepted"}])
    report = score(ScoreInputs(**files))
    assert report.verdict == "fail"
    assert report.blockers == ["answers: 0/3 rows pass (1 missing, 0 unexpected, 8 failing cells)",
                               "behaviors: 0/2 cases pass"]


def test_an_unreadable_target_table_is_its_reason_and_its_missing_rows(tmp_path: Path) -> None:
    files = _files(tmp_path, CALIBER)
    broken = tmp_path / "x.jsonl"
    broken.write_text('{"case": "c-1"\n')
    report = score(ScoreInputs(files["caliber"], files["answers"], broken))
    assert len(report.blockers) == 2
    assert report.blockers[0].startswith(f"answers: unreadable table: {broken}:1: not valid JSON")
    assert report.blockers[1] == "answers: 0/3 rows pass (3 missing, 0 unexpected, 15 failing cells)"


def test_the_blocker_names_a_repeated_key_and_a_row_without_its_key_never_only_missing_rows(tmp_path: Path) -> None:
    """A target that wrote a row twice, and one without its key: the blocker counts each defect by name, with the
    first repeated key, so nobody looks for a dropped row."""
    files = _files(tmp_path, CALIBER)
    actual = write_jsonl(tmp_path / "x.jsonl", [ANSWERS[0], ANSWERS[1], ANSWERS[1], ANSWERS[2], ANSWERS[2],
                                                ANSWERS[2], dict(ANSWERS[0], group=None)])
    report = score(ScoreInputs(files["caliber"], files["answers"], actual))
    assert report.blockers == ["answers: 1/4 rows pass (2 missing, 1 unexpected, 3 failing cells; 2 repeated keys "
                               "(first: case=c-1, group=b); 1 row without its key)"]


def test_failed_relations_are_listed_by_name_in_one_blocker(tmp_path: Path) -> None:
    caliber = CALIBER + """relations:
  - {name: same-a, kind: equal_pair, case_column: case, pairs: [[c-1, c-2]]}
  - {name: n-grows, kind: monotone, case_column: case, field: n, pairs: [[c-1, c-2]]}
"""
    files = _files(tmp_path, caliber)
    answers = [dict(ANSWERS[0], n="3"), ANSWERS[1], ANSWERS[2]]
    write_jsonl(files["answers"], answers)
    write_csv(files["actual"], answers)
    report = score(ScoreInputs(files["caliber"], files["answers"], files["actual"]))
    assert report.blockers == ["relations: same-a, n-grows failed"]


def test_no_relations_section_means_no_relations_channel(tmp_path: Path) -> None:
    files = _files(tmp_path, CALIBER)
    report = score(ScoreInputs(files["caliber"], files["answers"], files["actual"]))
    assert report.relations is None and report.behaviors is None


def test_json_cells_in_jsonl_are_json_text_so_a_csv_target_can_match_them(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text("schema_version: 1\nkey: [case]\nfields: {doc: json, tags: set}\n")
    answers = write_jsonl(tmp_path / "a.jsonl", [{"case": "c-1", "doc": "hi", "tags": ["b", "a"]}])
    actual = write_csv(tmp_path / "x.csv", [{"case": "c-1", "doc": '"hi"', "tags": '["a","b"]'}])
    assert score(ScoreInputs(tmp_path / "c.yaml", answers, actual)).verdict == "pass"
    write_jsonl(answers, [{"case": "c-1", "doc": "hi", "tags": "a"}])
    with pytest.raises(MalformedInput, match="field 'tags': needs a JSON list, found '\"a\"'"):
        score(ScoreInputs(tmp_path / "c.yaml", answers, actual))


def test_a_replay_may_leave_out_a_field_absent_from_every_row(tmp_path: Path) -> None:
    files = _files(tmp_path, CALIBER)
    write_jsonl(files["replay"], [{k: v for k, v in r.items() if k != "label"} for r in ANSWERS])
    write_csv(files["actual"], ANSWERS)
    report = score(ScoreInputs(files["caliber"], files["answers"], files["actual"], replay=files["replay"]))
    assert report.verdict == "pass" and report.blockers == []


def test_behaviour_tables_may_leave_out_a_column_absent_from_every_row(tmp_path: Path) -> None:
    files = _files(tmp_path)
    write_csv(files["actual"], ANSWERS)
    write_jsonl(files["observed_behaviors"], [{"case": "c-1"}, {"case": "c-2"}])
    report = score(ScoreInputs(**files))
    assert report.behaviors is not None and report.behaviors.passed == 0
    assert report.blockers == ["behaviors: 0/2 cases pass"]


@pytest.mark.parametrize(("drop", "caliber", "message"), [
    (("expected_behaviors", "observed_behaviors"), BEHAVIORS, "declares behaviors but no behaviour files"),
    (("observed_behaviors",), BEHAVIORS, "needs both --expected-behaviors and --observed-behaviors"),
    (("expected_behaviors",), BEHAVIORS, "needs both --expected-behaviors and --observed-behaviors"),
    ((), CALIBER, "and a 'behaviors' section in the caliber"),
])
def test_behaviour_files_come_in_pairs_with_a_caliber_section(tmp_path: Path, drop: tuple[str, ...], caliber: str,
                                                              message: str) -> None:
    files = {k: v for k, v in _files(tmp_path, caliber).items() if k not in drop and k != "replay"}
    with pytest.raises(UsageError) as caught:
        score(ScoreInputs(**files))
    assert message in caught.value.message
    if not files.get("expected_behaviors") and not files.get("observed_behaviors"):
        assert caught.value.hint == "pass --expected-behaviors F --observed-behaviors F"


def test_an_unusable_replay_is_a_blocker_naming_file_line_and_fix(tmp_path: Path) -> None:
    files = _files(tmp_path, CALIBER)
    write_csv(files["actual"], ANSWERS)
    no_key = write_csv(tmp_path / "r1.csv", ANSWERS, [c for c in ANSWERS[0] if c != "group"])
    blank = write_jsonl(tmp_path / "r2.jsonl", [ANSWERS[0], dict(ANSWERS[1], case=" ")])
    repeated = write_jsonl(tmp_path / "r3.jsonl", [ANSWERS[0], ANSWERS[1], ANSWERS[0]])
    unreadable = tmp_path / "r4.jsonl"
    unreadable.write_text("[1]\n")
    said = {}
    for replay in (no_key, blank, repeated, unreadable):
        report = score(ScoreInputs(files["caliber"], files["answers"], files["actual"], replay=replay))
        assert report.verdict == "fail"
        said[replay.name] = report.blockers
    assert said == {
        "r1.csv": [f"replay: {no_key}:1: column 'group' is absent"],
        "r2.jsonl": [f"replay: {blank}:2: blank key value; blank is not a value; every row needs case, group"],
        "r3.jsonl": [f"replay: {repeated}:3: duplicate key (case='c-1', group='a'), first at line 1; "
                     "keys must be unique in a table"],
        "r4.jsonl": [f"replay: unreadable table: {unreadable}:1: expected a JSON object, found list"]}


def test_only_scores_the_cases_it_names_and_relations_can_be_left_out(tmp_path: Path) -> None:
    files = _files(tmp_path)
    write_csv(files["actual"], [*ANSWERS[:2], dict(ANSWERS[2], avg="0.00"), dict(ANSWERS[2], group="z")])
    write_jsonl(files["observed_behaviors"], [EXPECTED_B[0], {"case": "c-2", "behavior": "accepted"}])
    assert score(ScoreInputs(**files)).verdict == "fail"  # the control: scored whole, c-2 is wrong
    only = score(ScoreInputs(**files, only=frozenset({"c-1"})))
    assert only.verdict == "pass" and only.answers.rows_expected == 2 and only.answers.rows_actual == 2
    assert only.behaviors is not None and only.behaviors.total == 1
    red = score(ScoreInputs(**files, only=frozenset({"c-2"})))
    assert red.answers.rows_expected == 1 and {f.key["case"] for f in red.answers.failures} == {"c-2"}
    related = CALIBER + "relations:\n  - {name: groups-in-order, kind: ordered, field: group, by: [case]}\n"
    (tmp_path / "r.yaml").write_text(related)
    assert score(ScoreInputs(tmp_path / "r.yaml", files["answers"], files["answers"])).relations is not None
    assert score(ScoreInputs(tmp_path / "r.yaml", files["answers"], files["answers"], relations=False)
                 ).relations is None


def test_a_row_naming_no_case_is_among_no_cases_chosen(tmp_path: Path) -> None:
    files = _files(tmp_path, CALIBER)
    actual = write_jsonl(tmp_path / "x.jsonl", [*ANSWERS, dict(ANSWERS[0], case=None)])
    report = score(ScoreInputs(files["caliber"], files["answers"], actual, only=frozenset({"c-1", "c-2"})))
    assert report.answers.rows_actual == 3
