"""The target file's extract rule: how a case's rows are read from what the run wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import toy_copy

from tri_agent import MalformedInput, score
from tri_agent._errors import ExitCode
from tri_agent.exam._formats import Extract
from tri_agent.sandbox._process import Completed
from tri_agent.scoring._report import ScoreReport
from tri_agent.targets._gateway import run_exam, run_score_inputs
from tri_agent.targets._target import Target, extract_rows, failed, stray_output


def test_an_empty_csv_cell_is_the_empty_string_and_a_json_null_stays_null(tmp_path: Path) -> None:
    (tmp_path / "out.csv").write_text('group,n,label\n,2,""\nx,,y\n')
    rows, error = extract_rows(tmp_path, Extract(file="out.csv", format="csv"), "c-1")
    assert error is None
    assert rows == [{"case": "c-1", "group": "", "n": "2", "label": ""}, {"case": "c-1", "group": "x", "n": "",
                                                                            "label": "y"}]
    (tmp_path / "out.jsonl").write_text('{"group": null, "n": "2"}\n{"group": "", "n": "1"}\n')
    rows, error = extract_rows(tmp_path, Extract(file="out.jsonl", format="jsonl"), "c-1")
    assert error is None
    assert rows == [{"case": "c-1", "group": None, "n": "2"}, {"case": "c-1", "group": "", "n": "1"}]


def test_a_tsv_output_gives_the_rows_of_its_csv_twin_and_a_quote_in_it_is_a_character(tmp_path: Path) -> None:
    """TSV as the Unix tools write it (datamash, cut): tabs between fields, no quoting, an empty cell is ""."""
    (tmp_path / "out.csv").write_text('group,n,label\n,2,""\nx,,y\n"a,b",3,"say ""hi"""\n')
    (tmp_path / "out.tsv").write_text('group\tn\tlabel\n\t2\t\nx\t\ty\na,b\t3\tsay "hi"\n')
    as_csv, error = extract_rows(tmp_path, Extract(file="out.csv", format="csv"), "c-1")
    as_tsv, tsv_error = extract_rows(tmp_path, Extract(file="out.tsv", format="tsv"), "c-1")
    assert error is tsv_error is None and as_tsv == as_csv
    assert as_tsv[2] == {"case": "c-1", "group": "a,b", "n": "3", "label": 'say "hi"'}
    (tmp_path / "odd.txt").write_text('k\tv\n"x\ty"\n')  # a quote opens nothing: two fields, one of them '"x'
    rows, error = extract_rows(tmp_path, Extract(file="odd.txt", format="tsv"), "c-1")
    assert error is None and rows == [{"case": "c-1", "k": '"x', "v": 'y"'}]


def test_a_fixed_width_output_gives_the_rows_of_its_csv_twin(tmp_path: Path) -> None:
    """Fixed width as report writers print it: a header and a ruler skipped, values padded with spaces either side,
    a last field that takes the rest of the line, a line cut short (its missing fields are ""), blank lines."""
    (tmp_path / "out.csv").write_text('group,n,label\n,2,""\nx,,y\nBiology,13,say "hi" there\n')
    (tmp_path / "out.txt").write_text("GROUP     N  LABEL\n--------- -- -----\n"
                                      "          2\n\nx            y\n  Biology 13 say \"hi\" there  \n   \n")
    fields = [{"name": "group", "width": 9}, {"name": "n", "width": 3}, {"name": "label"}]
    as_csv, error = extract_rows(tmp_path, Extract(file="out.csv", format="csv"), "c-1")
    fixed, fixed_error = extract_rows(tmp_path, Extract.model_validate(
        {"file": "out.txt", "format": "fixed", "fields": fields, "skip": 2}), "c-1")
    assert error is fixed_error is None and fixed == as_csv
    (tmp_path / "odd.txt").write_text("a\u2028b  1\r\n", newline="")  # U+2028 is a character, CRLF an end
    rule = Extract.model_validate({"file": "odd.txt", "format": "fixed",
                                   "fields": [{"name": "k", "width": 5}, {"name": "v"}]})
    assert extract_rows(tmp_path, rule, "c-1") == ([{"case": "c-1", "k": "a\u2028b", "v": "1"}], None)


@pytest.mark.parametrize("text, why", [
    ("ab\tc\n", "line 1 holds a tab: a fixed-width field is padded with spaces"),
    ("abcdef\nabcdefg\n", "line 2 is 7 characters, past the fields' 6"),
])
def test_a_fixed_width_line_that_does_not_fit_leaves_the_case_without_rows(tmp_path: Path, text: str,
                                                                             why: str) -> None:
    (tmp_path / "out.txt").write_text(text)
    rule = Extract.model_validate({"file": "out.txt", "format": "fixed",
                                   "fields": [{"name": "a", "width": 3}, {"name": "b", "width": 3}]})
    assert extract_rows(tmp_path, rule, "c-1") == ([], f"unreadable out.txt: {why}")


@pytest.mark.parametrize("rule", [
    {"format": "fixed"},
    {"format": "csv", "fields": [{"name": "a", "width": 2}]},
    {"format": "csv", "skip": 1},
    {"format": "fixed", "fields": [{"name": "a"}, {"name": "b", "width": 2}]},
    {"format": "fixed", "fields": [{"name": "a", "width": 2}, {"name": "a"}]},
])
def test_a_fixed_width_rule_says_every_width_once(rule: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="fixed"):
        Extract.model_validate({"file": "out.txt", **rule})


# --- rename --------------------------------------------------------------------------------------------------------

def _extract(**rule: object) -> Extract:
    return Extract.model_validate({"file": "out.tsv.csv", "format": "csv", **rule})


def test_rename_gives_a_programs_column_the_calibers_name(tmp_path: Path) -> None:
    (tmp_path / "out.tsv.csv").write_text("GroupBy(1),count(1)\na,2\n,1\n")
    rows, error = extract_rows(tmp_path, _extract(rename={"GroupBy(1)": "group", "count(1)": "n"}), "c-1")
    assert error is None
    assert rows == [{"case": "c-1", "group": "a", "n": "2"}, {"case": "c-1", "group": "", "n": "1"}]


def test_renames_apply_all_at_once_so_a_swap_works(tmp_path: Path) -> None:
    (tmp_path / "out.tsv.csv").write_text("a,b\n1,2\n")
    rows, error = extract_rows(tmp_path, _extract(rename={"a": "b", "b": "a"}), "c-1")
    assert (rows, error) == ([{"case": "c-1", "b": "1", "a": "2"}], None)


def test_rename_of_a_column_the_output_lacks_leaves_the_case_without_rows(tmp_path: Path) -> None:
    (tmp_path / "out.tsv.csv").write_text("group,n\na,2\n")
    rows, error = extract_rows(tmp_path, _extract(rename={"GroupBy(1)": "group"}), "c-1")
    assert rows == []
    assert error == "out.tsv.csv: rename: column 'GroupBy(1)' is not in the output (columns: group, n)"


def test_rename_onto_a_name_the_output_already_has_leaves_the_case_without_rows(tmp_path: Path) -> None:
    (tmp_path / "out.tsv.csv").write_text("GroupBy(1),group\na,b\n")
    rows, error = extract_rows(tmp_path, _extract(rename={"GroupBy(1)": "group"}), "c-1")
    assert (rows, error) == ([], "out.tsv.csv: rename: 'group' would name two columns (the output already has one)")


def test_rename_in_json_output_reads_the_keys_of_every_object(tmp_path: Path) -> None:
    (tmp_path / "out.json").write_text('[{"g": "a", "n": 1}, {"g": "b", "n": 2, "extra": true}]')
    rule = Extract(file="out.json", format="json", rename={"g": "group", "extra": "flag"})
    rows, error = extract_rows(tmp_path, rule, "c-1")
    assert error is None
    assert rows == [{"case": "c-1", "group": "a", "n": "1"}, {"case": "c-1", "group": "b", "n": "2", "flag": "true"}]
    (tmp_path / "out.json").write_text("[]")
    assert extract_rows(tmp_path, rule, "c-1") == ([], "out.json: rename: column 'g' is not in the output "
                                                        "(columns: none)")


@pytest.mark.parametrize(("rename", "message"), [
    ('{a: x, b: x}', r"rename maps two columns onto 'x'"),
    ("{a: case}", r"rename 'a' -> 'case': the new name must be non-empty and not 'case'"),
    ('{a: ""}', r"rename 'a' -> '': the new name must be non-empty"),
])
def test_a_rename_that_cannot_be_one_to_one_is_refused_in_the_target_file(tmp_path: Path, rename: str,
                                                                          message: str) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "target.yaml").write_text(f"schema_version: 1\nbaseline: t\nrun: [prog]\n"
                                          f"extract: {{file: out.csv, format: csv, rename: {rename}}}\n")
    with pytest.raises(MalformedInput, match=message) as err:
        Target.load(tmp_path / "target.yaml")
    assert err.value.where == f"{tmp_path / 'target.yaml'}:4" and err.value.exit_code == ExitCode.MALFORMED


# --- a failed run's output -----------------------------------------------------------------------------------------

def _done(exit_code: int | None, timed_out: bool = False) -> Completed:
    return Completed(argv=(), exit_code=exit_code, stdout=b"", stderr=b"", seconds=0.0, timed_out=timed_out,
                     truncated=False)


def test_a_failed_run_is_one_that_timed_out_or_exited_non_zero() -> None:
    assert [failed(_done(c)) for c in (0, 1, 2, 255, -9)] == [False, True, True, True, True]
    assert failed(_done(None, timed_out=True)) and failed(_done(0, timed_out=True))


PARTIAL = "group,n\na,2\n"


@pytest.mark.parametrize(("policy", "run_failed", "rows", "stray"), [
    ("score", True, 1, None), ("score", False, 1, None),   # score: a failed run's rows are read like any others
    ("none", False, 1, None),                               # none: a run that did not fail is read as usual
    ("none", True, 0, "the run failed but wrote 1 row(s) to out.csv; the target file expects no output from a "
                      "failed run (failed_output: none)"),
])
def test_failed_output_policy(tmp_path: Path, policy: str, run_failed: bool, rows: int, stray: str | None) -> None:
    (tmp_path / "out.csv").write_text(PARTIAL)
    rule = Extract(file="out.csv", format="csv", failed_output=policy)  # type: ignore[arg-type]
    got, error = extract_rows(tmp_path, rule, "c-1", run_failed)
    assert (len(got), error) == (rows, None)
    assert stray_output(tmp_path, rule, "c-1", run_failed) == stray


@pytest.mark.parametrize(("text", "stray"), [
    (None, None),                      # nothing written
    (b"", None),                       # what a shell redirect leaves: nothing
    (b"group,n\n", None),              # a header and no row
    (b"\xff\xfe\n", "the run failed but wrote an unreadable out.csv; the target file expects no output from a "
                        "failed run (failed_output: none)"),
])
def test_what_counts_as_output_of_a_failed_run(tmp_path: Path, text: bytes | None, stray: str | None) -> None:
    if text is not None:
        (tmp_path / "out.csv").write_bytes(text)
    rule = Extract(file="out.csv", format="csv", failed_output="none")
    assert stray_output(tmp_path, rule, "c-1", True) == stray
    assert extract_rows(tmp_path, rule, "c-1", True) == ([], None)


def test_failed_output_must_be_score_or_none(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "target.yaml").write_text("schema_version: 1\nbaseline: t\nrun: [prog]\n"
                                          "extract: {file: out.csv, format: csv, failed_output: skip}\n")
    with pytest.raises(MalformedInput, match=r"extract\.failed_output: Input should be 'score' or 'none' "
                                             r"\(value 'skip'\)"):
        Target.load(tmp_path / "target.yaml")


# --- through the gateway and the score -----------------------------------------------------------------------------

REJECT = 'sys.exit(f"error: row {lineno}: bad score {row[col[\'score\']]!r}")'


def _toy(tmp_path: Path, on_reject: str, extract: str) -> Path:
    """The fixed toy, writing ``on_reject`` to its summary before it rejects a bad score."""
    toy = toy_copy(tmp_path / "toy", fixed=True)
    grades = toy / "target" / "grades.py"
    text = grades.read_text()
    assert REJECT in text
    grades.write_text(text.replace(REJECT, f"open(sys.argv[2], 'w').write({on_reject!r}); {REJECT}"))
    target = toy / "target.yaml"
    target.write_text(target.read_text().replace("extract: {file: summary.csv, format: csv}", f"extract: {extract}"))
    return target


def _run_and_score(toy_build: Path, target: Path, out: Path) -> tuple[ScoreReport, list[dict[str, object]]]:
    record = run_exam(toy_build, target, out)
    actual = [json.loads(line) for line in (out / "actual.jsonl").read_text().splitlines()]
    report = score(run_score_inputs(toy_build, out))
    assert record.stray_output == {p["case"]: p["stray_output"] for p in map(
        json.loads, (out / "provenance.jsonl").read_text().splitlines()) if p["stray_output"]}
    return report, actual


PARTIAL_SUMMARY = "group,count,total,average\nPartial,1,1.00,1.00\n"


def test_a_failed_runs_rows_are_a_finding_under_none(toy_build: Path, tmp_path: Path) -> None:
    target = _toy(tmp_path, PARTIAL_SUMMARY, "{file: summary.csv, format: csv, failed_output: none}")
    report, actual = _run_and_score(toy_build, target, tmp_path / "run")
    assert not [r for r in actual if r["group"] == "Partial"]  # not scored
    assert report.answers.verdict == "pass" and report.verdict == "fail"
    runs = [b for b in report.blockers if b.startswith("run: ")]
    assert runs and all(b.endswith(": the run failed but wrote 1 row(s) to summary.csv; the target file expects no "
                                   "output from a failed run (failed_output: none)") for b in runs)
    rejected = [json.loads(x)["case"] for x in (toy_build / "sealed" / "behaviors.jsonl").read_text().splitlines()
                if json.loads(x)["behavior"] == "rejected"]
    assert sorted(b.split()[2].rstrip(":") for b in runs) == sorted(rejected)


def test_a_failed_runs_rows_are_scored_under_score(toy_build: Path, tmp_path: Path) -> None:
    target = _toy(tmp_path, PARTIAL_SUMMARY, "{file: summary.csv, format: csv, failed_output: score}")
    report, actual = _run_and_score(toy_build, target, tmp_path / "run")
    partial = [r for r in actual if r["group"] == "Partial"]
    assert partial and not [b for b in report.blockers if b.startswith("run: ")]
    unexpected = [f for f in report.answers.failures if f.reason == "unexpected_row"]
    assert sorted(f.key["case"] for f in unexpected) == sorted(str(r["case"]) for r in partial)


def test_an_empty_file_from_a_failed_run_is_no_output_under_none(toy_build: Path, tmp_path: Path) -> None:
    target = _toy(tmp_path, "", "{file: summary.csv, format: csv, failed_output: none}")
    report, _ = _run_and_score(toy_build, target, tmp_path / "run")
    assert report.verdict == "pass", report.blockers


def test_a_renamed_column_is_scored_under_the_calibers_name(toy_build: Path, tmp_path: Path) -> None:
    target = _toy(tmp_path, "", '{file: summary.csv, format: csv, rename: {"GroupBy(1)": group}}')
    grades = target.parent / "target" / "grades.py"
    grades.write_text(grades.read_text().replace('["group", "count", "total", "average"]',
                                                 '["GroupBy(1)", "count", "total", "average"]'))
    report, actual = _run_and_score(toy_build, target, tmp_path / "run")
    assert report.verdict == "pass", report.blockers
    assert actual and all("group" in r and "GroupBy(1)" not in r for r in actual)


@pytest.mark.parametrize(("name", "fmt", "text"), [
    ("report.txt", "csv", "group,n\na,2\n"),
    ("out", "csv", "group,n\na,2\n"),
    ("rows.log", "jsonl", '{"group": "a", "n": "2"}\n'),
])
def test_the_declared_format_reads_a_file_whatever_its_name(tmp_path: Path, name: str, fmt: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    rows, error = extract_rows(tmp_path, Extract.model_validate({"file": name, "format": fmt}), "c-1")
    assert (rows, error) == ([{"case": "c-1", "group": "a", "n": "2"}], None)
