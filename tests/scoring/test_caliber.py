"""Caliber loading: every mistake is one line with file:line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from tri_agent import MalformedInput, UsageError, load_caliber


@pytest.mark.parametrize("text,line,message", [
    ("schema_version: 1\nkey: [k]\nfields:\n  v: money\n", 4, "fields.v.class"),
    ("schema_version: 1\nkey: [k]\nfields: {v: amount}\nfields: {w: text}\n", 4, "repeated"),
    ("schema_version: 2\nkey: [k]\nfields: {v: amount}\n", 1, "schema_version"),
    ("schema_version: 1\nkey: []\nfields: {v: amount}\n", 2, "key"),
    ("schema_version: 1\nkey: [k]\nfields:\n  v: {class: text, values: [a]}\n", 4, "only meaningful for class status"),
    ("schema_version: 1\nkey: [k]\nfields: {v: amount}\nrelations:\n  - {name: r, kind: monotone, "
     "case_column: k, field: v, pairs: [[a, b]]}\n", 1, "monotone needs a count field"),
    ("schema_version: 1\nkey: [k]\nfields: {v: amount}\nbogus: 1\n", 4, "unknown key .bogus."),
    ("schema_version: 1\nkey: [k\n", 3, "not valid YAML"),
])
def test_bad_calibers(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = tmp_path / "cal.yaml"
    path.write_text(text)
    with pytest.raises(MalformedInput, match=message) as err:
        load_caliber(path)
    assert err.value.where == f"{path}:{line}"


def test_missing_caliber_is_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        load_caliber(tmp_path / "nope.yaml")


def test_shorthand_and_hash(tmp_path: Path) -> None:
    path = tmp_path / "cal.yaml"
    path.write_text("schema_version: 1\nkey: [k]\nfields: {v: amount, s: {class: status, values: [a, b]}}\n")
    caliber, sha = load_caliber(path)
    assert caliber.fields["v"].cls == "amount" and caliber.fields["s"].values == ["a", "b"]
    assert len(sha) == 64


BASE = "schema_version: 1\nkey: [k, g]\nfields: {v: amount, r: ratio, n: count, t: text}\nrelations:\n  - "


@pytest.mark.parametrize(("relation", "message"), [
    ("{name: s, kind: sum_of_parts, field: t, by: [k], parts: {where_not: {g: ALL}}, total: {where: {g: ALL}}}",
     "relation 's': sum_of_parts needs an amount, ratio or count field"),
    ("{name: s, kind: sum_of_parts, field: nope, by: [k], parts: {where_not: {g: ALL}}, total: {where: {g: ALL}}}",
     "relation 's' uses field 'nope', which 'fields' does not declare"),
    ("{name: e, kind: equal_pair, case_column: k, pairs: [[a, b]], fields: [v, gone]}",
     "relation 'e' uses field 'gone', which 'fields' does not declare"),
    ("{name: m, kind: monotone, case_column: k, field: t, pairs: [[a, b]]}", "relation 'm': monotone needs a count"),
])
def test_a_relation_must_use_declared_fields_of_a_fitting_class(tmp_path: Path, relation: str, message: str) -> None:
    path = tmp_path / "cal.yaml"
    path.write_text(BASE + relation + "\n")
    with pytest.raises(MalformedInput) as err:
        load_caliber(path)
    assert message in err.value.message


@pytest.mark.parametrize("field", ["v", "r", "n"])
def test_sum_of_parts_takes_amount_ratio_and_count_fields(tmp_path: Path, field: str) -> None:
    path = tmp_path / "cal.yaml"
    path.write_text(BASE + f"{{name: s, kind: sum_of_parts, field: {field}, by: [k], parts: {{where_not: {{g: ALL}}}}, "
                           "total: {where: {g: ALL}}}\n")
    assert load_caliber(path)[0].relations[0].name == "s"


def test_a_column_written_as_a_regular_expression_is_refused_by_name(tmp_path: Path) -> None:
    # polars reads a column name ^...$ as a pattern: it matched the actual table's ^extra too, and the join crashed
    (tmp_path / "c.yaml").write_text("schema_version: 1\nkey: ['^\\\\^.*$']\nfields: {v: text}\n")
    with pytest.raises(MalformedInput, match=r"regular expression \(\^\.\.\.\$\): rename the column"):
        load_caliber(tmp_path / "c.yaml")
