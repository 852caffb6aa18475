"""Leak scan: sealed answer values found where no sealed value should be.

A value is *distinctive* when it is long enough, not a trivially common token, not present in the
inputs the cases were built from, and not a category that fills half the table. Files are searched
as raw text and through the strings they encode (JSON and Python string literals, CSV cells), after
Unicode NFC normalisation, so an answer hidden as ``"M\\u00fcller"``, across lines, or inside doubled
CSV quotes is still found. A table handed in as ``--actual`` is instead checked for *mirroring* the
answer key (byte-identical, or the same rows in the same order with every cell identical).
Hits never print the sealed value itself: only its field, row and a masked preview.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import polars as pl
from pydantic import BaseModel, Field

from ._errors import UsageError
from ._tables import ROW, read_table

_COMMON = frozenset({"true", "false", "null", "none", "yes", "no", "ok", "n/a", "nan", "error", "pass", "fail"})
_DQ = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_SQ = re.compile(r"'(?:[^'\\\n]|\\.)*'")
_NUMERIC = re.compile(r"[+-]?\d+(\.\d+)?")
_MAX_FILE = 64 << 20


class LeakHit(BaseModel):
    """One place where a sealed value (or the whole answer table) was found."""

    where: str = Field(description="file:line of the hit.")
    kind: Literal["value", "mirror"] = Field(description="A distinctive value, or a mirrored answer table.")
    detail: str = Field(description="Which sealed cell matched, with a masked preview of its value.")


class LeakReport(BaseModel):
    """Outcome of ``tri-agent leaks``; any hit is exit 6."""

    schema_version: Literal[1] = 1
    distinctive_values: int = Field(description="Sealed values searched for.")
    files_scanned: int
    hits: list[LeakHit] = Field(description="Sorted by file, line and detail.")

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, indent=1, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class _Sealed:
    value: str
    origin: str  # "field 'avg' of row case=c-1a2b"

    def masked(self) -> str:
        digest = hashlib.sha256(self.value.encode("utf-8")).hexdigest()[:12]
        return f"{self.value[:2]}… ({len(self.value)} chars, sha256 {digest})"


def scan_leaks(answers: list[Path], paths: list[Path], *, inputs: list[Path] | None = None,
               actual: list[Path] | None = None, min_length: int = 4) -> LeakReport:
    """Search ``paths`` for distinctive sealed values and ``actual`` tables for mirrored answers."""
    if min_length < 1:
        raise UsageError(f"--min-length must be at least 1, got {min_length}")
    sealed = _distinctive(answers, inputs or [], min_length)
    files = sorted({f for p in paths for f in _files(p)})
    hits = [h for f in files for h in _scan_file(f, sealed)]
    hits += [h for t in actual or [] for h in _mirror_hits(t, answers)]
    hits.sort(key=lambda h: (_where_key(h.where), h.detail))
    return LeakReport(distinctive_values=len(sealed), files_scanned=len(files) + len(actual or []), hits=hits)


def _where_key(where: str) -> tuple[str, int]:
    path, _, line = where.rpartition(":")
    return (path, int(line)) if line.isdigit() else (where, 0)


def _distinctive(answers: list[Path], inputs: list[Path], min_length: int) -> list[_Sealed]:
    candidates: dict[str, _Sealed] = {}
    counts: Counter[str] = Counter()
    rows = 0
    for path in answers:
        frame, names = _answer_frame(path)
        rows += frame.height
        for value, origin in _answer_cells(frame, names):
            counts[value] += 1
            candidates.setdefault(value, _Sealed(value, origin))
    keep = {
        v: s for v, s in candidates.items()
        if len(v) >= min_length and v.lower() not in _COMMON and not (rows >= 4 and counts[v] * 2 >= rows)
    }
    matcher = _Matcher(list(keep))
    seen = {v for text in _strings_in(inputs) for _, v in matcher.find(text)}
    return sorted((s for v, s in keep.items() if v not in seen), key=lambda s: (-len(s.value), s.value))


class _Matcher:
    """All sealed values in one regex; numbers only match on number boundaries."""

    def __init__(self, values: list[str]) -> None:
        ordered = sorted(set(values), key=lambda v: (-len(v), v))
        self._re = re.compile("|".join(re.escape(v) for v in ordered)) if ordered else None
        self._numeric = {v for v in ordered if _NUMERIC.fullmatch(v)}

    def find(self, text: str) -> Iterator[tuple[int, str]]:
        if self._re is None:
            return
        for m in self._re.finditer(text):
            value = m.group(0)
            if value not in self._numeric or _number_bounded(text, m.start(), m.end()):
                yield m.start(), value


def _answer_frame(path: Path) -> tuple[pl.DataFrame, list[str]]:
    table = read_table(path)
    return table.frame.collect(), table.columns


def _answer_cells(frame: pl.DataFrame, names: list[str]) -> Iterator[tuple[str, str]]:
    # the first column names the row (a case id, a customer): it is not a sealed value
    key_col = names[0] if names else ROW
    for row in frame.iter_rows(named=True):
        for name in names[1:]:
            value = row.get(name)
            if value is not None and value.strip():
                yield _nfc(value.strip()), f"field {name!r} of row {key_col}={row.get(key_col)}"


def _strings_in(paths: list[Path]) -> list[str]:
    out = []
    for f in sorted({f for p in paths for f in _files(p)}):
        text = _read_text(f)
        if text is not None:
            out.append(text)
            out += [s for _, s in _decoded_strings(text, f)]
    return out


def _files(path: Path) -> Iterator[Path]:
    if path.is_symlink():
        return
    if path.is_file():
        yield path
    elif path.is_dir():
        for child in sorted(path.rglob("*")):
            if child.is_file() and not child.is_symlink():
                yield child
    else:
        raise UsageError(f"{path} does not exist", hint="pass files or directories to scan")


def _read_text(path: Path) -> str | None:
    data = path.read_bytes()[:_MAX_FILE]
    if b"\0" in data[:8192]:
        return None
    return _nfc(data.decode("utf-8", errors="replace"))


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _scan_file(path: Path, sealed: list[_Sealed]) -> list[LeakHit]:
    text = _read_text(path)
    if text is None or not sealed:
        return []
    by_value = {s.value: s for s in sealed}
    matcher = _Matcher(list(by_value))
    found = [(pos, v) for pos, v in matcher.find(text)]
    decoded = _decoded_strings(text, path)
    for offset, value in decoded:
        found += [(offset, v) for _, v in matcher.find(value)]
    hits: dict[tuple[int, str], LeakHit] = {}
    for pos, value in found:
        line = text.count("\n", 0, pos) + 1
        hits.setdefault((line, value), LeakHit(where=f"{path}:{line}", kind="value",
                                               detail=f"{by_value[value].origin}: {by_value[value].masked()}"))
    return list(hits.values())


def _number_bounded(text: str, start: int, end: int) -> bool:
    # 12.35 must not match inside 112.350 or 12.3512
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    decimal_after = after == "." and text[end + 1 : end + 2].isdigit()
    return not (before.isdigit() or before == "." or after.isdigit() or decimal_after)


def _decoded_strings(text: str, path: Path) -> list[tuple[int, str]]:
    """(offset in text, decoded value) of every string literal and CSV cell that decodes to something new."""
    out = []
    for pattern, decode in ((_DQ, _json_string), (_SQ, _python_string)):
        for m in pattern.finditer(text):
            value = decode(m.group(0))
            if value is not None and value != m.group(0)[1:-1]:
                out.append((m.start(), _nfc(value)))
    if path.suffix.lower() == ".csv":
        out += _csv_cells(text)
    return out


def _json_string(token: str) -> str | None:
    try:
        value = json.loads(token)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _python_string(token: str) -> str | None:
    try:
        value = ast.literal_eval(token)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def _csv_cells(text: str) -> list[tuple[int, str]]:
    out = []
    line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    reader = csv.reader(io.StringIO(text, newline=""))
    start_line = 1
    try:
        for record in reader:
            offset = line_starts[min(start_line - 1, len(line_starts) - 1)]
            out += [(offset, cell) for cell in record if '"' in cell or "\n" in cell]
            start_line = reader.line_num + 1
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
