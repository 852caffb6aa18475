"""Answer and actual tables: JSONL or CSV (by extension), every cell kept as its literal text.

A table is a lazy polars frame of string columns plus ``_row`` (the record's 0-based index), so a
million-row CSV is scanned by polars without a Python loop. JSON numbers keep the characters they were
written with (``1.10`` stays ``1.10``): no value ever passes through a binary float. Columns whose
class is json or set hold the JSON text of their value in both formats, so CSV and JSONL agree.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

if TYPE_CHECKING:
    import _csv

from .._errors import MalformedInput, UsageError

# One CSV cell may hold up to 16 MiB (the csv module's default, 128 KiB, is below what real tables hold);
# a longer one is malformed input naming its line. Set for the process: every CSV reader here shares it.
FIELD_LIMIT = 16 << 20
csv.field_size_limit(FIELD_LIMIT)

Format = Literal["csv", "tsv", "jsonl"]
ROW = "\x1frow"  # a name no header or JSON key of a real table holds
_FORMATS: dict[str, Format] = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
DELIMITED: frozenset[Format] = frozenset({"csv", "tsv"})  # a header line, then records; an empty cell is ""


@dataclass(frozen=True)
class _Dialect:
    """How a delimited format is read: CSV as RFC 4180 (quotes group a field, "" is a quote); TSV as the Unix tools
    write it (datamash, cut, paste, most warehouse exports): a tab between fields and no quoting at all, so a
    quote is an ordinary character and a field can hold neither a tab nor a line break."""

    separator: str
    quoted: bool
    name: str

    def reader(self, stream: Iterable[str]) -> _csv.Reader:
        quoting: Literal[0, 3] = csv.QUOTE_MINIMAL if self.quoted else csv.QUOTE_NONE
        return csv.reader(stream, delimiter=self.separator, quoting=quoting)


DIALECTS: dict[Format, _Dialect] = {"csv": _Dialect(",", True, "CSV"), "tsv": _Dialect("\t", False, "TSV")}
_HASHER = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tri-agent-sha256")


class JsonNumber(str):
    """A JSON number, kept as the exact text of its literal."""


@dataclass
class Table:
    """One table read from disk: its columns, its cells as a lazy frame, and the digest of its bytes.

    The frame is parsed from the very bytes that were hashed, so the digest in a report always
    names what was scored, even if the file changes while we work.
    """

    path: Path
    format: Format
    columns: list[str]
    frame: pl.LazyFrame
    _digest: Future[str] = field(repr=False)
    _lines: list[int] | None = field(default=None, repr=False)
    defect: str | None = None  # a target's table that could not be read: why (it stands in with no rows)

    @property
    def sha256(self) -> str:
        return self._digest.result()

    def line_of(self, row: int) -> int:
        """1-based line where record ``row`` starts (exact, also for quoted multi-line CSV cells)."""
        if self._lines is None:
            self._lines = _csv_record_lines(self.path, DIALECTS[self.format])
        return self._lines[row] if 0 <= row < len(self._lines) else row + 2

    def where(self, row: int) -> str:
        return f"{self.path}:{self.line_of(row)}"

    def subset(self, column: str, value: str) -> Table:
        """The rows whose ``column`` equals ``value``; rows keep their index, so errors keep their lines."""
        self.line_of(0)  # resolve line numbers from the file before the frame is filtered
        frame = self.frame.filter(pl.col(column) == value)
        return Table(self.path, self.format, self.columns, frame, self._digest, self._lines, self.defect)

    def among(self, column: str, values: frozenset[str]) -> Table:
        """The rows whose ``column`` is one of ``values``; rows keep their index, so errors keep their lines."""
        self.line_of(0)
        frame = self.frame.filter(pl.col(column).is_in(list(values)).fill_null(False))
        return Table(self.path, self.format, self.columns, frame, self._digest, self._lines, self.defect)


def table_from_rows(name: str, rows: list[dict[str, str | None]], columns: tuple[str, ...] = ()) -> Table:
    """An in-memory table (e.g. one case's actual rows); ``name`` stands in for a path in messages."""
    names = list(dict.fromkeys([*columns, *(k for r in rows for k in r)]))
    frame = _text_frame({n: [r.get(n) for r in rows] for n in names}).with_row_index(ROW)
    digest: Future[str] = Future()
    digest.set_result(_sha256(json.dumps(rows, sort_keys=True).encode()))
    return Table(Path(name), "jsonl", names, frame.lazy(), digest, list(range(1, len(rows) + 1)))


def unreadable_table(path: Path, columns: tuple[str, ...], why: str) -> Table:
    """A stand-in with no rows for a target's table that could not be read; ``why`` goes into the report."""
    try:
        raw = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
    except OSError:
        raw = b""
    frame = _text_frame({c: [] for c in columns}).with_row_index(ROW)
    digest: Future[str] = Future()
    digest.set_result(_sha256(raw))
    return Table(path, table_format(path), list(columns), frame.lazy(), digest, [], why)


def read_actual(path: Path, json_columns: frozenset[str] = frozenset(), columns: tuple[str, ...] = ()) -> Table:
    """A target's table: as ``read_table``, but a file that cannot be read is a table with no rows and the
    reason (the target's answer, scored red), never malformed input."""
    try:
        return read_table(path, json_columns, columns)
    except MalformedInput as exc:
        return unreadable_table(path, columns, f"unreadable table: {exc.line()}")


def table_format(path: Path) -> Format:
    fmt = _FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise UsageError(f"{path}: unknown table format {path.suffix!r}", hint="use .csv, .tsv, .jsonl or .ndjson")
    return fmt


def read_table(path: Path, json_columns: frozenset[str] = frozenset(), columns: tuple[str, ...] = (),
               fmt: Format | None = None) -> Table:
    """Open ``path`` as a table; JSONL is parsed now, CSV is scanned lazily by polars. ``fmt`` (a target file's
    declared format) overrides the file name's suffix.

    In JSONL a field absent from every row (or an empty file) still exists, all blank: ``columns``
    names those the caller will read. A CSV header, by contrast, says exactly what exists.
    """
    fmt = fmt or table_format(path)
    data = _read_bytes(path)
    digest = _HASHER.submit(_sha256, data)  # hashlib releases the GIL: this overlaps the parse
    if fmt in DELIMITED:
        dialect = DIALECTS[fmt]
        header = csv_header(data, path, dialect)
        return Table(path, fmt, header, _parse_csv(data, path, header, dialect).lazy(), digest)
    names, lines, frame = _parse_jsonl(data, path, json_columns)
    absent = [c for c in columns if c not in names]
    frame = frame.with_columns(pl.lit(None, pl.String).alias(c) for c in absent)
    return Table(path, "jsonl", names + absent, frame.lazy(), digest, lines)


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path} does not exist", hint="check the path") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory, not a table file") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def csv_header(data: bytes, path: Path, dialect: _Dialect) -> list[str]:
    end = data.find(b"\n")
    first = (data if end < 0 else data[:end]).removeprefix(b"\xef\xbb\xbf")
    try:
        text = first.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedInput("header is not UTF-8", where=f"{path}:1", hint="save the file as UTF-8") from None
    try:
        header: list[str] = next(dialect.reader([text.rstrip("\r")]), [])
    except csv.Error as exc:  # a lone carriage return or a NUL byte inside the header
        raise MalformedInput(f"unreadable header ({exc})", where=f"{path}:1",
                             hint="end lines with \\n or \\r\\n; the header names the columns") from None
    if not header or all(not h.strip() for h in header):
        raise MalformedInput("no header row", where=f"{path}:1", hint="the first line must name the columns")
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise MalformedInput(f"column {dupes[0]!r} appears twice in the header", where=f"{path}:1")
    return header


def records(data: bytes, dialect: _Dialect) -> pl.DataFrame:
    """Every record of ``data`` (a header line, then records) as text, each with its index, blank ones included
    (polars raises on what it cannot read)."""
    return pl.read_csv(data, infer_schema=False, separator=dialect.separator,
                       quote_char='"' if dialect.quoted else None).with_row_index(ROW)


def without_blank(frame: pl.DataFrame) -> pl.DataFrame:
    """A blank line is a record of nulls (polars and the csv module agree): no row, as in JSONL."""
    return frame.filter(~pl.all_horizontal(pl.exclude(ROW).is_null()))


def blocks(path: Path, dialect: _Dialect, size: int) -> Iterator[tuple[bytes, bytes]]:
    """The file's header line, and its records about ``size`` bytes at a time, each block ending where a record does
    (a line break outside quotes: polars opens and closes a quoted stretch at every quote). A file whose quotes never
    close again comes as one block from there on (its parse fails, as the whole file's does); the bytes are read and
    scanned once."""
    with path.open("rb") as f:
        header = f.readline()
        # quotes are counted in every format (it costs next to nothing); only a quoting one reads them
        before = header.count(b'"')  # quotes before the bytes held back
        held: list[bytes] = []  # read, with no record ending in them
        held_quotes, given = 0, False
        while data := f.read(size):
            cut = _record_end(data, before + held_quotes if dialect.quoted else None)
            if cut < 0:
                held.append(data)
                held_quotes += _quotes(data)
                continue
            yield header, b"".join([*held, data[:cut]])
            before += held_quotes + _quotes(data, 0, cut)
            held, held_quotes, given = [data[cut:]], _quotes(data, cut), True
        rest = b"".join(held)
        if rest or not given:  # the last records, or a header alone: every file gives at least one block
            yield header, rest


def _record_end(data: bytes, quotes: int | None) -> int:
    """Just past the last line break of ``data`` outside quotes (``quotes``: those before ``data``; None: a format
    without quoting), or -1. Only ``data`` is searched: the line breaks before it were all inside quotes."""
    cut = data.rfind(b"\n")
    inside = 0 if quotes is None or cut < 0 else quotes + _quotes(data, 0, cut)
    while inside % 2 and cut >= 0:  # walk back a line at a time, counting only the quotes stepped over
        before = data.rfind(b"\n", 0, cut)
        inside -= _quotes(data, max(before, 0), cut)
        cut = before
    return cut + 1 if cut >= 0 else -1


def _quotes(data: bytes, start: int = 0, end: int | None = None) -> int:
    """The quotes in ``data[start:end]``; a block without any is common, and looking for one is far quicker than
    counting."""
    return data.count(b'"', start, end) if b'"' in data else 0


def _parse_csv(data: bytes, path: Path, header: list[str], dialect: _Dialect) -> pl.DataFrame:
    try:  # every cell read as text
        frame = without_blank(records(data, dialect))
    except pl.exceptions.PolarsError as exc:
        found = locate_csv_problem(data, path, len(header), dialect)
        if found.where == str(path):
            found = MalformedInput(f"unreadable {dialect.name} ({str(exc).splitlines()[0]})", where=str(path))
        raise found from None
    return same_columns(frame, header, path)


def same_columns(frame: pl.DataFrame, header: list[str], path: Path) -> pl.DataFrame:
    """``frame``, parsed with the header line, when polars read the columns the header line names on its own; a quote
    the header line leaves open makes polars read the lines after it into the header."""
    read = frame.columns[1:]
    if read != header:
        n, (alone, joined) = next((n, p) for n, p in enumerate(zip_longest(header, read)) if p[0] != p[1])
        raise MalformedInput(f"the header line's column {n + 1} reads as {_shown(alone)} on its own and as "
                             f"{_shown(joined)} with what follows it (a quote it leaves open)", where=f"{path}:1",
                             hint="close every quote of the header on its line")
    return frame


def _shown(name: str | None) -> str:
    return "nothing" if name is None else repr(name[:60])


def _csv_record_lines(path: Path, dialect: _Dialect) -> list[int]:
    # only on the error path: a message must name the line a record starts on
    text = path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")
    reader = dialect.reader(io.StringIO(text, newline=""))
    starts, previous_end = [], 1
    try:
        next(reader, None)
        previous_end = reader.line_num
        for _ in reader:
            starts.append(previous_end + 1)
            previous_end = reader.line_num
    except csv.Error:
        pass  # the records before the unreadable one keep their lines
    return starts


def locate_csv_problem(raw: bytes, path: Path, ncols: int, dialect: _Dialect = DIALECTS["csv"]) -> MalformedInput:
    """Find the first line that makes a CSV (or TSV) unreadable (encoding or field count)."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return MalformedInput(f"byte {exc.start} is not UTF-8", where=f"{path}:{line}", hint="save the file as UTF-8")
    reader = dialect.reader(io.StringIO(raw.decode("utf-8").removeprefix("\ufeff"), newline=""))
    start = 1
    try:
        for record in reader:
            if len(record) > ncols:
                return MalformedInput(f"{len(record)} fields where the header has {ncols}", where=f"{path}:{start}",
                                      hint="quote cells that contain commas" if dialect.quoted else
                                      "a TSV field cannot hold a tab")
            start = reader.line_num + 1
    except csv.Error as exc:  # a lone carriage return, a NUL byte: the csv module names it
        return MalformedInput(f"unreadable {dialect.name} ({exc})", where=f"{path}:{start}",
                              hint="end lines with \\n or \\r\\n and quote fields that hold line breaks")
    return MalformedInput(f"polars could not read this {dialect.name}", where=str(path),
                          hint="check quoting and delimiters")


def _parse_jsonl(data: bytes, path: Path, json_columns: frozenset[str]) -> tuple[list[str], list[int], pl.DataFrame]:
    columns: dict[str, list[str | None]] = {}
    lines: list[int] = []
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        row = _parse_jsonl_line(raw, f"{path}:{lineno}")
        for name in row:
            if name not in columns:
                columns[name] = [None] * len(lines)
        try:
            for name, values in columns.items():
                values.append(_cell(row.get(name), name in json_columns))
        except RecursionError:
            raise MalformedInput("JSON nested too deeply", where=f"{path}:{lineno}") from None
        lines.append(lineno)
    return list(columns), lines, _text_frame(columns).with_row_index(ROW)  # no columns: still the index, no rows


def _text_frame(columns: dict[str, list[str | None]]) -> pl.DataFrame:
    """Every column text, also when it is empty or all null (polars would make those its Null type)."""
    return pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String))


def _parse_jsonl_line(raw: bytes, where: str) -> dict[str, Any]:
    try:
        row = json.loads(raw.decode("utf-8").removeprefix("\ufeff"), parse_float=JsonNumber, parse_int=JsonNumber,
                         object_pairs_hook=unique_keys_object, parse_constant=_no_constant)
        if b"\\u" in raw:  # an escaped lone surrogate decodes, but is no text
            json.dumps(row, ensure_ascii=False).encode("utf-8")
    except UnicodeError:
        raise MalformedInput("line is not UTF-8 text", where=where, hint="save the file as UTF-8") from None
    except RecursionError:
        raise MalformedInput("JSON nested too deeply", where=where) from None
    except ValueError as exc:
        raise MalformedInput(f"not valid JSON ({exc})", where=where, hint="one JSON object per line") from None
    if not isinstance(row, dict):
        raise MalformedInput(f"expected a JSON object, found {type(row).__name__}", where=where)
    return row


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def unique_keys_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that refuses a key repeated in one JSON object (json keeps the last)."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"key {k!r} repeated in one object")
        out[k] = v
    return out


def _cell(value: Any, as_json: bool) -> str | None:
    if value is None:
        return None
    if as_json or isinstance(value, dict | list):
        return to_json_text(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def to_json_text(value: Any) -> str:
    """JSON text of a parsed value, numbers written exactly as they were read."""
    if isinstance(value, JsonNumber):
        return str.__str__(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{to_json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(to_json_text(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)
