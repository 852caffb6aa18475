"""Leak scan: distinctive values found through encodings; common and input values ignored; mirrors flagged."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import write_jsonl

from tri_agent import LeakReport, UsageError, scan_leaks

ANSWERS = [
    {"case": "c-1", "avg": "78.35", "who": "Müller-Lüdenscheid", "note": "line one\nline two", "flag": "ok"},
    {"case": "c-2", "avg": "61.20", "who": 'O\'Brien "the quoted"', "note": "n/a", "flag": "ok"},
    {"case": "c-3", "avg": "12.00", "who": "Zed", "note": "plain", "flag": "ok"},
    {"case": "c-4", "avg": "44.44", "who": "grade-input-value", "note": "plain", "flag": "ok"},
]


def _setup(tmp: Path) -> tuple[Path, Path]:
    ans = write_jsonl(tmp / "answers.jsonl", ANSWERS)
    inputs = tmp / "inputs"
    inputs.mkdir(exist_ok=True)
    (inputs / "scores.csv").write_text("student,group,score\ns1,grade-input-value,44.44\n")
    return ans, inputs


def _hits(tmp: Path, name: str, content: str) -> list[str]:
    ans, inputs = _setup(tmp)
    target = tmp / f"ws-{name}"
    target.mkdir(exist_ok=True)
    (target / name).write_text(content, encoding="utf-8")
    report = scan_leaks([ans], [target], inputs=[inputs], key=["case"])
    return [f"{h.where.rsplit('/', 1)[-1]} {h.detail}" for h in report.hits]


def test_plain_value_with_line(tmp_path: Path) -> None:
    assert _hits(tmp_path, "notes.md", "intro\nexpect 78.35 here\n") == ["notes.md:2 field 'avg' of row 1 (case=c-1)"]


def test_number_boundaries_do_not_false_positive(tmp_path: Path) -> None:
    assert _hits(tmp_path, "n.txt", "178.35 and 78.355 and 78.3512\n") == []


def test_a_number_glued_to_a_word_by_a_hyphen_still_leaks(tmp_path: Path) -> None:
    """``expect-78.35`` in a file name or a key: the hyphen separates, it is not a minus sign."""
    assert _hits(tmp_path, "a.md", "expect-78.35.md\n") == ["a.md:1 field 'avg' of row 1 (case=c-1)"]
    assert _hits(tmp_path, "b.md", "avg_+78.350\n") == ["b.md:1 field 'avg' of row 1 (case=c-1)"]
    assert _hits(tmp_path, "c.md", "delta = -78.35\n") == []  # a negative number is another value


def test_non_ascii_escaped_in_json(tmp_path: Path) -> None:
    text = json.dumps({"hint": "M\u00fcller-L\u00fcdenscheid"}, ensure_ascii=True)
    assert "\\u00fc" in text
    assert _hits(tmp_path, "h.json", text + "\n") == ["h.json:1 field 'who' of row 1 (case=c-1)"]


def test_multiline_value_raw_and_escaped(tmp_path: Path) -> None:
    assert _hits(tmp_path, "a.txt", "x\nline one\nline two\n") == ["a.txt:2 field 'note' of row 1 (case=c-1)"]
    assert _hits(tmp_path, "b.py", 'NOTE = "line one\\nline two"\n') == ["b.py:1 field 'note' of row 1 (case=c-1)"]


def test_quoted_values_in_csv_and_python(tmp_path: Path) -> None:
    csv_text = 'id,who\n1,"O\'Brien ""the quoted"""\n'
    assert _hits(tmp_path, "w.csv", csv_text) == ["w.csv:2 field 'who' of row 2 (case=c-2)"]
    assert _hits(tmp_path, "w2.py", "WHO = 'O\\'Brien \"the quoted\"'\n") == ["w2.py:1 field 'who' of row 2 (case=c-2)"]


def test_common_short_and_input_values_are_not_distinctive(tmp_path: Path) -> None:
    assert _hits(tmp_path, "c.txt", "ok Zed n/a plain 44.44 grade-input-value\n") == []


def test_hits_never_show_the_sealed_value(tmp_path: Path) -> None:
    ans, inputs = _setup(tmp_path)
    (tmp_path / "x.txt").write_text("78.35\n")
    report = scan_leaks([ans], [tmp_path / "x.txt"], inputs=[inputs])
    assert "78.35" not in report.to_json() and report.hits[0].detail == "field 'avg' of row 1"


def test_numbers_match_by_value_and_text_on_word_boundaries(tmp_path: Path) -> None:
    assert _hits(tmp_path, "v.py", "x = 78.350\n") == ["v.py:1 field 'avg' of row 1 (case=c-1)"]
    assert _hits(tmp_path, "w.py", "def Zed_plainly(): Müller-Lüdenscheidx\n") == []


def test_python_escapes_in_double_quotes_and_utf16(tmp_path: Path) -> None:
    assert _hits(tmp_path, "e.py", 'WHO = "M\\xfcller-L\\xfcdenscheid"\n') == [
        "e.py:1 field 'who' of row 1 (case=c-1)"]
    ans, inputs = _setup(tmp_path)
    (tmp_path / "u.txt").write_bytes("note: Müller-Lüdenscheid\n".encode("utf-16"))
    assert len(scan_leaks([ans], [tmp_path / "u.txt"], inputs=[inputs]).hits) == 1


def test_a_symlink_in_the_scanned_tree_is_a_hit(tmp_path: Path) -> None:
    import os

    ans, inputs = _setup(tmp_path)
    (tmp_path / "ws").mkdir()
    os.symlink(ans, tmp_path / "ws" / "expected.jsonl")
    [hit] = scan_leaks([ans], [tmp_path / "ws"], inputs=[inputs]).hits
    assert hit.kind == "symlink" and "answers.jsonl" in hit.detail


def test_json_answers_leak_through_their_leaves(tmp_path: Path) -> None:
    ans = write_jsonl(tmp_path / "a.jsonl", [{"case": "c-1", "tags": ["alpha-secret-7", "beta-secret-9"]}])
    (tmp_path / "f.py").write_text('TAGS = ["alpha-secret-7", "beta-secret-9"]\n')
    assert len(scan_leaks([ans], [tmp_path / "f.py"], key=["case"]).hits) == 2


def test_answer_mirror_is_flagged(tmp_path: Path) -> None:
    ans, inputs = _setup(tmp_path)
    copy = tmp_path / "actual.jsonl"
    copy.write_bytes(ans.read_bytes())
    assert [h.kind for h in scan_leaks([ans], [], inputs=[inputs], actual=[copy]).hits] == ["mirror"]
    reordered = tmp_path / "actual2.jsonl"
    write_jsonl(reordered, [{k: r[k] for k in reversed(list(r))} for r in ANSWERS])
    assert [h.kind for h in scan_leaks([ans], [], actual=[reordered]).hits] == ["mirror"]
    honest = tmp_path / "actual3.jsonl"
    write_jsonl(honest, [{"case": r["case"], "avg": r["avg"]} for r in ANSWERS])
    assert scan_leaks([ans], [], actual=[honest]).hits == []


# --- helpers for the tests below: one answer table, files planted in a workspace, hits as "name:line detail" ---

def _scan(tmp: Path, rows: list[dict[str, object]], files: dict[str, str | bytes], **kw: Any) -> LeakReport:
    ans = write_jsonl(tmp / "answers.jsonl", rows)
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    for name, content in files.items():
        if isinstance(content, bytes):
            (ws / name).write_bytes(content)
        else:
            (ws / name).write_text(content, encoding="utf-8", newline="")
    return scan_leaks([ans], [ws], **kw)


def _seen(report: LeakReport) -> list[str]:
    return [f"{h.where.rsplit('/', 1)[-1]} {h.kind} {h.detail}" for h in report.hits]


SECRET = [{"case": "c-1", "avg": "78.35", "who": "Müller-Lüdenscheid", "tag": "Kiwi", "short": "Fig"}]


def test_the_report_on_disk_sorted_keys_indent_one_non_ascii_kept_and_a_final_newline(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("who: Müller-Lüdenscheid\n", encoding="utf-8")
    os.symlink("../Schlüssel.jsonl", ws / "zz-key")
    report = _scan(tmp_path, [{"case": "c-1", "who": "Müller-Lüdenscheid"}], {}, key=["case"])
    assert report.to_json() == (
        '{\n "distinctive_values": 1,\n "files_scanned": 1,\n "hits": [\n  {\n'
        f'   "detail": "field \'who\' of row 1 (case=c-1)",\n   "kind": "value",\n   "where": "{ws}/notes.txt:1"\n'
        '  },\n  {\n'
        f'   "detail": "symlink to \'../Schlüssel.jsonl\'",\n   "kind": "symlink",\n   "where": "{ws}/zz-key:1"\n'
        '  }\n ],\n "schema_version": 1\n}\n')


def test_min_length_default_four_counts_the_value_and_one_is_the_least_allowed(tmp_path: Path) -> None:
    report = _scan(tmp_path, SECRET, {"a.txt": "Kiwi Fig\n"}, key=["case"])
    assert _seen(report) == ["a.txt:1 value field 'tag' of row 1 (case=c-1)"]  # 4 characters: in; 3: out
    assert (report.distinctive_values, report.files_scanned) == (3, 1)
    report = _scan(tmp_path, [{"case": "c-1", "grade": "Q"}], {"a.txt": "grade Q\n"}, key=["case"], min_length=1)
    assert _seen(report) == ["a.txt:1 value field 'grade' of row 1 (case=c-1)"]
    with pytest.raises(UsageError) as caught:
        _scan(tmp_path, SECRET, {}, min_length=0)
    assert (str(caught.value), caught.value.exit_code) == ("--min-length must be at least 1, got 0", 2)


def test_an_actual_that_is_not_a_regular_file_is_a_usage_error(tmp_path: Path) -> None:
    folder = tmp_path / "actual"
    folder.mkdir()
    for bad in (folder, tmp_path / "missing.jsonl"):
        with pytest.raises(UsageError) as caught:
            _scan(tmp_path, SECRET, {}, actual=[bad])
        assert str(caught.value) == f"{bad} is not a regular file; pass the table to check for mirroring"
        assert caught.value.exit_code == 2


def test_a_path_that_is_neither_file_nor_folder_is_a_usage_error(tmp_path: Path) -> None:
    ans = write_jsonl(tmp_path / "answers.jsonl", SECRET)
    with pytest.raises(UsageError) as caught:
        scan_leaks([ans], [tmp_path / "gone"])
    assert str(caught.value) == f"{tmp_path / 'gone'} is neither a file nor a folder; pass files or folders to scan"
    assert caught.value.exit_code == 2


def test_files_scanned_counts_the_tables_checked_for_mirroring(tmp_path: Path) -> None:
    (tmp_path / "mine.jsonl").write_text('{"case": "c-1", "avg": "1.0"}\n')
    report = _scan(tmp_path, SECRET, {"a.txt": "", "b.txt": ""}, actual=[tmp_path / "mine.jsonl"], key=["case"])
    assert (report.files_scanned, report.hits) == (3, [])


def test_hits_sort_by_line_number_even_in_a_folder_with_a_colon(tmp_path: Path) -> None:
    folder = tmp_path / "run:7"
    folder.mkdir()
    report = _scan(folder, SECRET, {"a.txt": "\n" + "78.35\n" + "\n" * 7 + "Kiwi\n"}, key=["case"])
    assert [h.where for h in report.hits] == [f"{folder}/ws/a.txt:2", f"{folder}/ws/a.txt:10"]


def test_a_category_filling_half_the_rows_of_all_answer_files_together_is_not_distinctive(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "a.jsonl", [{"case": f"c-{i}", "kind": k} for i, k in
                                               enumerate(["heavy-metal", "heavy-metal", "folk-ballad"])])
    second = write_jsonl(tmp_path / "b.jsonl", [{"case": "c-9", "kind": "sea-shanty"}])
    (tmp_path / "x.txt").write_text("heavy-metal folk-ballad sea-shanty\n")
    report = scan_leaks([first, second], [tmp_path / "x.txt"], key=["case"])
    assert [h.detail for h in report.hits] == ["field 'kind' of row 1 (case=c-9)", "field 'kind' of row 3 (case=c-2)"]
    # two rows of five (40%) is not half: still distinctive
    third = write_jsonl(tmp_path / "c.jsonl", [{"case": "c-8", "kind": "polka-beat"}])
    report = scan_leaks([first, second, third], [tmp_path / "x.txt"], key=["case"])
    assert report.distinctive_values == 4 and len(report.hits) == 3


def test_common_tokens_are_common_in_any_letter_case(tmp_path: Path) -> None:
    rows = [{"case": "c-1", "a": "ERROR", "b": "False", "c": "NULL", "d": "Pass"}]
    report = _scan(tmp_path, rows, {"a.txt": "ERROR False NULL Pass\n"}, key=["case"], min_length=1)
    assert (report.distinctive_values, report.hits) == (0, [])


def test_a_row_is_named_by_all_its_key_columns(tmp_path: Path) -> None:
    rows = [{"case": "c-1", "part": "2", "avg": "78.35"}]
    report = _scan(tmp_path, rows, {"a.txt": "78.35\n"}, key=["case", "part"])
    assert _seen(report) == ["a.txt:1 value field 'avg' of row 1 (case=c-1, part=2)"]


def test_a_null_answer_cell_is_no_value_and_no_crash(tmp_path: Path) -> None:
    rows = [{"case": "c-1", "who": None, "avg": "78.35"}, {"case": "c-2", "who": "Zappa-Frank", "avg": "  "}]
    report = _scan(tmp_path, rows, {"a.txt": "Zappa-Frank 78.35\n"}, key=["case"])
    assert report.distinctive_values == 2
    assert _seen(report) == ["a.txt:1 value field 'avg' of row 1 (case=c-1)",
                             "a.txt:1 value field 'who' of row 2 (case=c-2)"]


def test_every_leaf_of_a_nested_json_answer_is_searched(tmp_path: Path) -> None:
    rows = [{"case": "c-1", "plan": {"gate": "north-gate-17", "more": {"wing": "east-wing-42", "ok": True}},
             "tags": ["leaf-one-11", ["leaf-two-22", None]]}]
    files = {"a.txt": "north-gate-17\neast-wing-42\nleaf-one-11\nleaf-two-22\n"}
    report = _scan(tmp_path, rows, files, key=["case"])
    assert report.distinctive_values == 4
    assert _seen(report) == ["a.txt:1 value field 'plan' of row 1 (case=c-1)",
                             "a.txt:2 value field 'plan' of row 1 (case=c-1)",
                             "a.txt:3 value field 'tags' of row 1 (case=c-1)",
                             "a.txt:4 value field 'tags' of row 1 (case=c-1)"]


def test_a_json_answer_of_only_nulls_and_booleans_is_searched_as_its_text(tmp_path: Path) -> None:
    report = _scan(tmp_path, [{"case": "c-1", "flags": [True, None]}], {"a.txt": "x = [true,null]\n"}, key=["case"])
    assert report.distinctive_values == 1
    assert _seen(report) == ["a.txt:1 value field 'flags' of row 1 (case=c-1)"]


def test_a_number_is_as_long_as_its_value_and_zero_has_no_sign(tmp_path: Path) -> None:
    rows = [{"case": "c-1", "a": "100", "b": "1000.00", "c": "0.00"}]
    report = _scan(tmp_path, rows, {"a.txt": "100 1000 0\n"}, key=["case"])
    assert report.distinctive_values == 1  # "100" and "0.00" are short; "1000.00" is 1000
    assert _seen(report) == ["a.txt:1 value field 'b' of row 1 (case=c-1)"]
    report = _scan(tmp_path, [{"case": "c-1", "c": "0.000"}], {"a.txt": "x = -0.0\n"}, key=["case"], min_length=1)
    assert _seen(report) == ["a.txt:1 value field 'c' of row 1 (case=c-1)"]


def test_the_longest_sealed_text_wins_where_one_is_a_prefix_of_another(tmp_path: Path) -> None:
    rows = [{"case": "c-1", "gate": "north-gate"}, {"case": "c-2", "gate": "north-gate-17"}]
    report = _scan(tmp_path, rows, {"a.txt": "go to north-gate-17\n"}, key=["case"])
    assert _seen(report) == ["a.txt:1 value field 'gate' of row 2 (case=c-2)"]


def test_a_minus_after_a_word_character_separates_a_number(tmp_path: Path) -> None:
    files = {"a.txt": "id v-78.35\n", "b.txt": "avg_-78.35\n", "c.txt": "x -78.35\n", "d.txt": "-78.35 x\n"}
    report = _scan(tmp_path, SECRET, files, key=["case"])
    assert _seen(report) == ["a.txt:1 value field 'avg' of row 1 (case=c-1)",
                             "b.txt:1 value field 'avg' of row 1 (case=c-1)"]


def test_word_boundaries_only_where_the_value_has_a_word_character_at_its_edge(tmp_path: Path) -> None:
    rows = [{"case": "c-1", "a": "late", "b": "x-ray-7", "c": "#A-113!"}]
    files = {"a.txt": "template box-ray-7 x-ray-77\n", "b.txt": "so late.\nsee#A-113!now\n"}
    report = _scan(tmp_path, rows, files, key=["case"])
    assert _seen(report) == ["b.txt:1 value field 'a' of row 1 (case=c-1)",
                             "b.txt:2 value field 'c' of row 1 (case=c-1)"]


def test_a_symlink_named_as_a_path_is_a_hit_not_followed(tmp_path: Path) -> None:
    ans = write_jsonl(tmp_path / "answers.jsonl", SECRET)
    os.symlink("answers.jsonl", tmp_path / "peek.jsonl")
    report = scan_leaks([ans], [tmp_path / "peek.jsonl"])
    assert [(h.where, h.kind, h.detail) for h in report.hits] == [
        (f"{tmp_path}/peek.jsonl:1", "symlink", "symlink to 'answers.jsonl'")]
    assert report.files_scanned == 0


def test_utf16_either_byte_order_broken_bytes_and_nul_bytes_do_not_hide_a_value(tmp_path: Path) -> None:
    text = "who: Müller-Lüdenscheid\n"
    files: dict[str, str | bytes] = {
        "be.txt": b"\xfe\xff" + text.encode("utf-16-be"),
        "le.txt": b"\xff\xfe" + text.encode("utf-16-le") + b"\x00",  # a stray last byte
        "bad.txt": b"\xff\xc0 " + text.encode("utf-8"),
        "nul.txt": "\0".join("78.35").encode(),
    }
    report = _scan(tmp_path, SECRET, files, key=["case"])
    assert _seen(report) == ["bad.txt:1 value field 'who' of row 1 (case=c-1)",
                             "be.txt:1 value field 'who' of row 1 (case=c-1)",
                             "le.txt:1 value field 'who' of row 1 (case=c-1)",
                             "nul.txt:1 value field 'avg' of row 1 (case=c-1)"]


def test_raw_and_decoded_hits_are_all_kept_with_their_lines(tmp_path: Path) -> None:
    text = '\n78.35\nx = "M\\u00fcller-L\\u00fcdenscheid"\ny = "K\\u0069wi"\n'
    report = _scan(tmp_path, SECRET, {"a.py": text}, key=["case"])
    assert _seen(report) == ["a.py:2 value field 'avg' of row 1 (case=c-1)",
                             "a.py:3 value field 'who' of row 1 (case=c-1)",
                             "a.py:4 value field 'tag' of row 1 (case=c-1)"]


def test_a_literal_that_decodes_to_nothing_is_still_searched_raw(tmp_path: Path) -> None:
    report = _scan(tmp_path, SECRET, {"a.py": 'x = "\\N{NO SUCH NAME} 78.35"\n'}, key=["case"])
    assert _seen(report) == ["a.py:1 value field 'avg' of row 1 (case=c-1)"]


def test_csv_cells_quoted_escaped_partly_quoted_and_their_lines(tmp_path: Path) -> None:
    rows = [{"case": "c-1", "who": 'O\'Brien "the quoted"', "name": "Müller-Lüdenscheid", "avg": "78.35"}]
    files = {
        "first.csv": '"O\'Brien ""the quoted""",x\n',
        "escaped.csv": 'id,who\n1,"M\\u00fcller-L\\u00fcdenscheid"\n',
        "partly.csv": 'id,who\n1,"Müller-Lüden"scheid\n',
        "glued.csv": 'XMüller-Lüdenscheid,"Müller-Lüden"scheid\n',  # the plain field is another text
        "last.csv": 'id,who\n1,"O\'Brien ""the quoted"""',  # no final newline
        "many.csv": 'id,who\n1,"O\'Brien ""the quoted"""\n2,"some\nnote"\n',
        "wide.csv": 'id,note,avg\n1,"two\nlines",78.35\n',
    }
    report = _scan(tmp_path, rows, files, key=["case"])
    assert _seen(report) == ["escaped.csv:2 value field 'name' of row 1 (case=c-1)",
                             "first.csv:1 value field 'who' of row 1 (case=c-1)",
                             "glued.csv:1 value field 'name' of row 1 (case=c-1)",
                             "last.csv:2 value field 'who' of row 1 (case=c-1)",
                             "many.csv:2 value field 'who' of row 1 (case=c-1)",
                             "partly.csv:2 value field 'name' of row 1 (case=c-1)",
                             "wide.csv:3 value field 'avg' of row 1 (case=c-1)"]


def test_windows_line_endings_do_not_hide_a_value_across_lines(tmp_path: Path) -> None:
    rows = [{"case": "c-1", "note": "line one\nline two"}]
    files = {"a.txt": "x\r\nline one\r\nline two\r\n", "b.csv": 'id,note\r\n1,"line one\r\nline two"\r\n',
             "c.txt": "old mac\rline one\rline two\r"}
    report = _scan(tmp_path, rows, files, key=["case"])
    assert _seen(report) == ["a.txt:2 value field 'note' of row 1 (case=c-1)",
                             "b.csv:2 value field 'note' of row 1 (case=c-1)",
                             "c.txt:2 value field 'note' of row 1 (case=c-1)"]


def test_mirrors_byte_copies_even_without_rows_one_row_reordered_and_not_honest_tables(tmp_path: Path) -> None:
    key = tmp_path / "key.csv"
    key.write_text("case,avg\n")
    copy = tmp_path / "copy.csv"
    copy.write_bytes(key.read_bytes())
    swapped = tmp_path / "swapped.csv"
    swapped.write_text("avg,case\n")
    report = scan_leaks([key], [], actual=[copy, swapped])
    assert [(h.where, h.kind, h.detail) for h in report.hits] == [
        (f"{copy}:1", "mirror", "mirrors the answer table key.csv cell for cell, in the same order")]
    one = write_jsonl(tmp_path / "one.jsonl", [{"case": "c-1", "avg": "78.35"}])
    mirror = write_jsonl(tmp_path / "mirror.jsonl", [{"avg": "78.35", "case": "c-1", "extra": "x"}])
    honest = write_jsonl(tmp_path / "honest.jsonl", [{"case": "c-1", "avg": "78.36"}])
    assert [h.where for h in scan_leaks([one], [], actual=[mirror, honest]).hits] == [f"{mirror}:1"]
