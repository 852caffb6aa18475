"""Leak scan: a sealed number written in another spelling (exponent, decimal comma, other digits, grouping) leaks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import write_jsonl

from tri_agent import scan_leaks

SEALED = [{"case": "c-1", "avg": "892.38", "mid": "366.36", "sum": "1234.50"}]
AVG, MID, SUM = (f"field {f!r} of row 1 (case=c-1)" for f in ("avg", "mid", "sum"))


def _details(tmp: Path, text: str, rows: list[dict[str, object]] | None = None, **kw: Any) -> list[str]:
    ans = write_jsonl(tmp / "answers.jsonl", rows or SEALED)
    (tmp / "ticket.md").write_text(text, encoding="utf-8")
    report = scan_leaks([ans], [tmp / "ticket.md"], key=["case"], **kw)
    return [f"{h.where.rsplit(':', 1)[-1]} {h.detail}" for h in report.hits]


@pytest.mark.parametrize("spelling", ["8.9238e2", "8.9238E+02", "89238e-2", "0.89238e3", "89.238e1",
                                      "892380E-3", "x-8.9238e2"])
def test_scientific_notation_leaks(tmp_path: Path, spelling: str) -> None:
    assert _details(tmp_path, f"expect {spelling} here\n") == [f"1 {AVG}"]


@pytest.mark.parametrize("spelling", ["892,38", "892,380", '"892,38"', "avg=892,38;", "1.234,50", "1.234,5"])
def test_a_decimal_comma_leaks(tmp_path: Path, spelling: str) -> None:
    want = [f"1 {SUM}"] if spelling.startswith("1.") else [f"1 {AVG}"]
    assert _details(tmp_path, f"got {spelling}\n") == want


@pytest.mark.parametrize("spelling", ["８９２.３８", "８９２．３８", "٨٩٢٫٣٨", "٨٩٢.٣٨", "८९२.३८", "８.９２３８ｅ２",
                                      "８９２，３８"])
def test_digits_of_any_script_leak(tmp_path: Path, spelling: str) -> None:
    assert _details(tmp_path, f"note: {spelling}\n") == [f"1 {AVG}"]


@pytest.mark.parametrize("spelling", ["1,234.50", "1 234.50", "1_234.50", "1'234.5", "1\u202f234,50", "1\u00a0234.50",
                                      "1 234,5", "1.2345e3", "１,２３４.５０"])
def test_thousands_separators_leak(tmp_path: Path, spelling: str) -> None:
    assert _details(tmp_path, f"total {spelling}\n") == [f"1 {SUM}"]


def test_both_sealed_values_on_their_own_lines(tmp_path: Path) -> None:
    text = "a\nfirst 8.9238e2\nsecond 366,36\nthird ３６６.３６\n"
    assert _details(tmp_path, text) == [f"2 {AVG}", f"3 {MID}", f"4 {MID}"]


@pytest.mark.parametrize("text", [
    "1892,38 892,381 892,3 8.9238e21 18.9238e2 8.92381e2 8.9238e2.5",  # longer or other numbers
    "1８９２.３８ ８９２.３８1 ８９２.３８٣",  # a digit of another script still makes the number longer
    "5,892,38,7 a,892,38,9 892,38.5 1.892,38",  # a comma run is a list, not one decimal comma
    "-8.9238e2 -892,38 (-８９２.３８)",  # a negative number is another value
    "8.9238 e2 892, 38 892 ,38 1, 234.50 12,34.50 1,2345.0 1 2 3 4",  # spaces and groups that are no grouping
])
def test_other_numbers_and_lists_do_not_match(tmp_path: Path, text: str) -> None:
    rows = [{"case": "c-1", "avg": "892.38", "mid": "366.36"}]
    assert _details(tmp_path, text + "\n", rows) == []


def test_an_ordinary_list_creates_no_value_that_is_not_sealed(tmp_path: Path) -> None:
    rows = [{"case": "c-1", "a": "3.4", "b": "1.2", "c": "12.5"}]
    text = "x,y\n1,2\n3, 4\n[12, 5]\n1e0\n"  # "1,2" is read as 1.2 as well: a sealed value, an acceptable hit
    assert _details(tmp_path, text, rows, min_length=1) == ["2 field 'b' of row 1 (case=c-1)"]


def test_a_value_in_the_inputs_in_another_spelling_is_not_distinctive(tmp_path: Path) -> None:
    inputs = tmp_path / "inputs.csv"
    inputs.write_text('id;avg\n1;"892,38"\n', encoding="utf-8")
    assert _details(tmp_path, "892.38 366.36\n", inputs=[inputs]) == [f"1 {MID}"]


def test_a_long_line_of_spaced_numbers_is_one_pass_and_its_last_group_still_read(tmp_path: Path) -> None:
    text = " ".join(["123"] * 20000) + " 892,38\n" + " ".join(["456"] * 20000) + "\n12 366,36\n"
    assert _details(tmp_path, text) == [f"1 {AVG}", f"3 {MID}"]


def test_a_huge_exponent_is_just_another_number(tmp_path: Path) -> None:
    assert _details(tmp_path, "1e999999999999999999999999 8.9238e-99999999999 9" + "9" * 5000 + "e-3\n") == []


def test_hits_in_other_spellings_never_show_the_value(tmp_path: Path) -> None:
    ans = write_jsonl(tmp_path / "answers.jsonl", SEALED)
    (tmp_path / "t.md").write_text("8.9238e2 366,36 1 234.50\n", encoding="utf-8")
    hits = scan_leaks([ans], [tmp_path / "t.md"], key=["case"]).hits
    assert [h.detail for h in hits] == [AVG, MID, SUM]
    assert not any(v in h.detail + h.where.rsplit("/", 1)[-1] for h in hits for v in ("892", "366", "234"))
