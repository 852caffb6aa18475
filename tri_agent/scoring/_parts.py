"""Tables too large for memory, scored a part at a time: memory flat in the row count.

Both delimited tables are read a block at a time and cut into parts by key, every row of a key in the same part on
both sides; each pair of parts is judged by the rules of ``_channels`` (``tally_tables``), and the tallies add up to
the whole: the channel is the one the in-memory path gives, byte for byte. Two ways to cut:

- **windows**, when both tables come in strictly increasing key order (as an ``ORDER BY`` export does): the blocks
  are judged as they are read, a window of keys at a time, and nothing is written;
- **by a hash of the key**, for any other order: every block is written out as parts, and the parts are judged
  once both tables are split. The windows give way to it at the first key out of order (or repeated, or null).

Whatever that path would refuse or name (a malformed file, a blank or repeated key in the answers, a bad
sealed value, a target's table it cannot read) is left to it, so the message is the same too: only such files are
ever read whole.
"""

from __future__ import annotations

import hashlib
import math
import tempfile
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from .._errors import MalformedInput, UsageError
from ._caliber import Drift, FieldSpec
from ._channels import KeyTuple, Tally, finish, tally_tables
from ._report import AnswersChannel
from ._tables import (
    DELIMITED,
    DIALECTS,
    ROW,
    Table,
    blocks,
    csv_header,
    records,
    same_columns,
    table_format,
    without_blank,
)

STREAM_BYTES = 256 << 20  # both tables together at least this large: scored in parts
PART_BYTES = 32 << 20  # about this much of the two files in each part (a part in memory: about 10x that)
BLOCK_BYTES = 16 << 20  # read and parsed at a time while splitting
_PART = "\x1fpart"  # a name no header holds
_SORT = "\x1fkey"
_NO_DIGEST: Future[str] = Future()  # a window's table: its digest is never read


@dataclass(frozen=True)
class Parted:
    """The answers channel of two tables scored in parts, and stand-ins of the tables for the report's digests."""

    answers: Table
    actual: Table
    channel: AnswersChannel
    failing: set[KeyTuple]


@dataclass(frozen=True)
class _Split:
    """One table split into parts: where the parts are, its header, and the SHA-256 of the bytes that were read."""

    path: Path
    header: list[str]
    folder: Path
    digest: Future[str]

    def table(self, n: int | None = None) -> Table:
        """Part ``n`` (no rows when the hash gave it none), or a stand-in with no rows (``n`` None)."""
        files = sorted(self.folder.glob(f"{n}-*.arrow")) if n is not None else []
        frame = pl.scan_ipc(files) if files else \
            pl.DataFrame(schema={ROW: pl.get_index_type(), **dict.fromkeys(self.header, pl.String)}).lazy()
        return Table(self.path, table_format(self.path), self.header, frame, self.digest)


def streamable(answers: Path, actual: Path) -> bool:
    """Both tables delimited files, together at least ``STREAM_BYTES``."""
    try:
        sizes = answers.stat().st_size + actual.stat().st_size
        return {table_format(answers), table_format(actual)} <= DELIMITED and sizes >= STREAM_BYTES
    except (OSError, UsageError):
        return False


def parts_for(answers: Path, actual: Path) -> int:
    """How many parts: about ``PART_BYTES`` of the two files in each."""
    return max(1, math.ceil((answers.stat().st_size + actual.stat().st_size) / PART_BYTES))


def score_in_parts(key: list[str], fields: dict[str, FieldSpec], answers: Path, actual: Path,
                   drift: Drift | None, blank_keys: frozenset[str] = frozenset()) -> Parted | None:
    """The answers channel of ``answers`` and ``actual`` scored in parts; None where the in-memory path must speak
    (anything it would refuse: a table that does not parse, a missing column, a blank, repeated or bad sealed value,
    no answer at all)."""
    try:
        tally, expected, got = _in_windows(key, fields, answers, actual, blank_keys)
    except _Unordered:
        tally = None
    except (MalformedInput, pl.exceptions.PolarsError, OSError):
        return None
    if tally is None:
        return _hashed(key, fields, answers, actual, drift, blank_keys)
    return _parted(fields, tally, expected, got, drift)


def _parted(fields: dict[str, FieldSpec], tally: Tally, expected: _Split, got: _Split,
            drift: Drift | None) -> Parted | None:
    if tally.expected == 0:
        return None
    channel, failing = finish(fields, tally, drift)
    return Parted(expected.table(), got.table(), channel, failing)


def _hashed(key: list[str], fields: dict[str, FieldSpec], answers: Path, actual: Path, drift: Drift | None,
            blank_keys: frozenset[str]) -> Parted | None:
    parts = parts_for(answers, actual)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            expected, got = (_split(p, key, blank_keys, parts, Path(tempfile.mkdtemp(dir=tmp)))
                             for p in (answers, actual))
            tally = Tally()
            for n in range(parts):
                tally.add(tally_tables(key, fields, expected.table(n), got.table(n), blank_keys))
    except (MalformedInput, pl.exceptions.PolarsError, OSError):  # OSError: the temporary folder full, say
        return None
    return _parted(fields, tally, expected, got, drift)


def _split(path: Path, key: list[str], blank_keys: frozenset[str], parts: int, folder: Path) -> _Split:
    """``path`` read (``_Read``) and written as ``parts`` files by a hash of the key, a block at a time."""
    read = _Read(path)
    for n, frame in enumerate(read.frames(key, blank_keys)):
        frame = frame.with_columns((pl.struct(key).hash() % parts).alias(_PART))
        for (part,), rows in frame.partition_by(_PART, as_dict=True, include_key=False).items():
            rows.write_ipc(folder / f"{part}-{n}.arrow")
    return read.split(folder)


class _Unordered(Exception):
    """A table not in strictly increasing key order (or with a key no window can hold): the hash split takes it."""


@dataclass
class _Read:
    """One delimited table read a block at a time, as ``read_table`` reads it (the header checked on the bytes read,
    every cell text, blank records dropped), and the SHA-256 of the very bytes read. A row's index counts within its
    block only: no message ever names it (anything worth a message is left to the in-memory path)."""

    path: Path
    header: list[str] = field(default_factory=list)
    digest: hashlib._Hash = field(default_factory=hashlib.sha256)

    def frames(self, key: list[str], blank_keys: frozenset[str]) -> Iterator[pl.DataFrame]:
        dialect = DIALECTS[table_format(self.path)]
        for n, (line, block) in enumerate(blocks(self.path, dialect, BLOCK_BYTES)):
            if n == 0:
                self.digest.update(line)
                self.header = csv_header(line, self.path, dialect)
            self.digest.update(block)
            frame = without_blank(same_columns(records(line + block, dialect), self.header, self.path))
            # a key cell left empty reads as null, a quoted empty one as "": alike where blank is a value (as
            # blank_as_value makes them before any join), so both land in the same part
            yield frame.with_columns(pl.col(c).fill_null("") for c in key if c in blank_keys)

    def split(self, folder: Path) -> _Split:
        done: Future[str] = Future()
        done.set_result(self.digest.hexdigest())
        return _Split(self.path, self.header, folder, done)


@dataclass
class _Window:
    """One table's rows read and not yet judged, in key order, and the rest of its blocks."""

    frames: Iterator[pl.DataFrame]
    held: pl.DataFrame = field(default_factory=pl.DataFrame)
    last: str | None = None  # the greatest key read so far
    ended: bool = False

    def fill(self, key: list[str]) -> None:
        """Read on while no row is held, until the table ends."""
        while not self.ended and self.held.height == 0:
            frame = next(self.frames, None)
            if frame is None:
                self.ended = True
                return
            self.held = _ordered(key, frame, self.last)
            if frame.height:
                self.last = self.held[_SORT][-1]

    def upto(self, bound: str | None) -> pl.DataFrame:
        """The held rows whose key is at most ``bound`` (all of them for None), no longer held."""
        cut = self.held.height if bound is None else self.held[_SORT].search_sorted(bound, side="right")
        taken, self.held = self.held.slice(0, cut), self.held.slice(cut)
        return taken.drop(_SORT, strict=False)


def _ordered(key: list[str], frame: pl.DataFrame, last: str | None) -> pl.DataFrame:
    """``frame`` with its key as one text (its cells joined by a NUL), when those texts strictly increase from
    ``last`` on; else raises. Equal keys give equal texts, so a window of texts holds every row of its keys (two keys
    that give one text only share a window, where the join tells them apart)."""
    keys = frame.select(pl.concat_str(key, separator="\x00"))[:, 0]
    if keys.null_count() or (keys.len() > 1 and not (keys.slice(1) > keys.slice(0, keys.len() - 1)).all()):
        raise _Unordered
    if last is not None and keys.len() and not keys[0] > last:
        raise _Unordered
    return frame.with_columns(keys.alias(_SORT))


def _in_windows(key: list[str], fields: dict[str, FieldSpec], answers: Path, actual: Path,
                blank_keys: frozenset[str]) -> tuple[Tally, _Split, _Split]:
    """Both tables judged a window of keys at a time as they are read: each window holds every key up to the
    smaller of the two tables' greatest keys read so far, so a key's rows are in one window on both sides."""
    reads = _Read(answers), _Read(actual)
    sides = [_Window(r.frames(key, blank_keys)) for r in reads]
    tally = Tally()
    while True:
        for side in sides:
            side.fill(key)
        if all(side.ended for side in sides):  # a table ends only once every row it held was taken
            break
        bound = min((s.last for s in sides if not s.ended and s.last is not None), default=None)
        expected, got = (Table(r.path, table_format(r.path), r.header, s.upto(bound).lazy(), _NO_DIGEST)
                         for r, s in zip(reads, sides, strict=True))
        tally.add(tally_tables(key, fields, expected, got, blank_keys))
    folder = Path(tempfile.gettempdir())  # the stand-ins read no part
    return tally, reads[0].split(folder), reads[1].split(folder)
