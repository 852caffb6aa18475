"""Leak scan: distinctive values found through encodings; common and input values ignored; mirrors flagged."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import write_jsonl

from tri_agent import scan_leaks

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
