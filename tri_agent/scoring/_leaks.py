"""Leak scan: sealed answer values found where no sealed value should be.

A value is *distinctive* when it is long enough, not a trivially common token, not present in the
inputs the cases were built from, and not a category filling half the table; key columns (``--key``)
name rows and are not searched. JSON answers (objects, lists) are searched through their leaves.

Files are searched as raw text and through the strings they encode (JSON, Python and CSV string
literals), after Unicode NFC normalisation and with every line break read as ``\n``, so an answer
hidden as ``"M\\u00fcller"``, across lines (CRLF or not), inside doubled CSV quotes or in a partly
quoted CSV cell is still found. Numbers also match by value (``1234.5`` finds a sealed ``1234.50``) in their
usual spellings: an exponent (``1.2345e3``), a decimal comma (``1234,5``), grouped thousands (``1,234.5``,
``1.234,5``, ``1 234.5``, ``1_234.5``, ``1'234.5``) and the digits of any script (``１２３４.５``, ``١٢٣٤٫٥``);
only on number boundaries, and never inside a comma-separated run (``7,1234,5,9`` is a list, not ``1234.5``).
Text matches only on word boundaries. UTF-16 files are decoded, NUL bytes ignored. A symlink in a scanned
tree is itself a hit: it is how a workspace reaches a key.
A table handed in with ``--actual`` by a role is checked for *mirroring* the answer key instead
(byte-identical, or every answer column with identical cells in the same order). Hits name the
field and row that leaked, never the sealed value.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from .._errors import UsageError
from .._model import Record
from ._tables import ROW, read_table

_COMMON = frozenset({"true", "false", "null", "none", "yes", "no", "ok", "n/a", "nan", "error", "pass", "fail"})
_DQ = re.compile(r'"((?:[^"\\\n]|\\.)*)"')  # group 1: the literal's text as written
_SQ = re.compile(r"'((?:[^'\\\n]|\\.)*)'")
_NUMERIC = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?")
_NUMBER_TOKEN = re.compile(r"(?<![0-9.])[+-]?[0-9]+(?:\.[0-9]+)?(?![0-9]|\.[0-9])")


# A number in another spelling: digits grouped by one mark (1,234 1.234 1 234 1_234 1'234), a decimal point or
# comma, an exponent. The gate (a lookahead) lets through only numbers with such a spelling, the plain ones being
# _NUMBER_TOKEN's: a table of plain numbers costs one more regex pass, no Python per cell. A comma or grouping mark
# between digits at either edge makes the number part of a run (a CSV line, 5,892,38,7): no reading of its own.
_SPELLED = re.compile(
    r"(?=[0-9])(?<![0-9.])(?<![0-9][,_'])"  # a digit first: the engine skips words without trying the rest
    # possessive (*+): a gate that backtracked through a long run of digits would be quadratic in it
    r"(?=[0-9]*+(?:[,_'][0-9]|\.(?:[0-9]{3}(?![0-9])|[0-9]*+[eE][+-]?[0-9])|[eE][+-]?[0-9])"
    r"|[0-9]{1,3} [0-9]{3}(?![0-9]))"
    r"(?P<int>[0-9]{1,3}(?P<sep>[,._' ])[0-9]{3}(?:(?P=sep)[0-9]{3})*|[0-9]+)"
    r"(?:(?!(?P=sep))(?P<dec>[.,])(?P<frac>[0-9]+))?(?:[eE](?P<exp>[+-]?[0-9]+))?"
    r"(?![0-9]|[,._'][0-9])")


class LeakHit(Record):
    """One place where a sealed value (or the whole answer table) was found."""

    where: str = Field(description="file:line of the hit.")
    kind: Literal["value", "mirror", "symlink"] = Field(description="A distinctive value, a mirrored answer "
                                                                    "table, or a symlink in the scanned tree.")
    detail: str = Field(description="Which sealed cell matched (never its value), or where a symlink points.")


class LeakReport(Record):
    """Outcome of ``tri-agent leaks``; any hit is exit 6."""

    schema_version: Literal[1] = Field(default=1, description="Version of the leak report format.")
    distinctive_values: int = Field(description="Sealed values searched for.")
    files_scanned: int = Field(description="Regular files searched, plus the tables checked for mirroring.")
    hits: list[LeakHit] = Field(description="Sorted by file, line and detail.")

    def to_json(self) -> str:
        return json.dumps(self.model_dump(), sort_keys=True, indent=1, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class _Sealed:
    value: str
    origin: str  # "field 'avg' of row 3 (case=c-1a2b)"


def scan_leaks(answers: list[Path], paths: list[Path], *, inputs: list[Path] | None = None,
               actual: list[Path] | None = None, min_length: int = 4, key: list[str] | None = None,
               aside: frozenset[str] = frozenset()) -> LeakReport:
    """Search ``paths`` for distinctive sealed values and ``actual`` tables for mirrored answers. The rows of the
    ``aside`` cases are no secret here (a build's canaries: their answer is what an honest target writes, and their
    tickets quote it)."""
    if min_length < 1:
        raise UsageError(f"--min-length must be at least 1, got {min_length}")
    for table in actual or []:
        _require_file(table)
    sealed = _distinctive(answers, inputs or [], min_length, key or [], aside)
    files, links = _walk(paths)
    hits = [LeakHit(where=f"{p}:1", kind="symlink", detail=f"symlink to {os.readlink(p)!r}") for p in links]
    hits += [h for f in files for h in _scan_file(f, sealed)]
    hits += [h for t in actual or [] for h in _mirror_hits(t, answers)]
    hits.sort(key=lambda h: (_where_key(h.where), h.detail))
    return LeakReport(distinctive_values=len(sealed), files_scanned=len(files) + len(actual or []), hits=hits)


def _require_file(path: Path) -> None:
    if not path.is_file():
        raise UsageError(f"{path} is not a regular file", hint="pass the table to check for mirroring")


def _where_key(where: str) -> tuple[str, int]:
    path, _, line = where.rpartition(":")  # every hit is "file:line"
    return path, int(line)


def _distinctive(answers: list[Path], inputs: list[Path], min_length: int, key: list[str],
                 aside: frozenset[str] = frozenset()) -> list[_Sealed]:
    candidates: dict[str, _Sealed] = {}
    counts: Counter[str] = Counter()
    rows = 0
    for path in answers:
        table = read_table(path)
        kept = [r for r in table.frame.collect().to_dicts() if r.get("case") not in aside]
        rows += len(kept)
        for value, origin in _answer_values(kept, [c for c in table.columns if c not in key], key):
            counts[value] += 1
            candidates.setdefault(value, _Sealed(value, origin))
    keep = {
        v: s for v, s in candidates.items()
        if len(_normal(v)) >= min_length and v.lower() not in _COMMON and not (rows >= 4 and counts[v] * 2 >= rows)
    }
    matcher = _Matcher(list(keep))
    seen = {v for text in _texts_in(inputs) for _, v in matcher.find(text)}
    return [s for v, s in keep.items() if v not in seen]


def _answer_values(rows: list[dict[str, Any]], names: list[str], key: list[str]) -> Iterator[tuple[str, str]]:
    for row in rows:
        name_of_row = ", ".join(f"{k}={row.get(k)}" for k in key)
        where = f"row {row[ROW] + 1}" + (f" ({name_of_row})" if name_of_row else "")
        for name in names:
            value = row.get(name)
            if value is not None and value.strip():
                for leaf in _leaves(value.strip()):
                    yield _canon(leaf), f"field {name!r} of {where}"


def _leaves(value: str) -> list[str]:
    """A cell, or the scalar leaves of a JSON object or list (how json and set answers leak)."""
    if not value.startswith(("{", "[")):
        return [value]
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return [value]
    out: list[str] = []
    stack = [parsed]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack += list(item.values())
        elif isinstance(item, list):
            stack += item
        elif item is not None and not isinstance(item, bool):
            out.append(str(item))
    return out or [value]


def _normal(value: str) -> str:
    """A number's value as text (1234.50 -> 1234.5), anything else unchanged."""
    if not _NUMERIC.fullmatch(value):
        return value
    try:
        d = Decimal(value).normalize()
    except InvalidOperation:
        return value
    return "0" if d.is_zero() else format(d, "f")


class _Matcher:
    """All sealed values at once: text as one regex on word boundaries, numbers by value."""

    def __init__(self, values: list[str]) -> None:
        # keyed by Decimal: equal values hash alike (78.350, 7.835e1) and a huge exponent is never written out
        self._numbers = {Decimal(v): v for v in values if _NUMERIC.fullmatch(v)}
        self._figures = {_figures(v) for v in self._numbers.values()}
        words = sorted({v for v in values if v not in self._numbers.values()}, key=lambda v: (-len(v), v))
        self._re = re.compile("|".join(_bounded(v) for v in words)) if words else None

    def find(self, text: str) -> Iterator[tuple[int, str]]:
        if self._re is not None:
            for m in self._re.finditer(text):
                yield m.start(), m.group(0)
        if self._numbers:
            digits, figures = _fold_digits(text), self._figures  # same length: offsets (so lines) are the text's
            for m in _NUMBER_TOKEN.finditer(digits):
                # _figures inlined (no exponent here), the hot loop on a table of numbers; a Decimal's hash is slow
                if m.group(0).replace(".", "").strip("+-0") in figures:
                    yield from self._sealed(digits, m.start(), [m.group(0)])
            for m in _spelled(digits):
                start = m.start() - (m.start() > 0 and digits[m.start() - 1] in "+-")  # a sign, as _NUMBER_TOKEN's
                yield from self._sealed(digits, start, [digits[start:m.start()] + r for r in _readings(m)])

    def _sealed(self, text: str, start: int, readings: list[str]) -> Iterator[tuple[int, str]]:
        for token in readings:
            if _figures(token) not in self._figures:
                continue
            if not token[0].isdigit() and start and (text[start - 1].isalnum() or text[start - 1] == "_"):
                token = token[1:]  # "total-4096.50": a separator, not a sign (the hit's line is the same)
            try:
                sealed = self._numbers.get(Decimal(token))
            except InvalidOperation:  # an exponent past Decimal's range: no sealed value is that number
                continue
            if sealed is not None:
                yield start, sealed


def _figures(number: str) -> str:
    """The significant digits of a number (``+0892.380e-1`` -> ``89238``): equal values have equal figures."""
    return number.partition("e")[0].replace(".", "").strip("+-0")


def _spelled(text: str) -> Iterator[re.Match[str]]:
    """Every spelled number; after a space-grouped one, the one in its last group too (``12 892,38`` is also
    ``892,38``). Only the last: a long line of numbers spaced apart is one match, and rescanning each tail of it
    would be quadratic."""
    for m in _SPELLED.finditer(text):
        yield m
        if m["sep"] == " ":
            yield from _SPELLED.finditer(text, text.rindex(" ", m.start(), m.end()) + 1, m.end())


def _readings(m: re.Match[str]) -> list[str]:
    """The values a spelled number may stand for: ``1,234`` is 1234 with a thousands comma, 1.234 with a decimal one."""
    digits, sep = m["int"], m["sep"]
    tail = (f".{m['frac']}" if m["frac"] else "") + (f"e{m['exp']}" if m["exp"] else "")
    out = [digits.replace(sep, "") if sep else digits]
    if sep in (",", ".") and digits.count(sep) == 1 and not m["frac"]:
        out.append(digits.replace(sep, "."))
    return [d + tail for d in out]


_FOLD_EXTRA = {"\u066b": ".", "\u066c": ",", "\u2019": "'"}  # Arabic decimal and thousands marks; ’ (Swiss)
_FOLD_MARKS = frozenset(".,+-eE_' ")


class _DigitFold(dict[int, int]):
    """``str.translate`` table, filled as characters are met: a decimal digit of any script as its ASCII digit,
    and a mark that NFKC makes a number's ASCII mark (full-width ``．，＋ｅ``, no-break spaces) as that mark."""

    def __missing__(self, code: int) -> int:
        char = chr(code)
        digit = unicodedata.decimal(char, None)
        # only decimal digits: a superscript or circled digit is no digit of a number (10² is not 102, ①5 is 5)
        mark = _FOLD_EXTRA.get(char) or unicodedata.normalize("NFKC", char)
        self[code] = ord(str(digit)) if digit is not None else ord(mark) if mark in _FOLD_MARKS else code
        return self[code]


_FOLD = _DigitFold()


def _fold_digits(text: str) -> str:
    return text if text.isascii() else text.translate(_FOLD)


def _bounded(value: str) -> str:
    # "late" must not match inside "template": word characters at an edge need a word boundary there
    left = r"(?<!\w)" if value[:1].isalnum() else ""
    right = r"(?!\w)" if value[-1:].isalnum() else ""
    return left + re.escape(value) + right


def _texts_in(paths: list[Path]) -> list[str]:
    files, _ = _walk(paths)
    out = []
    for f in files:
        text = _read_text(f)
        out.append(text)
        out += [s for _, s in _decoded_strings(text, f)]
    return out


def _walk(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """Regular files under ``paths``, and the symlinks found there (never followed)."""
    files, links = set(), set()
    for path in paths:
        if path.is_symlink():
            links.add(path)
        elif path.is_file():
            files.add(path)
        elif path.is_dir():
            for root, dirs, names in os.walk(path):
                for name in [*dirs, *names]:
                    child = Path(root) / name
                    if child.is_symlink():
                        links.add(child)
                    elif child.is_file():
                        files.add(child)
        else:
            raise UsageError(f"{path} is neither a file nor a folder", hint="pass files or folders to scan")
    return sorted(files), sorted(links)


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16", errors="replace")
    else:
        text = data.replace(b"\0", b"").decode("utf-8", errors="replace")
    return _canon(text)


def _canon(text: str) -> str:
    """NFC, and every line break (``\\r\\n``, ``\\r``) as ``\\n``: a file's line endings do not hide a sealed value."""
    return unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")


def _scan_file(path: Path, sealed: list[_Sealed]) -> list[LeakHit]:
    if not sealed:
        return []
    text = _read_text(path)
    by_value = {s.value: s for s in sealed}
    matcher = _Matcher(list(by_value))
    found = list(matcher.find(text))
    for offset, value in _decoded_strings(text, path):
        found += [(offset, v) for _, v in matcher.find(value)]
    hits: dict[tuple[int, str], LeakHit] = {}
    for pos, value in found:
        line = text.count("\n", 0, pos) + 1
        hits.setdefault((line, value), LeakHit(where=f"{path}:{line}", kind="value", detail=by_value[value].origin))
    return list(hits.values())


def _decoded_strings(text: str, path: Path) -> list[tuple[int, str]]:
    """(offset in text, decoded value) of every string literal and CSV cell that decodes to something new."""
    out = []
    for pattern in (_DQ, _SQ):
        for m in pattern.finditer(text):
            value = _literal(m.group(0))
            if value is not None and value != m.group(1):
                out.append((m.start(), _canon(value)))
    if path.suffix.lower() == ".csv":
        out += _csv_cells(text)
    return out


def _literal(token: str) -> str | None:
    """The string a JSON or Python literal spells (``\\u00fc``, ``\\xfc``, ``\\N{...}``, octal...)."""
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(token)
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            continue
        if isinstance(value, str):
            return value
    return None


def _csv_cells(text: str) -> list[tuple[int, str]]:
    """(offset of its record, cell) of every CSV cell not written out as a plain field (quoted, partly quoted).

    A plain field is in the raw text between separators, where the raw scan finds it; any other cell may hide a
    value (``Kiwiz,"Ki"wi`` is the cells ``Kiwiz`` and ``Kiwi``).
    """
    out = []
    line_ends = [m.end() for m in re.finditer("\n", text)] + [len(text)]
    reader = csv.reader(io.StringIO(text))  # line breaks are already "\n" (_canon)
    start = 0
    try:
        for record in reader:
            end = line_ends[reader.line_num - 1]
            fields = f",{text[start:end]},".replace("\n", ",")  # a plain field is ",field," here
            out += [(start, cell) for cell in record if f",{cell}," not in fields]
            start = end
    except csv.Error:
        pass  # not really CSV: the raw and literal scans still ran
    return out


def _mirror_hits(table_path: Path, answers: list[Path]) -> list[LeakHit]:
    data = table_path.read_bytes()
    hits = []
    for answer in answers:
        if data == answer.read_bytes() or _same_cells(table_path, answer):
            hits.append(LeakHit(where=f"{table_path}:1", kind="mirror",
                                detail=f"mirrors the answer table {answer.name} cell for cell, in the same order"))
    return hits


def _same_cells(table_path: Path, answer: Path) -> bool:
    t, a = read_table(table_path), read_table(answer)
    if not set(a.columns) <= set(t.columns):
        return False
    left = t.frame.select(a.columns).collect()
    right = a.frame.select(a.columns).collect()
    return left.height > 0 and left.equals(right)
