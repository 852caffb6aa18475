"""The target file's extract rule: how a case's rows are read from what the run wrote."""

from __future__ import annotations

from pathlib import Path

from tri_agent.exam._formats import Extract
from tri_agent.targets._target import extract_rows


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
