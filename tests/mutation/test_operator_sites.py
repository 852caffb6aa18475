"""Exactly which mutants each operator makes of a snippet: the operator, the bug class, the replaced text and its
replacement, where it is and the lines a case must run; nothing more. Also which files are code, the ids, the
grouping by class and the judge's concrete edits."""

from __future__ import annotations

import locale
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import libcst as cst
import pytest

from tri_agent.mutation._operators import (
    OPERATORS,
    Instance,
    Operator,
    Site,
    concrete,
    instances,
    operator_classes,
    python_files,
    walk,
)

ALL = sorted(operator_classes())
VALIDATION = ["blank-lines", "format-check-skipped", "validation-skipped"]

# (operator, bug class, original, replacement, start, end, reach)
Made = tuple[str, str, str, str, tuple[int, int], tuple[int, int], tuple[int, int]]

ROUNDING = ("a = q(rounding=ROUND_HALF_UP)\n"
            "b = q(rounding=decimal.ROUND_FLOOR)\n"
            "c = q(rounding='ROUND_05UP')\n"
            'd = q(rounding="HALF_DOWN")\n'
            "e = q(rounding=UP)\n"  # a bare UP is some other name: the two usual modes
            "f = q(rounding=b'ROUND_UP')\n"  # bytes name no mode
            "g = q(rounding=ROUND_FOO)\n"
            "h = q(mode=ROUND_UP, x=ROUND_UP)\n"
            "i = q(ROUND_UP)\n")
ROUNDING_MADE: list[Made] = [
    ("rounding-swap", "rounding-mode", "ROUND_HALF_UP", '"ROUND_HALF_EVEN"', (1, 16), (1, 29), (1, 1)),
    ("rounding-swap", "rounding-mode", "ROUND_HALF_UP", '"ROUND_HALF_DOWN"', (1, 16), (1, 29), (1, 1)),
    ("rounding-swap", "rounding-mode", "decimal.ROUND_FLOOR", '"ROUND_CEILING"', (2, 16), (2, 35), (2, 2)),
    ("rounding-swap", "rounding-mode", "'ROUND_05UP'", '"ROUND_DOWN"', (3, 16), (3, 28), (3, 3)),
    ("rounding-swap", "rounding-mode", '"HALF_DOWN"', '"ROUND_HALF_UP"', (4, 16), (4, 27), (4, 4)),
    ("rounding-swap", "rounding-mode", "UP", '"ROUND_HALF_EVEN"', (5, 16), (5, 18), (5, 5)),
    ("rounding-swap", "rounding-mode", "UP", '"ROUND_HALF_UP"', (5, 16), (5, 18), (5, 5)),
    ("rounding-swap", "rounding-mode", "b'ROUND_UP'", '"ROUND_HALF_EVEN"', (6, 16), (6, 27), (6, 6)),
    ("rounding-swap", "rounding-mode", "b'ROUND_UP'", '"ROUND_HALF_UP"', (6, 16), (6, 27), (6, 6)),
    ("rounding-swap", "rounding-mode", "ROUND_FOO", '"ROUND_HALF_EVEN"', (7, 16), (7, 25), (7, 7)),
    ("rounding-swap", "rounding-mode", "ROUND_FOO", '"ROUND_HALF_UP"', (7, 16), (7, 25), (7, 7)),
]

NORMALISATION = ("a = x.strip()\n"
                 "b = x.lstrip('ab').upper()\n"
                 "c = str.lower(x)\n"
                 "d = str.strip(x, 'ab')\n"
                 "e = unicodedata.normalize('NFC', x)\n"
                 "f = x.normalize('NFC')\n"
                 "g = x.strip('\\ufeff')\n"  # a byte-order-mark step: the encoding operator's
                 "h = x.title()\n"
                 "i = strip(x)\n"
                 "j = str.lower()\n"
                 "k = x.replace(a, b)\n")
NORMALISATION_MADE: list[Made] = [
    ("normalisation-dropped", "strip-dropped", "x.strip()", "x", (1, 5), (1, 14), (1, 1)),
    ("normalisation-dropped", "case-fold", "x.lstrip('ab').upper()", "x.lstrip('ab')", (2, 5), (2, 27), (2, 2)),
    ("normalisation-dropped", "strip-dropped", "x.lstrip('ab')", "x", (2, 5), (2, 19), (2, 2)),
    ("normalisation-dropped", "case-fold", "str.lower(x)", "x", (3, 5), (3, 17), (3, 3)),
    ("normalisation-dropped", "strip-dropped", "str.strip(x, 'ab')", "x", (4, 5), (4, 23), (4, 4)),
    ("normalisation-dropped", "unicode-normalisation", "unicodedata.normalize('NFC', x)", "x", (5, 5), (5, 36),
     (5, 5)),
    ("normalisation-dropped", "unicode-normalisation", "unicodedata.normalize('NFC', x)",
     "unicodedata.normalize('NFD', x)", (5, 5), (5, 36), (5, 5)),  # the form swapped, its quotes kept
    ("encoding-skipped", "encoding", "x.strip('\\ufeff')", "x", (7, 5), (7, 22), (7, 7)),
]

BOUNDARY = "a = x<3\nb = 1 <= y  <  10\nc = x > 0 and x >= -1\nd = x == 1\n"
BOUNDARY_MADE: list[Made] = [
    ("boundary-shift", "boundary-shift", "<3", "<=3", (1, 6), (1, 8), (1, 1)),
    ("boundary-shift", "boundary-shift", " <= y", " < y", (2, 6), (2, 11), (2, 2)),
    ("boundary-shift", "boundary-shift", "  <  10", "  <=  10", (2, 11), (2, 18), (2, 2)),
    ("boundary-shift", "boundary-shift", " > 0", " >= 0", (3, 6), (3, 10), (3, 3)),
    ("boundary-shift", "boundary-shift", " >= -1", " > -1", (3, 16), (3, 22), (3, 3)),
]

OFF_BY_ONE = ("n = len(x)\nm = len(x, y)\nr = range(n)\nr = range(1, n)\nr = range(1, n, 2)\n"
              "s = x[1:]\nt = x[:-1]\nu = x[a:b]\nv = x[::2]\nw = x[0]\nz = foo.len(x)\n")
OFF_BY_ONE_MADE: list[Made] = [
    ("off-by-one", "off-by-one", "len(x)", "(len(x) + 1)", (1, 5), (1, 11), (1, 1)),
    ("off-by-one", "off-by-one", "n", "(n + 1)", (3, 11), (3, 12), (3, 3)),
    ("off-by-one", "off-by-one", "n", "(n + 1)", (4, 14), (4, 15), (4, 4)),
    ("off-by-one", "off-by-one", "n", "(n + 1)", (5, 14), (5, 15), (5, 5)),
    ("off-by-one", "off-by-one", "1", "(1 + 1)", (6, 7), (6, 8), (6, 6)),
    ("off-by-one", "off-by-one", "-1", "(-1 - 1)", (7, 8), (7, 10), (7, 7)),
    ("off-by-one", "off-by-one", "a", "(a + 1)", (8, 7), (8, 8), (8, 8)),
    ("off-by-one", "off-by-one", "b", "(b - 1)", (8, 9), (8, 10), (8, 8)),
]

ROWS = "out.append(x)\nout.add(x)\nw.writerow(r)\nout.update(x)\nappend(x)\ny = out.append(x)\nf().write(x)\n"
ROWS_MADE: list[Made] = [
    ("row-dropped", "missing-total", "out.append(x)", "pass", (1, 1), (1, 14), (1, 1)),
    ("row-dropped", "missing-total", "out.add(x)", "pass", (2, 1), (2, 11), (2, 2)),
    ("row-dropped", "missing-total", "w.writerow(r)", "pass", (3, 1), (3, 14), (3, 3)),
    ("row-dropped", "missing-total", "f().write(x)", "pass", (7, 1), (7, 13), (7, 7)),
]

FUNCTIONS = ("def f(x):\n"
             "    out = []\n"
             "    for c in x:\n"
             "        out.append(c)\n"
             "\n"
             "    # the tail\n"
             "    if x:\n"
             "        out.sort()\n"
             "        log(out)\n"
             "    return out\n"
             "\n"
             "\n"
             "def g(x):\n"  # ends with no return
             "    for c in x: pass\n"
             "    y = 1\n"
             "\n"
             "\n"
             "def h(x):\n"  # returns nothing
             "    with x: pass\n"
             "    return\n"
             "\n"
             "\n"
             "def k(x):\n"  # no block to return before
             "    return x\n"
             "\n"
             "\n"
             "def m(x):\n"  # ends with a block
             "    while x: pass\n"
             "    try: pass\n"
             "    finally: pass\n"
             "\n"
             "\n"
             "def n(x): return x\n")
FUNCTIONS_MADE: list[Made] = [
    ("early-return", "early-return", "\n    # the tail\n    if x:\n        out.sort()\n        log(out)",
     "    return out\n\n    # the tail\n    if x:\n        out.sort()\n        log(out)", (5, 1), (9, 17), (7, 9)),
    ("loop-cut", "early-return", "out.append(c)", "out.append(c)\n        break", (4, 9), (4, 22), (4, 4)),
    ("row-dropped", "missing-total", "out.append(c)", "pass", (4, 9), (4, 22), (4, 4)),
    ("order-lost", "order-lost", "out.sort()", "pass", (8, 9), (8, 19), (8, 8)),
    ("loop-cut", "early-return", "pass", "pass; break", (14, 17), (14, 21), (14, 14)),
    ("loop-cut", "early-return", "pass", "pass; break", (28, 14), (28, 18), (28, 28)),
]

LOOPS = "for c in x:\n    a(c)\n    b(c)\nwhile x:\n    x -= 1\nfor c in x: a(c); b(c)\n"
LOOPS_MADE: list[Made] = [
    ("loop-cut", "early-return", "a(c)\n    b(c)", "a(c)\n    b(c)\n    break", (2, 5), (3, 9), (2, 2)),
    ("loop-cut", "early-return", "x -= 1", "x -= 1\n    break", (5, 5), (5, 11), (5, 5)),
    ("loop-cut", "early-return", "a(c); b(c)", "a(c); b(c); break", (6, 13), (6, 23), (6, 6)),
]

HANDLERS = ("try:\n"
            "    a()\n"
            "except ValueError:\n"
            "    log()\n"
            "    raise\n"
            "except KeyError:\n"  # a block inside: its first line is no stop
            "    if x:\n"
            "        z = 1\n"
            "except OSError:\n"
            "    sys.exit(1)\n"
            "except TypeError:\n"
            "    pass\n"
            "except ZeroDivisionError: return 0\n"
            "except: y = 1\n")
HANDLERS_MADE: list[Made] = [
    ("exception-swallowed", "swallowed-exception", "log()\n    raise", "pass", (4, 5), (5, 10), (4, 4)),
    ("exception-swallowed", "swallowed-exception", "sys.exit(1)", "pass", (10, 5), (10, 16), (10, 10)),
    ("exception-swallowed", "swallowed-exception", "return 0", "pass", (13, 27), (13, 35), (13, 13)),
]

CHECKS = ("def f(rows):\n"
          "    for r in rows:\n"
          "        if not r:\n"
          "            continue\n"
          "        if r < 0:\n"
          "            raise ValueError(r)\n"
          "        if r == 9:\n"  # the first line does not stop
          "            log(r)\n"
          "            return\n"
          "        if r == 5:\n"
          "            print(r)\n"
          "            break\n"
          "        if r == 6:\n"
          "            y = 1\n"
          "        if r == 7:\n"
          "            for q in r:\n"
          "                pass\n"
          "        if r == 8:\n"
          "            exit(2)\n"
          "        if r == 3: os._exit(1)\n"
          "        if r == 4: continue\n"
          "        if r == 2: sys.exit\n"
          "keep = [c for c in x if c]\n"
          "both = [c for c in x if c if d]\n"
          "plain = {c for c in x}\n")
CHECKS_MADE: list[Made] = [
    ("validation-skipped", "blank-lines", "not r", "(not r) and False", (3, 12), (3, 17), (4, 4)),
    ("validation-skipped", "validation-skipped", "r < 0", "(r < 0) and False", (5, 12), (5, 17), (6, 6)),
    ("validation-skipped", "validation-skipped", "r == 8", "(r == 8) and False", (18, 12), (18, 18), (19, 19)),
    ("validation-skipped", "validation-skipped", "r == 3", "(r == 3) and False", (20, 12), (20, 18), (20, 20)),
    ("validation-skipped", "blank-lines", "r == 4", "(r == 4) and False", (21, 12), (21, 18), (21, 21)),
    ("validation-skipped", "blank-lines", " for c in x if c", " for c in x", (23, 10), (23, 26), (23, 23)),
    ("validation-skipped", "blank-lines", " for c in x if c if d", " for c in x", (24, 10), (24, 31), (24, 24)),
]

PRECISION = ("a = Decimal(x).quantize(q)\nb = decimal.Decimal(x)\nc = Decimal('1.5')\nd = Decimal(1)\n"
             "e = Decimal(1.5)\nf = Decimal(x, ctx)\ng = quantize(x)\nh = x.y.Decimal(z)\n")
PRECISION_MADE: list[Made] = [
    ("precision-lost", "precision", "Decimal(x).quantize(q)", "Decimal(x)", (1, 5), (1, 27), (1, 1)),
    ("precision-lost", "precision", "Decimal(x)", "Decimal(float(x))", (1, 5), (1, 15), (1, 1)),
    ("precision-lost", "precision", "decimal.Decimal(x)", "decimal.Decimal(float(x))", (2, 5), (2, 23), (2, 2)),
]

ORDER = "a = sorted(x, key=k)\nx.sort()\ny = x.sort()\nb = sorted()\nc = foo.sorted(x)\nd = [c for c in x]\n" \
        "e = (c for c in x)\n"
ORDER_MADE: list[Made] = [
    ("order-lost", "order-lost", "sorted(x, key=k)", "list(x)", (1, 5), (1, 21), (1, 1)),
    ("order-lost", "order-lost", "x.sort()", "pass", (2, 1), (2, 9), (2, 2)),
    ("duplicates-merged", "duplicates-merged", "[c for c in x]", "list(dict.fromkeys([c for c in x]))", (6, 5),
     (6, 19), (6, 6)),
]

ENCODING = ('a = open(p, encoding="utf-8-sig")\nb = x.decode("UTF_8_SIG")\nc = x.decode("utf-16")\n'
            'd = open(p, encoding="utf8")\ne = open(p, encoding="UTF-8")\nf = open(p, encoding="latin-1")\n'
            'g = x.replace("\\ufeff", "")\nh = b"utf-8-sig"\ni = f"utf-8-sig"\nj = decode(x, encoding=u"utf-8")\n'
            'k = open(p, mode="utf-8")\nl = open(p, encoding=enc)\nm = "\\ufeff"\nn = lstrip(x, "\\ufeff")\n')
ENCODING_MADE: list[Made] = [
    ("encoding-skipped", "encoding", '"utf-8-sig"', '"utf-8"', (1, 22), (1, 33), (1, 1)),
    ("encoding-skipped", "encoding", '"UTF_8_SIG"', '"utf-8"', (2, 14), (2, 25), (2, 2)),
    ("encoding-skipped", "encoding", '"utf-16"', '"utf-16-le"', (3, 14), (3, 22), (3, 3)),
    ("encoding-skipped", "encoding", '"utf8"', '"latin-1"', (4, 22), (4, 28), (4, 4)),
    ("encoding-skipped", "encoding", '"UTF-8"', '"latin-1"', (5, 22), (5, 29), (5, 5)),
    ("encoding-skipped", "encoding", 'x.replace("\\ufeff", "")', "x", (7, 5), (7, 28), (7, 7)),
    ("encoding-skipped", "encoding", 'u"utf-8"', '"latin-1"', (10, 24), (10, 32), (10, 10)),
]


def _pick(made: list[Made], *operators: str) -> list[Made]:
    return [m for m in made if m[0] in operators]


# (snippet, the menu of bug classes, every mutant made, in order)
STATUS = ("a = JSONResponse({}, status_code=403)\n"
          "b = Response(status=201)\n"
          "c = f(status_code=999)\n"  # no status it is confused with
          "d = f(status_code=code)\n"  # not a literal
          "e = f(403)\n"  # not given by keyword
          "g = f(code=404)\n")
STATUS_MADE: list[Made] = [
    ("status-swapped", "wrong-status", "403", "401", (1, 34), (1, 37), (1, 1)),
    ("status-swapped", "wrong-status", "201", "200", (2, 21), (2, 24), (2, 2)),
]
WRITES = ("db.execute('insert into drafts values (?)', (v,))\n"
          "db.executemany(\"  UPDATE t SET a = 1\")\n"
          "db.execute('select 1')\n"  # a read
          "db.execute(sql)\n"  # not a literal
          "rows = db.execute('delete from t')\n"  # its result is used: not a statement of its own
          "db.execute(f'delete from {t}')\n")  # an f-string is not a plain literal
WRITES_MADE: list[Made] = [
    ("write-dropped", "write-dropped", "db.execute('insert into drafts values (?)', (v,))", "pass", (1, 1), (1, 50),
     (1, 1)),
    ("write-dropped", "write-dropped", 'db.executemany("  UPDATE t SET a = 1")', "pass", (2, 1), (2, 39), (2, 2)),
]
# the api preset's classes, realised through ALIASES by the sites of general ones
ALIASED = "if user != owner:\n    return deny()\nx = q(rounding=ROUND_HALF_UP)\ny = items[start:end]\n"

TABLE = {
    "status": (STATUS, ALL, STATUS_MADE),
    "writes": (WRITES, ALL, WRITES_MADE),
    "writes as state lost": (WRITES, ["state-lost-on-expiry"],
                             [(o, "state-lost-on-expiry", *rest) for o, _, *rest in WRITES_MADE]),
    "the gui preset's aliases": (ALIASED, ["server-validation-missing", "wrong-value-shown"], [
        ("validation-skipped", "server-validation-missing", "user != owner", "(user != owner) and False", (1, 4),
         (1, 17), (2, 2)),
        ("off-by-one", "wrong-value-shown", "start", "(start + 1)", (4, 11), (4, 16), (4, 4)),
        ("off-by-one", "wrong-value-shown", "end", "(end - 1)", (4, 17), (4, 20), (4, 4))]),
    "aliases": (ALIASED, ["auth-check-dropped", "money-rounding", "page-off-by-one"], [
        ("validation-skipped", "auth-check-dropped", "user != owner", "(user != owner) and False", (1, 4), (1, 17),
         (2, 2)),
        ("rounding-swap", "money-rounding", "ROUND_HALF_UP", '"ROUND_HALF_EVEN"', (3, 16), (3, 29), (3, 3)),
        ("rounding-swap", "money-rounding", "ROUND_HALF_UP", '"ROUND_HALF_DOWN"', (3, 16), (3, 29), (3, 3)),
        ("off-by-one", "page-off-by-one", "start", "(start + 1)", (4, 11), (4, 16), (4, 4)),
        ("off-by-one", "page-off-by-one", "end", "(end - 1)", (4, 17), (4, 20), (4, 4)),
    ]),
    "aliases beside their own classes": (ALIASED, ["idempotency-ignored", "validation-skipped", "auth-check-dropped"],
                                         [("validation-skipped", "validation-skipped", "user != owner",
                                           "(user != owner) and False", (1, 4), (1, 17), (2, 2))]),
    "rounding": (ROUNDING, ALL, ROUNDING_MADE),
    "normalisation": (NORMALISATION, ALL, NORMALISATION_MADE),
    "boundary": (BOUNDARY, ALL, BOUNDARY_MADE),
    "boundary as off-by-one": (BOUNDARY, ["off-by-one"],
                               [(o, "off-by-one", *rest) for o, _, *rest in BOUNDARY_MADE]),
    "off-by-one": (OFF_BY_ONE, ALL, OFF_BY_ONE_MADE),
    "rows": (ROWS, ALL, ROWS_MADE),
    "rows as fields": (ROWS, ["field-dropped"], [(o, "field-dropped", *rest) for o, _, *rest in ROWS_MADE]),
    "functions": (FUNCTIONS, ALL, FUNCTIONS_MADE),
    "loops": (LOOPS, ALL, LOOPS_MADE),
    "handlers": (HANDLERS, ALL, HANDLERS_MADE),
    "handlers as validation": (HANDLERS, ["validation-skipped"],
                               [(o, "validation-skipped", *rest) for o, _, *rest in HANDLERS_MADE]),
    "checks": (CHECKS, VALIDATION, CHECKS_MADE),
    "checks, format only": (CHECKS, ["format-check-skipped"],
                            [(o, "format-check-skipped", *rest) for o, c, *rest in CHECKS_MADE
                             if c == "validation-skipped"]),
    "checks, validation only": (CHECKS, ["validation-skipped"],
                                [(o, "validation-skipped", *rest) for o, _, *rest in CHECKS_MADE]),
    "precision": (PRECISION, ALL, PRECISION_MADE),
    "order": (ORDER, ALL, ORDER_MADE),
    "order only": (ORDER, ["order-lost"], _pick(ORDER_MADE, "order-lost")),
    "encoding": (ENCODING, ALL, ENCODING_MADE),
}


def _made(tmp_path: Path, source: str, menu: list[str]) -> list[Instance]:
    (tmp_path / "m.py").write_text(source)
    return instances(tmp_path, menu)


def _offset(text: str, where: tuple[int, int]) -> int:
    return sum(len(line) + 1 for line in text.split("\n")[:where[0] - 1]) + where[1] - 1


@pytest.mark.parametrize("name", sorted(TABLE))
def test_each_operator_makes_exactly_its_mutants(name: str, tmp_path: Path) -> None:
    source, menu, expected = TABLE[name]
    made = _made(tmp_path, source, menu)
    assert [(i.operator, i.bug_class, i.original, i.replacement, i.start, i.end, i.reach) for i in made] == expected
    for i in made:  # the replacement put over [start, end) is the mutated file, which is valid Python
        start, end = _offset(source, i.start), _offset(source, i.end)
        assert source[start:end] == i.original and i.mutated == source[:start] + i.replacement + source[end:]
        cst.parse_module(i.mutated)
        assert i.file == "m.py" and re.fullmatch(rf"{re.escape(i.operator)}:m\.py:[0-9a-f]{{10}}", i.id)


def test_the_table_covers_every_operator() -> None:
    assert {m[0] for _, _, made in TABLE.values() for m in made} == set(OPERATORS)
    assert operator_classes() == {
        "rounding-mode", "strip-dropped", "case-fold", "unicode-normalisation", "boundary-shift", "off-by-one",
        "missing-total", "field-dropped", "early-return", "swallowed-exception", "validation-skipped",
        "format-check-skipped", "blank-lines", "precision", "order-lost", "duplicates-merged", "encoding",
        "wrong-status", "auth-check-dropped", "idempotency-ignored", "page-off-by-one", "money-rounding",
        "write-dropped", "state-lost-on-expiry", "server-validation-missing", "duplicate-on-double-submit",
        "wrong-value-shown"}


def test_ids_are_pinned_and_the_same_edit_twice_is_two_mutants(tmp_path: Path) -> None:
    made = _made(tmp_path, "a = sorted(x)\nb = sorted(x)\n", ["order-lost"])
    assert [i.id for i in made] == ["order-lost:m.py:522c03ec1a", "order-lost:m.py:ea2903bcea"]
    assert [i.mutated for i in made] == ["a = list(x)\nb = sorted(x)\n", "a = sorted(x)\nb = list(x)\n"]


def test_only_wanted_operators_run_and_imports_are_never_visited(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, list[str]] = {"names": [], "other": []}

    def names(node: cst.CSTNode) -> list[Site]:
        if isinstance(node, cst.Name):
            seen["names"].append(node.value)
        return []

    def other(node: cst.CSTNode) -> list[Site]:
        seen["other"].append(type(node).__name__)
        return []

    monkeypatch.setitem(OPERATORS, "names", Operator("names", ("spy",), "every name", names))
    monkeypatch.setitem(OPERATORS, "other", Operator("other", ("elsewhere",), "never wanted", other))
    (tmp_path / "m.py").write_text("import os\nfrom decimal import ROUND_UP as up\nx = os.sep\n")
    assert instances(tmp_path, ["spy"]) == []
    assert seen == {"names": ["x", "os", "sep"], "other": []}


def test_python_files_leave_out_tests_caches_environments_links_and_folders(tmp_path: Path) -> None:
    for rel in ("a.py", "pkg/b.py", "pkg/test_b.py", "pkg/b_test.py", "pkg/conftest.py", "tests/c.py",
                "pkg/__pycache__/d.py", ".venv/e.py", "z.py", "notes.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    (tmp_path / "odd.py").mkdir()
    (tmp_path / "link.py").symlink_to(tmp_path / "a.py")
    assert python_files(tmp_path) == ["a.py", "pkg/b.py", "z.py"]


def test_instances_read_every_file_given_and_skip_what_is_not_python(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text("a = sorted(x)\n")
    (tmp_path / "b.py").write_text("b = sorted(y)\n")
    (tmp_path / "broken.py").write_text("def (:\n")
    (tmp_path / "latin.py").write_bytes(b"c = sorted(z)  # \xe9\n")
    made = instances(tmp_path, ["order-lost"], files=["test_a.py", "broken.py", "latin.py", "gone.py", "b.py"])
    assert [(i.file, i.original) for i in made] == [("test_a.py", "sorted(x)"), ("b.py", "sorted(y)")]
    assert [i.file for i in instances(tmp_path, ["order-lost"])] == ["b.py"]


@contextmanager
def _ascii_locale() -> Iterator[None]:
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")  # ASCII, unless Python runs in UTF-8 mode: a default-encoding read fails
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)


def test_files_are_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a = sorted(x)  # café\n", encoding="utf-8")
    with _ascii_locale():
        made = instances(tmp_path, ["order-lost"])
        judge = concrete(tmp_path, "m.py", "j", "bounds", "café", "cafe")
    assert [i.original for i in made] == ["sorted(x)"]
    assert isinstance(judge, Instance) and judge.mutated == "a = sorted(x)  # cafe\n"


def test_walk_groups_by_class_in_first_seen_order(tmp_path: Path) -> None:
    made = _made(tmp_path, "a = sorted(x)\nb = len(x)\nc = sorted(y)\n", ["order-lost", "off-by-one"])
    assert [(cls, [i.original for i in group]) for cls, group in walk(made)] == [
        ("order-lost", ["sorted(x)", "sorted(y)"]), ("off-by-one", ["len(x)"])]


def test_a_judges_edit_on_one_line_is_placed_exactly(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a = 1\n\nb = 2 + 3\n")
    made = concrete(tmp_path, "m.py", "j1", "bounds", "2 + 3", "2 - 3")
    assert made == Instance(id="judge:j1", operator="judge", bug_class="bounds", file="m.py", start=(3, 5),
                            end=(3, 10), original="2 + 3", replacement="2 - 3", mutated="a = 1\n\nb = 2 - 3\n",
                            reach=(3, 3))


def test_a_judges_edit_over_lines_is_placed_exactly(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("a = 1\nb = [\n    1,\n    22,\n]\n")
    made = concrete(tmp_path, "m.py", "j2", "bounds", "[\n    1,\n    22", "[22")
    assert made == Instance(id="judge:j2", operator="judge", bug_class="bounds", file="m.py", start=(2, 5),
                            end=(4, 7), original="[\n    1,\n    22", replacement="[22", mutated="a = 1\nb = [22,\n]\n",
                            reach=(2, 4))


def test_a_judges_edit_reads_undecodable_bytes_as_replacement_characters(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_bytes(b"a = '\xff'\nb = 1\n")
    made = concrete(tmp_path, "m.py", "j", "bounds", "b = 1", "b = 2")
    assert isinstance(made, Instance) and made.mutated == "a = '\ufffd'\nb = 2\n" and made.start == (2, 1)


def test_a_judges_edit_applies_only_to_a_regular_file_inside_the_target(tmp_path: Path) -> None:
    base = tmp_path / "base"
    (base / "pkg").mkdir(parents=True)
    (base / "m.py").write_text("a = 1\n")
    (tmp_path / "outside.py").write_text("a = 1\n")
    (base / "link.py").symlink_to(base / "m.py")
    for rel in ("../outside.py", "pkg", "link.py", "gone.py"):
        assert concrete(base, rel, "j", "bounds", "a = 1", "a = 2") == f"file {rel!r} is not a file of the target"
    assert concrete(base, "m.py", "j", "bounds", "b", "c") == \
        "its text occurs 0 times in m.py (must be once): written for other code"
