"""Each semantic operator on a small snippet: it applies, the file stays valid Python, behaviour changes."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from tri_agent.mutation._menu import Menu
from tri_agent.mutation._operators import (
    OPERATORS,
    class_table,
    concrete,
    instances,
    mutability,
    operator_classes,
    python_files,
)

# operator -> (a module defining f, an argument on which some mutant of that operator changes f's result)
SNIPPETS: dict[str, tuple[str, Any]] = {
    "rounding-swap": ("from decimal import Decimal, ROUND_HALF_UP\n"
                      "def f(x):\n    return str(Decimal(x).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP))\n",
                      "0.25"),
    "normalisation-dropped": ("def f(x):\n    return x.strip().lower()\n", " A"),
    "boundary-shift": ("def f(x):\n    return x < 3\n", 3),
    "off-by-one": ("def f(x):\n    return len(x[1:])\n", "abc"),
    "row-dropped": ("def f(x):\n    out = []\n    out.append(x)\n    return out\n", "a"),
    "early-return": ("def f(x):\n    out = []\n    for c in x:\n        out.append(c)\n    return out\n", "ab"),
    "loop-cut": ("def f(x):\n    out = []\n    for c in x:\n        out.append(c)\n    return out\n", "ab"),
    "exception-swallowed": ("def f(x):\n    try:\n        v = int(x)\n    except ValueError:\n"
                            "        raise SystemExit('bad')\n    return 1\n", "z"),
    "validation-skipped": ("def f(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x\n", -1),
    "precision-lost": ("from decimal import Decimal\ndef f(x):\n    return str(Decimal(x).quantize(Decimal('0.1')))\n",
                       "1.26"),
    "order-lost": ("def f(x):\n    return sorted(x)\n", "ba"),
    "duplicates-merged": ("def f(x):\n    return [c for c in x]\n", "aa"),
    "encoding-skipped": ("def f(x):\n    return x.decode('utf-8-sig')\n", b"\xef\xbb\xbfa"),
    "status-swapped": ("def f(x):\n    return dict(status_code=403, body=x)\n", "no"),
    "write-dropped": ("import sqlite3\ndef f(x):\n    db = sqlite3.connect(':memory:')\n"
                      "    db.execute('create table t(v)')\n    db.execute('insert into t values (?)', (x,))\n"
                      "    db.execute('select 1')\n    return db.execute('select count(*) from t').fetchone()\n", "a"),
}


def _call(source: str, arg: Any) -> str:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<snippet>", "exec"), namespace)
    try:
        return repr(namespace["f"](arg))
    except BaseException as exc:
        return f"raised {type(exc).__name__}"


def test_the_table_has_a_snippet_for_every_operator() -> None:
    assert set(SNIPPETS) == set(OPERATORS)


@pytest.mark.parametrize("op_id", sorted(SNIPPETS))
def test_operator_applies_stays_valid_and_changes_behaviour(op_id: str, tmp_path: Path) -> None:
    source, arg = SNIPPETS[op_id]
    (tmp_path / "m.py").write_text(source)
    made = [i for i in instances(tmp_path, sorted(operator_classes())) if i.operator == op_id]
    assert made, f"{op_id} found no site"
    for i in made:
        ast.parse(i.mutated)  # every mutant is valid Python
        assert i.mutated != source and i.original in source and 1 <= i.start[0] <= i.reach[1]
    original = _call(source, arg)
    assert any(_call(i.mutated, arg) != original for i in made), f"no {op_id} mutant changes f({arg!r})"


def test_ids_are_stable_and_name_the_edit_not_the_line(tmp_path: Path) -> None:
    source = SNIPPETS["order-lost"][0]
    (tmp_path / "m.py").write_text(source)
    first = {i.id for i in instances(tmp_path, ["order-lost"])}
    (tmp_path / "m.py").write_text("\n\n# moved down\n" + source)
    assert {i.id for i in instances(tmp_path, ["order-lost"])} == first


def test_comments_strings_and_imports_are_never_mutated(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text('"""Reads utf-8-sig with rounding=ROUND_HALF_UP; sorted(x) strips."""\n'
                                   "from decimal import ROUND_HALF_UP  # x.strip() < 3 sorted(y)\n"
                                   "NOTE = 'x.strip() and sorted(y)'\n")
    assert instances(tmp_path, sorted(operator_classes())) == []


def test_only_the_menus_classes_are_instantiated_and_tests_are_not_code(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(SNIPPETS["order-lost"][0] + SNIPPETS["duplicates-merged"][0].replace("f(", "g("))
    (tmp_path / "test_m.py").write_text(SNIPPETS["order-lost"][0])
    made = instances(tmp_path, ["order-lost"])
    assert [i.bug_class for i in made] == ["order-lost"] and made[0].file == "m.py"


def test_a_judges_concrete_edit_applies_once_or_says_why_not(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a = 1\nb = 1\n")
    made = concrete(tmp_path, "m.py", "x", "bounds", "a = 1", "a = 2")
    assert not isinstance(made, str) and made.mutated == "a = 2\nb = 1\n" and made.start == (1, 1)
    assert "2 times" in str(concrete(tmp_path, "m.py", "x", "bounds", "= 1", "= 2"))
    assert "not a file" in str(concrete(tmp_path, "../m.py", "x", "bounds", "a", "b"))


def test_a_write_dropped_is_a_write_never_a_read_or_a_schema_change(tmp_path: Path) -> None:
    source, _ = SNIPPETS["write-dropped"]
    (tmp_path / "m.py").write_text(source + "def g(db, sql):\n    db.execute(sql)\n    db.execute(b'delete')\n")
    made = [i for i in instances(tmp_path, ["state-lost-on-expiry"]) if i.operator == "write-dropped"]
    assert [i.original for i in made] == ["db.execute('insert into t values (?)', (x,))"]
    assert made[0].bug_class == "state-lost-on-expiry"


def test_the_menus_include_and_exclude_scope_where_mutants_are_made(tmp_path: Path) -> None:
    """Before: every Python file of the target was mutated, a CLI module and a vendored library included."""
    source = SNIPPETS["order-lost"][0]
    for rel in ("ledger/core.py", "ledger/cli.py", "vendor/units/conv.py", "app.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(source)
    assert {i.file for i in instances(tmp_path, ["order-lost"])} == {"ledger/core.py", "ledger/cli.py",
                                                                      "vendor/units/conv.py", "app.py"}
    scoped = instances(tmp_path, ["order-lost"], scope=(("ledger/*", "app.py"), ("*/cli.py",)))
    assert {i.file for i in scoped} == {"ledger/core.py", "app.py"}
    assert mutability(tmp_path, ["order-lost"], (("vendor/*",), ()))["order-lost"] == ["vendor/units/conv.py:2"]
    menu = Menu.model_validate({"classes": [{"id": "order-lost", "clause": "sorted"}], "include": ["ledger/*"],
                                "exclude": ["ledger/cli.py"]})
    assert python_files(tmp_path, menu.scope()) == ["ledger/core.py"]


def test_the_docs_list_every_bug_class_and_the_operators_behind_it() -> None:
    from conftest import TOY

    text = (TOY.parents[1] / "docs" / "authoring.md").read_text(encoding="utf-8")
    start = text.index("<!-- bug-classes:")
    section = text[text.index("\n", start) + 1:text.index("<!-- /bug-classes -->")]
    assert section == class_table(), "docs/authoring.md: regenerate the bug-classes table from class_table()"
    for cls in operator_classes():
        assert f"| `{cls}` |" in section


def test_a_renderers_parts_can_be_dropped_a_pdf_cell_or_a_docx_paragraph(tmp_path: Path) -> None:
    (tmp_path / "render.py").write_text(
        "def pdf_page(pdf, items):\n    pdf.cell(0, 8, 'Invoice')\n    for item in items:\n"
        "        pdf.multi_cell(60, 8, item)\n    pdf.text(10, 10, 'total')\n"
        "def letter(doc, name):\n    doc.add_heading(name, 1)\n    doc.add_paragraph('Dear ' + name)\n"
        "    row = doc.tables[0].add_row()\n    pdf_width = doc.width(3)\n")
    made = [i for i in instances(tmp_path, ["field-dropped"]) if i.operator == "row-dropped"]
    assert sorted(i.original for i in made) == sorted([
        "pdf.cell(0, 8, 'Invoice')", "pdf.multi_cell(60, 8, item)", "pdf.text(10, 10, 'total')",
        "doc.add_heading(name, 1)", "doc.add_paragraph('Dear ' + name)"])  # an assignment is no emitted part
    assert all(i.bug_class == "field-dropped" for i in made)


def test_composed_and_decomposed_forms_are_swapped(tmp_path: Path) -> None:
    source = 'import unicodedata\ndef f(x):\n    return unicodedata.normalize("NFC", x)\n'
    (tmp_path / "m.py").write_text(source)
    made = [i for i in instances(tmp_path, ["unicode-normalisation"])]
    assert 'unicodedata.normalize("NFD", x)' in {i.mutated.splitlines()[2].strip().removeprefix("return ")
                                                for i in made}
    outcomes = {_call(i.mutated, "Cafe\u0301") for i in made}
    assert outcomes == {repr("Cafe\u0301")}  # each mutant leaves the decomposed name decomposed
    assert _call(source, "Cafe\u0301") == repr("Caf\u00e9")
