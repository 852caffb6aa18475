"""Reading tables: literal cells, BOM, CRLF, quoting, and one-line errors with file:line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tri_agent import MalformedInput, UsageError
from tri_agent.scoring._tables import (
    FIELD_LIMIT,
    ROW,
    JsonNumber,
    locate_csv_problem,
    read_actual,
    read_table,
    table_format,
    table_from_rows,
    to_json_text,
    unique_keys_object,
    unreadable_table,
)


def _cells(path: Path) -> list[dict[str, str | None]]:
    return read_table(path).frame.drop(ROW).collect().to_dicts()


def test_csv_bom_crlf_and_quoted_multiline(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b'\xef\xbb\xbfk,v\r\na,"x\r\ny"\r\nb,"say ""hi"""\r\n')
    table = read_table(p)
    assert table.columns == ["k", "v"]
    assert _cells(p) == [{"k": "a", "v": "x\r\ny"}, {"k": "b", "v": 'say "hi"'}]
    assert table.line_of(1) == 4  # the second record starts after the two-line first one


def test_jsonl_keeps_literals_and_types_as_text(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text('{"k": "a", "n": 1.50, "b": true, "z": null, "o": {"x": [1.0, "é"]}}\n\n{"k": "b", "extra": 1e3}\n')
    assert _cells(p) == [
        {"k": "a", "n": "1.50", "b": "true", "z": None, "o": '{"x":[1.0,"é"]}', "extra": None},
        {"k": "b", "n": None, "b": None, "z": None, "o": None, "extra": "1e3"},
    ]
    assert read_table(p).line_of(1) == 3


@pytest.mark.parametrize("content,line,message", [
    (b'{"k": 1}\n{"k": \n', 2, "not valid JSON"),
    (b'{"k": 1}\n[1, 2]\n', 2, "expected a JSON object"),
    (b'{"k": 1, "k": 2}\n', 1, "repeated"),
    (b'{"k": "\xff"}\n', 1, "not UTF-8"),
])
def test_bad_jsonl(tmp_path: Path, content: bytes, line: int, message: str) -> None:
    p = tmp_path / "t.jsonl"
    p.write_bytes(content)
    with pytest.raises(MalformedInput, match=message) as err:
        read_table(p)
    assert err.value.where == f"{p}:{line}"


@pytest.mark.parametrize("content,line,message", [
    (b"", 1, "no header"),
    (b"k,k\n1,2\n", 1, "appears twice"),
    (b"k,v\n1,2\n3,4,5\n", 3, "3 fields where the header has 2"),
    (b"k,v\n1,2\n3,\xff\n", 3, "not UTF-8"),
    # a long cell is fine up to the documented bound; past it, the line is named (not an internal error)
    (b'k,v\n1,"' + b"x" * (200 << 10) + b'"\n3,4,5\n', 3, "3 fields where the header has 2"),
    (b'k,' + b"h" * ((16 << 20) + 1) + b"\n1,2\n", 1, "field larger than field limit"),
])
def test_bad_csv(tmp_path: Path, content: bytes, line: int, message: str) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(content)
    with pytest.raises(MalformedInput, match=message) as err:
        read_table(p)
    assert err.value.where == f"{p}:{line}" and "\n" not in err.value.line()


def test_a_tsv_table_reads_as_its_csv_twin_and_scores_the_same(tmp_path: Path) -> None:
    """The same rows as CSV and as TSV (.tsv, .tab): the same cells, and every channel of the score the same; a TSV
    line with a field too many is named with its line, a tab being no character a field may hold."""
    from conftest import ANSWERS, CALIBER, write_csv, write_jsonl

    from tri_agent import ScoreInputs, score

    write_csv(tmp_path / "x.csv", ANSWERS)
    columns = list(ANSWERS[0])
    (tmp_path / "x.tsv").write_text("\t".join(columns) + "\n" + "".join(
        "\t".join(str(r[c]) for c in columns) + "\n" for r in ANSWERS), encoding="utf-8")
    (tmp_path / "x.tab").write_bytes((tmp_path / "x.tsv").read_bytes())
    assert _cells(tmp_path / "x.tsv") == _cells(tmp_path / "x.csv") == _cells(tmp_path / "x.tab")
    assert _cells(tmp_path / "x.tsv")[2]["label"] == 'x, "y"'
    (tmp_path / "c.yaml").write_text(CALIBER)
    write_jsonl(tmp_path / "a.jsonl", ANSWERS)
    got = {s: score(ScoreInputs(tmp_path / "c.yaml", tmp_path / "a.jsonl", tmp_path / f"x.{s}"))
           for s in ("csv", "tsv")}
    assert got["tsv"].verdict == "pass" and got["tsv"].answers == got["csv"].answers
    (tmp_path / "bad.tsv").write_text("a\tb\n1\t2\n1\t2\t3\n")
    with pytest.raises(MalformedInput, match="3 fields where the header has 2; a TSV field cannot hold a tab"):
        read_table(tmp_path / "bad.tsv")
    # no quoting in TSV: a field that starts with a quote keeps it, and a lone quote opens nothing
    (tmp_path / "q.tsv").write_text('a\tb\n"y" z\t"\n')
    assert _cells(tmp_path / "q.tsv") == [{"a": '"y" z', "b": '"'}]


def test_unknown_extension_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown table format"):
        read_table(tmp_path / "t.xlsx")
    with pytest.raises(UsageError, match="does not exist"):
        read_table(tmp_path / "t.csv")


@pytest.mark.parametrize("content,message", [
    (b'{"k": NaN}\n', "NaN is not JSON"),
    (b'{"k": "\\ud800"}\n', "not UTF-8 text"),
    (b'{"k": ' + b"[" * 100000 + b"]" * 100000 + b"}\n", "nested too deeply"),
])
def test_jsonl_that_is_not_json_text(tmp_path: Path, content: bytes, message: str) -> None:
    p = tmp_path / "t.jsonl"
    p.write_bytes(content)
    with pytest.raises(MalformedInput, match=message):
        read_table(p)


def test_csv_blank_lines_are_no_rows(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("k,v\na,1\n\nb,2\n\n")
    table = read_table(p)
    assert _cells(p) == [{"k": "a", "v": "1"}, {"k": "b", "v": "2"}]
    assert table.line_of(2) == 4  # rows keep their record index, so lines stay right


# --- every path of the reader, with the exact outcome a user sees -------------------------------------------


def _malformed(path: Path, **kw: object) -> MalformedInput:
    with pytest.raises(MalformedInput) as err:
        read_table(path, **kw)  # type: ignore[arg-type]
    assert err.value.exit_code == 3 and "\n" not in err.value.line()
    return err.value


def _usage(path: Path) -> UsageError:
    with pytest.raises(UsageError) as err:
        read_table(path)
    assert err.value.exit_code == 2
    return err.value


def test_csv_digest_columns_and_lines_of_records_after_multiline_cells(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    data = b'k,v\na,"one\ntwo\nthree"\nb,2\nc,"x\r\ny"\nd,4\n'
    p.write_bytes(data)
    table = read_table(p)
    assert table.format == "csv" and table.defect is None
    assert table.sha256 == hashlib.sha256(data).hexdigest()
    assert table.frame.collect()[ROW].to_list() == [0, 1, 2, 3]
    assert [table.line_of(i) for i in range(4)] == [2, 5, 6, 8]
    assert table.where(3) == f"{p}:8"
    assert table.line_of(4) == 6 and table.line_of(-1) == 1  # past the known records: row + 2


def test_subset_keeps_row_index_lines_digest_and_columns(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    data = b'g,v\nx,"a\nb"\ny,1\nx,2\n'
    p.write_bytes(data)
    sub = read_table(p).subset("g", "x")
    p.write_bytes(b"g,v\n")  # the lines were resolved before filtering: a later change of the file is not read
    assert sub.columns == ["g", "v"] and sub.path == p and sub.format == "csv" and sub.defect is None
    assert sub.frame.collect().to_dicts() == [{ROW: 0, "g": "x", "v": "a\nb"}, {ROW: 2, "g": "x", "v": "2"}]
    assert sub.where(2) == f"{p}:5" and sub.line_of(1) == 4
    assert sub.sha256 == hashlib.sha256(data).hexdigest()


def test_subset_of_a_jsonl_table_and_of_an_unreadable_one(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text('{"g": "x"}\n\n{"g": "y"}\n{"g": "x", "n": 1}\n')
    sub = read_table(p).subset("g", "x")
    assert sub.frame.collect()[ROW].to_list() == [0, 2]
    assert [sub.line_of(0), sub.line_of(2)] == [1, 4]
    gone = unreadable_table(tmp_path / "a.csv", ("g",), "why").subset("g", "x")
    assert gone.defect == "why" and gone.frame.collect().height == 0


def test_csv_lines_stop_at_an_unreadable_record(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b'k,v\na,1\nb,"x\ny"\nc,' + b"h" * (FIELD_LIMIT + 1) + b"\n")
    table = read_table(p)
    assert table.frame.collect().height == 3
    assert [table.line_of(0), table.line_of(1)] == [2, 3]
    assert table.line_of(2) == 4  # the record the csv module cannot read falls back to row + 2


def test_csv_line_of_with_a_bom(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b'\xef\xbb\xbf"k",v\na,"1\n2"\nb,3\n')
    table = read_table(p)
    assert table.columns == ["k", "v"]
    assert [table.line_of(0), table.line_of(1)] == [2, 4]


def test_table_from_rows() -> None:
    rows: list[dict[str, str | None]] = [{"b": "1", "a": "x"}, {"c": "2"}]
    table = table_from_rows("case-1", rows, ("z", "a"))
    assert table.columns == ["z", "a", "b", "c"]
    assert table.path == Path("case-1") and table.format == "jsonl" and table.defect is None
    assert table.frame.collect().to_dicts() == [
        {ROW: 0, "z": None, "a": "x", "b": "1", "c": None},
        {ROW: 1, "z": None, "a": None, "b": None, "c": "2"},
    ]
    assert set(table.frame.collect().schema.values()) == {pl.UInt32, pl.String}  # an all-blank column is text too
    assert table.sha256 == hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
    assert [table.line_of(0), table.line_of(1), table.line_of(2)] == [1, 2, 4]
    assert table.where(1) == "case-1:2"


def test_table_from_no_rows() -> None:
    table = table_from_rows("empty", [], ("k",))
    assert table.columns == ["k"] and table.frame.collect().to_dicts() == []
    assert table.sha256 == hashlib.sha256(b"[]").hexdigest()


def test_unreadable_table_stands_in_with_no_rows(tmp_path: Path) -> None:
    p = tmp_path / "out.CSV"
    p.write_bytes(b"garbage")
    table = unreadable_table(p, ("k", "v"), "it broke")
    assert table.defect == "it broke" and table.format == "csv" and table.path == p
    assert table.columns == ["k", "v"]
    frame = table.frame.collect()
    assert frame.height == 0 and frame.columns == [ROW, "k", "v"] and frame.schema["k"] == pl.String
    assert table.sha256 == hashlib.sha256(b"garbage").hexdigest()
    assert table.line_of(0) == 2  # no known lines
    empty = hashlib.sha256(b"").hexdigest()
    assert unreadable_table(tmp_path / "missing.jsonl", (), "x").sha256 == empty
    (tmp_path / "dir.jsonl").mkdir()
    assert unreadable_table(tmp_path / "dir.jsonl", (), "x").sha256 == empty
    (tmp_path / "link.csv").symlink_to(p)
    assert unreadable_table(tmp_path / "link.csv", (), "x").sha256 == empty  # a symlink is never followed


def test_unreadable_table_survives_a_read_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b"k\n1\n")

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_bytes", refuse)
    assert unreadable_table(p, ("k",), "x").sha256 == hashlib.sha256(b"").hexdigest()


def test_read_actual_turns_malformed_input_into_a_defect(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    data = b'{"k": 1}\n{"k": \n'
    p.write_bytes(data)
    table = read_actual(p, frozenset(), ("k", "v"))
    assert table.defect == f"unreadable table: {p}:2: not valid JSON (Expecting value: line 1 column 7 (char 6)); " \
        "one JSON object per line"
    assert table.columns == ["k", "v"] and table.frame.collect().height == 0
    assert table.sha256 == hashlib.sha256(data).hexdigest()


def test_read_actual_reads_a_good_table_as_read_table(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text('{"k": "x"}\n')
    table = read_actual(p, frozenset({"k"}), ("k", "v"))
    assert table.defect is None and table.columns == ["k", "v"]
    assert table.frame.drop(ROW).collect().to_dicts() == [{"k": '"x"', "v": None}]


def test_read_actual_still_refuses_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        read_actual(tmp_path / "t.csv")


@pytest.mark.parametrize("name,fmt", [
    ("a.csv", "csv"), ("a.CSV", "csv"), ("a.jsonl", "jsonl"), ("a.JSONL", "jsonl"), ("a.ndjson", "jsonl"),
    ("a.NdJson", "jsonl"), ("a.b.csv", "csv"), ("a.tsv", "tsv"), ("a.TAB", "tsv"),
])
def test_table_format(name: str, fmt: str) -> None:
    assert table_format(Path(name)) == fmt


@pytest.mark.parametrize("name,suffix", [("a.xlsx", "'.xlsx'"), ("a", "''"), ("a.json", "'.json'"), ("csv", "''")])
def test_unknown_table_format(name: str, suffix: str) -> None:
    with pytest.raises(UsageError) as err:
        table_format(Path(name))
    assert err.value.exit_code == 2
    assert err.value.line() == f"{name}: unknown table format {suffix}; use .csv, .tsv, .jsonl or .ndjson"


def test_read_errors_are_usage_errors(tmp_path: Path) -> None:
    missing = tmp_path / "t.csv"
    assert _usage(missing).line() == f"{missing} does not exist; check the path"
    folder = tmp_path / "d.jsonl"
    folder.mkdir()
    assert _usage(folder).line() == f"{folder} is a directory, not a table file"
    blocker = tmp_path / "file"
    blocker.write_text("x")
    under = blocker / "t.csv"
    assert _usage(under).line() == f"cannot read {under}: Not a directory"


@pytest.mark.parametrize("content,columns", [
    (b"\xef\xbb\xbfk,v\n1,2\n", ["k", "v"]),
    (b"k,v\r\n1,2\r\n", ["k", "v"]),
    (b"k,v", ["k", "v"]),
    (b'"a,b",c\n', ["a,b", "c"]),
    (b" k , \n", [" k ", " "]),
    (b"AX,BX\r\n1,2\r\n", ["AX", "BX"]),
    (b"k,v\n\xff\n", None),  # the header is read alone: a bad byte later is the parser's to name
])
def test_csv_header(tmp_path: Path, content: bytes, columns: list[str] | None) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(content)
    if columns is None:
        assert _malformed(p).where == f"{p}:2"
    else:
        assert read_table(p).columns == columns


@pytest.mark.parametrize("content,line", [
    (b"\xffk,v\n1,2\n", "header is not UTF-8; save the file as UTF-8"),
    (b"\xef\xbb\xbf\xffk\n", "header is not UTF-8; save the file as UTF-8"),
    (b"k,v\rx,y\n1,2\n", "unreadable header (new-line character seen in unquoted field - do you need to open "
                         "the file in universal-newline mode?); end lines with \\n or \\r\\n; the header names "
                         "the columns"),
    (b"\rk,v\n1,2\n", "unreadable header (new-line character seen in unquoted field - do you need to open "
                         "the file in universal-newline mode?); end lines with \\n or \\r\\n; the header names "
                         "the columns"),
    (b"\n1,2\n", "no header row; the first line must name the columns"),
    (b"\r\n1,2\n", "no header row; the first line must name the columns"),
    (b" , \t\n1,2\n", "no header row; the first line must name the columns"),
    (b"b,a,b,a\n1,2,3,4\n", "column 'a' appears twice in the header"),
    (b"k,v,v\n", "column 'v' appears twice in the header"),
])
def test_bad_csv_header(tmp_path: Path, content: bytes, line: str) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(content)
    err = _malformed(p)
    assert err.where == f"{p}:1" and err.line() == f"{p}:1: {line}"


def test_csv_cells_and_blank_lines(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b'k,v,w\n01,1.10,"a,b"\n\n x ,,\n')
    table = read_table(p)
    assert table.frame.collect().to_dicts() == [
        {ROW: 0, "k": "01", "v": "1.10", "w": "a,b"},
        {ROW: 2, "k": " x ", "v": None, "w": None},
    ]
    assert table.line_of(2) == 4


@pytest.mark.parametrize("content,line", [
    (b'k,v\na,"x\ny"\nb,2,3\n', "{p}:4: 3 fields where the header has 2; quote cells that contain commas"),
    (b'k,v\na,"x\ny"\nb,\xe9\n', "{p}:4: byte 14 is not UTF-8; save the file as UTF-8"),
    (b'k,v\na,1\nb,"' + b"h" * (FIELD_LIMIT + 1) + b'"\n', "{p}:3: unreadable CSV (field larger than field limit "
     f"({FIELD_LIMIT})); end lines with \\n or \\r\\n and quote fields that hold line breaks"),
])
def test_locate_csv_problem(tmp_path: Path, content: bytes, line: str) -> None:
    p = tmp_path / "t.csv"
    assert locate_csv_problem(content, p, 2).line() == line.format(p=p)


def test_locate_csv_problem_after_a_bom_and_when_it_finds_none(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    assert locate_csv_problem(b"\xef\xbb\xbfk,v\n1,2,3\n", p, 2).where == f"{p}:2"
    assert locate_csv_problem(b'\xef\xbb\xbf"a,b",c\n1,2,3\n', p, 2).where == f"{p}:2"  # the BOM opens no field
    found = locate_csv_problem(b"k,v\n1,2\n", p, 2)
    assert found.where == str(p)
    assert found.line() == f"{p}: polars could not read this CSV; check quoting and delimiters"
    assert locate_csv_problem(b"k,v\n1\n", p, 2).where == str(p)  # too few fields is no problem here


def test_csv_polars_failure_without_a_located_line(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b'k,v\n1,2\n3,"x"y\n')
    err = _malformed(p)
    assert err.where == str(p) and err.hint == ""
    assert err.line().startswith(f"{p}: unreadable CSV (could not parse `\"x\"y`")


def test_csv_bad_byte_line_through_read_table(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b'k,v\na,"x\ny"\nb,\xe9\n')
    assert _malformed(p).line() == f"{p}:4: byte 14 is not UTF-8; save the file as UTF-8"


def test_jsonl_rows_columns_and_lines(tmp_path: Path) -> None:
    p = tmp_path / "t.ndjson"
    data = b'\xef\xbb\xbf{"a": 1.10, "b": true}\r\n  \n\t\n{"c": false, "a": -0, "b": null}\n{}\n'
    p.write_bytes(data)
    table = read_table(p, frozenset(), ("z", "a"))
    assert table.format == "jsonl" and table.columns == ["a", "b", "c", "z"]
    assert table.sha256 == hashlib.sha256(data).hexdigest()
    assert table.frame.collect().to_dicts() == [
        {ROW: 0, "a": "1.10", "b": "true", "c": None, "z": None},
        {ROW: 1, "a": "-0", "b": None, "c": "false", "z": None},
        {ROW: 2, "a": None, "b": None, "c": None, "z": None},
    ]
    assert [table.line_of(0), table.line_of(1), table.line_of(2), table.line_of(3)] == [1, 4, 5, 5]
    assert table.frame.collect().schema["z"] == pl.String  # a column absent from every row is text, all blank


def test_empty_jsonl_has_the_named_columns_and_no_rows(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_bytes(b"\n\n")
    table = read_table(p, frozenset(), ("k", "v"))
    assert table.columns == ["k", "v"]
    frame = table.frame.collect()
    assert frame.height == 0 and frame.columns == [ROW, "k", "v"] and frame.schema[ROW] == pl.UInt32
    bare = read_table(p)
    assert bare.columns == [] and bare.frame.collect().columns == [ROW]


def test_jsonl_json_columns_hold_json_text(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text('{"j": "x", "s": [1.0, "é", {"k": true}], "n": 2.50, "t": "x", "o": {"é": null}, "z": null}\n',
                 encoding="utf-8")
    table = read_table(p, frozenset({"j", "s", "z"}))
    assert table.frame.drop(ROW).collect().to_dicts() == [
        {"j": '"x"', "s": '[1.0,"é",{"k":true}]', "n": "2.50", "t": "x", "o": '{"é":null}', "z": None},
    ]


@pytest.mark.parametrize("content,line", [
    (b'{"k": 1}\n\n{"k": \n',
     "{p}:3: not valid JSON (Expecting value: line 1 column 7 (char 6)); one JSON object per line"),
    (b'{"k": 1}\n"x"\n', "{p}:2: expected a JSON object, found str"),
    (b'{"k": 1}\nnull\n', "{p}:2: expected a JSON object, found NoneType"),
    (b'[{"k": 1}]\n', "{p}:1: expected a JSON object, found list"),
    (b'{"k": Infinity}\n', "{p}:1: not valid JSON (Infinity is not JSON); one JSON object per line"),
    (b'{"k": -Infinity}\n', "{p}:1: not valid JSON (-Infinity is not JSON); one JSON object per line"),
    (b'{"o": {"x": 1, "x": 2}}\n', "{p}:1: not valid JSON (key 'x' repeated in one object); one JSON object per line"),
    (b'{"k": 1}\n{"k": "\\udc00"}\n', "{p}:2: line is not UTF-8 text; save the file as UTF-8"),
    (b'{"\\ud800": 1}\n', "{p}:1: line is not UTF-8 text; save the file as UTF-8"),
    (b'{"k": "\xe9"}\n', "{p}:1: line is not UTF-8 text; save the file as UTF-8"),
    (b'{"k": 1}\n{"k": ' + b"[" * 400 + b"]" * 400 + b"}\n", "{p}:2: JSON nested too deeply"),
    (b'{"k": ' + b"[" * 100000 + b"]" * 100000 + b"}\n", "{p}:1: JSON nested too deeply"),
])
def test_bad_jsonl_lines(tmp_path: Path, content: bytes, line: str) -> None:
    p = tmp_path / "t.jsonl"
    p.write_bytes(content)
    assert _malformed(p).line() == line.format(p=p)


def test_escaped_text_that_is_valid(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_bytes(b'{"k": "\\u00e9\\ud83d\\ude00\\n"}\n')
    assert _cells(p) == [{"k": "é\U0001f600\n"}]


def test_unique_keys_object() -> None:
    assert unique_keys_object([("a", 1), ("b", 2)]) == {"a": 1, "b": 2}
    assert list(unique_keys_object([("b", 1), ("a", 2)])) == ["b", "a"]
    with pytest.raises(ValueError, match=r"^key 'a' repeated in one object$"):
        unique_keys_object([("a", 1), ("b", 2), ("a", 1)])


def test_to_json_text() -> None:
    assert to_json_text(JsonNumber("1.10")) == "1.10"
    assert to_json_text({"é": [JsonNumber("1e3"), True, None, "ü"], "b": {}}) == '{"é":[1e3,true,null,"ü"],"b":{}}'
    assert to_json_text([]) == "[]"
    assert to_json_text('say "hi"') == '"say \\"hi\\""'
    assert to_json_text(False) == "false"


def test_csv_lines_of_a_file_that_changed_to_bad_bytes(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b'k,v\na,"1\n2"\nb,3\n')
    table = read_table(p)
    p.write_bytes(b'k,v\na,"\xff\n2"\nb,3\n')  # lines are read lazily: a byte that is not UTF-8 never stops them
    assert [table.line_of(0), table.line_of(1)] == [2, 4]


def test_unreadable_table_knows_no_lines_of_the_file(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b'k\n"a\nb"\nc\n')
    table = unreadable_table(p, ("k",), "x")
    assert [table.line_of(0), table.line_of(1)] == [2, 3]  # row + 2: it has no rows, its file is never parsed


def test_csv_lines_of_a_file_emptied_since(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(b"k\n1\n")
    table = read_table(p)
    p.write_bytes(b"")
    assert table.line_of(0) == 2


def test_locate_csv_problem_on_the_first_line(tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    assert locate_csv_problem(b"a,b,c\n", p, 2).line() == f"{p}:1: 3 fields where the header has 2; " \
        "quote cells that contain commas"
    assert locate_csv_problem(b"\nk\xff\n", p, 1).line() == f"{p}:2: byte 2 is not UTF-8; save the file as UTF-8"


@pytest.mark.parametrize("make", ["rows", "unreadable", "jsonl"])
def test_empty_and_all_null_columns_are_text(tmp_path: Path, make: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"g": null, "v": "1"}\n')
    table = {"rows": lambda: table_from_rows("x", [{"g": None}]),
             "unreadable": lambda: unreadable_table(tmp_path / "gone.csv", ("g",), "why"),
             "jsonl": lambda: read_table(path)}[make]()
    frame = table.frame.collect()
    assert frame.schema["g"] == pl.String
    assert frame.filter(pl.col("g").str.strip_chars() == "").height == 0


def test_a_declared_format_overrides_the_suffix(tmp_path: Path) -> None:
    path = tmp_path / "report.txt"
    path.write_text("g,n\na,1\n")
    with pytest.raises(UsageError):
        read_table(path)
    table = read_table(path, fmt="csv")
    assert (table.format, table.columns, table.frame.drop(ROW).collect().to_dicts()) == ("csv", ["g", "n"],
                                                                                         [{"g": "a", "n": "1"}])
    rows = tmp_path / "rows.csv"
    rows.write_text('{"g": "a"}\n')
    assert read_table(rows, fmt="jsonl").format == "jsonl"


def _cut_where_records_end(header: bytes, body: bytes, size: int, quoted: bool) -> list[bytes]:
    """What ``blocks`` must give, by a model as plain as can be: every record end (a line break outside quotes, the
    header's quotes counted) found in one pass; after each read of ``size`` bytes, a block up to the last record
    end read so far."""
    inside, ends = header.count(b'"') % 2 if quoted else 0, []
    for i, byte in enumerate(body):
        if quoted and byte == ord('"'):
            inside ^= 1
        elif byte == ord("\n") and not inside:
            ends.append(i + 1)
    out, start = [], 0
    for read in range(size, len(body) + size, size):
        cut = max((e for e in ends if start < e <= min(read, len(body))), default=None)
        if cut is not None:
            out.append(body[start:cut])
            start = cut
    if body[start:] or not out:
        out.append(body[start:])
    return out


@settings(max_examples=300)
@example('h', 'a\nb\n"c\n', 9, "csv")  # a quote left open after two records: the cut is at the last, not the first
@given(st.text('h",', max_size=6), st.text('a",\n', max_size=60), st.integers(1, 9), st.sampled_from(["csv", "tsv"]))
def test_blocks_are_cut_at_the_last_record_end_of_each_read(tmp_path_factory: pytest.TempPathFactory, head: str,
                                                            text: str, size: int, kind: str) -> None:
    from tri_agent.scoring._tables import DIALECTS, blocks

    path = tmp_path_factory.mktemp("blocks") / f"t.{kind}"
    path.write_bytes((head + "\n" + text).encode())
    got = list(blocks(path, DIALECTS[kind], size))
    assert {h for h, _ in got} == {(head + "\n").encode()}
    assert [b for _, b in got] == _cut_where_records_end((head + "\n").encode(), text.encode(), size,
                                                         DIALECTS[kind].quoted)


@pytest.mark.parametrize(("text", "column"), [
    ('k,"v\nx,1\ny,2\n', "column 2 reads as 'v' on its own and as 'v\\nx,1\\ny,2'"),
    ('a,b,c,d,e,"f\nx,1\n', "column 6 reads as 'f' on its own and as 'f\\nx,1'"),
    # what a column swallows is shown up to 60 characters
    ('k,"v\n' + "x,1\n" * 30, "column 2 reads as 'v' on its own and as 'v" + "\\nx,1" * 14 + "\\nx,'"),
])
def test_a_header_line_that_leaves_a_quote_open_is_named_with_the_column_it_swallows(tmp_path: Path, text: str,
                                                                                   column: str) -> None:
    (tmp_path / "t.csv").write_text(text)
    with pytest.raises(MalformedInput) as err:
        read_table(tmp_path / "t.csv")
    assert err.value.line() == (f"{tmp_path / 't.csv'}:1: the header line's {column} with what follows it (a quote "
                                "it leaves open); close every quote of the header on its line")
