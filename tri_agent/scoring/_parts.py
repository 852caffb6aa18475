"""Tables too large for memory, scored a part at a time: memory flat in the row count.

Both delimited tables are read a block at a time and cut into parts by key, every row of a key in the same part on
both sides; each pair of parts is judged by the rules of ``_channels`` (``tally_tables``), and the tallies add up to
the whole: the channel is the one the in-memory path gives, byte for byte. Two ways to cut:

- **windows**, when both tables come in strictly increasing key order (as an ``ORDER BY`` export does): the blocks
  are judged as they are read, a window of keys at a time, and nothing is written;
- **by a hash of the key**, for any other order: every block is appended to the part files (both tables split at
  once), and the parts are judged once both tables are split. The windows give way to it at the first key out of
  order (or repeated, or null).

Either way the next block (or pair of parts) is read in a thread of its own while the last is judged (``_ahead``):
polars and hashlib let go of the interpreter, so the two cores work side by side.

Whatever that path would refuse or name (a malformed file, a blank or repeated key in the answers, a bad
sealed value, a target's table it cannot read) is left to it, so the message is the same too: only such files are
ever read whole.
"""

from __future__ import annotations

import hashlib
import io
import math
import secrets
import tempfile
import threading
from collections.abc import Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from queue import Full, Queue
from typing import Any, TypeVar, cast

import polars as pl

from .._errors import MalformedInput, UsageError
from ._caliber import Drift, FieldSpec
from ._channels import (
    KeyTuple,
    Tally,
    blank_key_failures,
    finish,
    key_hash,
    key_present,
    key_text,
    tally_tables,
)
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


@dataclass(frozen=True)
class Parted:
    """The answers channel of two tables scored in parts, and stand-ins of the tables for the report's digests."""

    answers: Table
    actual: Table
    channel: AnswersChannel
    failing: set[KeyTuple]


@dataclass(frozen=True)
class _Split:
    """One table split into parts: where the parts are (None: judged in windows, never written), its header, and
    the SHA-256 of the bytes that were read."""

    path: Path
    header: list[str]
    parts: _Parts | None
    digest: Future[str]

    @property
    def blanks(self) -> int:
        """Rows with a blank key, counted and never written (each fails alike, whatever else it holds)."""
        return self.parts.blanks if self.parts is not None else 0

    @property
    def left_out(self) -> int:
        """Rows read and in no part: the blank keys' and those compaction dropped (of a key given more than
        twice)."""
        return self.blanks + (self.parts.dropped if self.parts is not None else 0)

    def table(self, n: int | None = None) -> Table:
        """Part ``n`` (no rows when the hash gave it none), or a stand-in with no rows (``n`` None)."""
        frame = self.parts.read(n) if n is not None and self.parts is not None else None
        if frame is None:
            frame = pl.DataFrame(schema={ROW: pl.get_index_type(), **dict.fromkeys(self.header, pl.String)})
        return Table(self.path, table_format(self.path), self.header, frame.lazy(), self.digest)


@dataclass
class _Parts:
    """A table's parts on disk: one file a part, each block's rows of the part appended to it as an Arrow stream
    of its own (a file a part and block cost more to write and remove than the rows themselves).

    A key's rows all land in one part, so a table that repeats one key a million times would make that part the
    whole table. A part grown past its bound (``PART_BYTES``, or twice the parts' mean) is compacted: of a key's
    rows only two are kept (a key given twice fails as given twice, however often), and the rows left out are
    counted (``dropped``), so the report is the same."""

    folder: Path
    key: list[str]
    count: int  # how many parts
    pieces: dict[int, list[int]] = field(default_factory=dict)  # part -> the size of each stream in its file
    grace: dict[int, int] = field(default_factory=dict)  # part -> bound multiplier (compaction freed too little)
    total: int = 0  # bytes in all part files
    dropped: int = 0
    blanks: int = 0

    def add(self, part: int, rows: pl.DataFrame) -> None:
        path = self.folder / f"{part}.arrows"
        ends = self.pieces.setdefault(part, [0])
        with path.open("ab") as f:
            rows.write_ipc_stream(f)
            self.total += f.tell() - ends[-1]
            ends.append(f.tell())
        bound = max(PART_BYTES, 2 * self.total // self.count) * self.grace.get(part, 1)
        if ends[-1] > bound:
            self._compact(part, path, bound)

    def _compact(self, part: int, path: Path, bound: int) -> None:
        rows = cast(pl.DataFrame, self.read(part))
        kept = rows.filter(pl.int_range(pl.len()).over(self.key) < 2)
        self.dropped += rows.height - kept.height
        with path.open("wb") as f:
            kept.write_ipc_stream(f)
            self.total += f.tell() - self.pieces[part][-1]
            self.pieces[part] = [0, f.tell()]
        if self.pieces[part][-1] * 2 > bound:  # little freed (few repeats): a wider bound, not a rewrite a block
            self.grace[part] = self.grace.get(part, 1) * 2

    def read(self, part: int) -> pl.DataFrame | None:
        ends = self.pieces.get(part)
        if not ends:
            return None
        data = memoryview((self.folder / f"{part}.arrows").read_bytes())
        return pl.concat([pl.read_ipc_stream(io.BytesIO(data[a:b])) for a, b in pairwise(ends)])


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


@dataclass(frozen=True)
class _Plan:
    """How both tables are cut: by ``key`` (``blank_keys`` where blank is a value) into ``parts``, only the
    ``columns`` judging reads kept, by a hash seeded afresh for every scoring (``seed``): the part a key lands
    in depends on nothing the target can know, so no table can be written to fill one part."""

    key: list[str]
    blank_keys: frozenset[str]
    columns: frozenset[str]
    parts: int
    seed: int = field(default_factory=lambda: secrets.randbits(64))


def _hashed(key: list[str], fields: dict[str, FieldSpec], answers: Path, actual: Path, drift: Drift | None,
            blank_keys: frozenset[str]) -> Parted | None:
    plan = _Plan(key, blank_keys, frozenset([ROW, *key, *fields]), parts_for(answers, actual))
    try:
        with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:  # both tables split at once
            expected, got = (f.result() for f in [pool.submit(_split, p, plan, Path(tempfile.mkdtemp(dir=tmp)))
                                                  for p in (answers, actual)])
            if expected.left_out:  # a blank or repeated key in the answers: the in-memory path refuses it
                return None
            tally = Tally(actual=got.left_out)
            blank_key_failures(tally, got.blanks)
            with closing(_ahead((expected.table(n), got.table(n)) for n in range(plan.parts))) as pairs:
                for pair in pairs:
                    tally.add(tally_tables(key, fields, *pair, blank_keys))
    except (MalformedInput, pl.exceptions.PolarsError, OSError):  # OSError: the temporary folder full, say
        return None
    return _parted(fields, tally, expected, got, drift)


def _split(path: Path, plan: _Plan, folder: Path) -> _Split:
    """``path`` read (``_Read``) and written as ``plan.parts`` files by a hash of the key, a block at a time (the
    next block read, parsed and cut while this one is written)."""
    read, written = _Read(path), _Parts(folder, plan.key, plan.parts)
    with closing(_ahead(_cut(read.frames(plan.key, plan.blank_keys), plan))) as cut:
        for blanks, pieces in cut:
            written.blanks += blanks
            for (part,), rows in pieces.items():
                written.add(part, rows)
    return read.split(written)


def _cut(frames: Iterator[pl.DataFrame], plan: _Plan) -> Generator[tuple[int, dict[Any, pl.DataFrame]], None, None]:
    """Each block's rows with a blank key counted (each fails alike, as blank_key, whatever else it holds) and
    the rest by part, only the columns judging reads (the part a column of its own, which no header holds)."""
    present = key_present(plan.key, plan.blank_keys)
    for frame in frames:
        blanks = frame.select((~present).sum()).item()
        if blanks:  # a filter copies every column: only when there is something to leave out
            frame = frame.filter(present)
        frame = frame.select(c for c in frame.columns if c in plan.columns)
        frame = frame.with_columns((key_hash(plan.key, plan.seed) % plan.parts).alias(_PART))
        yield blanks, frame.partition_by(_PART, as_dict=True, maintain_order=False)


class _Unordered(Exception):
    """A table not in strictly increasing key order (or with a key no window can hold): the hash split takes it."""


@dataclass
class _Read:
    """One delimited table read a block at a time, as ``read_table`` reads it (the header checked on the bytes read,
    every cell text, blank records dropped), and the SHA-256 of the very bytes read (``done`` once the last block
    is read). A row's index counts within its block only: no message ever names it (anything worth a message is
    left to the in-memory path)."""

    path: Path
    header: list[str] = field(default_factory=list)
    digest: hashlib._Hash = field(default_factory=hashlib.sha256)
    done: Future[str] = field(default_factory=Future)

    def frames(self, key: list[str], blank_keys: frozenset[str]) -> Generator[pl.DataFrame, None, None]:
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
        self.done.set_result(self.digest.hexdigest())

    def table(self, frame: pl.DataFrame) -> Table:
        return Table(self.path, table_format(self.path), self.header, frame.lazy(), self.done)

    def split(self, parts: _Parts | None = None) -> _Split:
        return _Split(self.path, self.header, parts, self.done)


@dataclass
class _Window:
    """One table read in key order: the rows read and not yet judged with their keys as texts (``_ordered``), the
    greatest key read so far, and the rest of its blocks."""

    read: _Read
    frames: Iterator[tuple[pl.DataFrame, pl.Series]]  # each block with its key texts (``_in_order``)
    held: pl.DataFrame = field(default_factory=pl.DataFrame)
    keys: pl.Series = field(default_factory=pl.Series)
    last: str | None = None
    ended: bool = False

    def fill(self) -> None:
        """Read on while no row is held, until the table ends."""
        while not self.ended and self.held.height == 0:
            block = next(self.frames, None)
            if block is None:
                self.ended = True
                return
            self.held, self.keys = block
            if self.keys.len():
                self.last = self.keys[-1]

    def upto(self, bound: str) -> Table:
        """The held rows whose key is at most ``bound``, as a table, no longer held."""
        cut = self.keys.search_sorted(bound, side="right")
        taken, self.held, self.keys = self.held.slice(0, cut), self.held.slice(cut), self.keys.slice(cut)
        return self.read.table(taken)


def _in_order(frames: Iterator[pl.DataFrame], key: list[str]) -> Generator[tuple[pl.DataFrame, pl.Series], None, None]:
    """Each block with its key texts (``_ordered``), proven in order in the reading thread (a block out of order
    raises there, and is raised where the block would have been)."""
    last = None
    for frame in frames:
        keys = _ordered(key, frame, last)
        if keys.len():
            last = keys[-1]
        yield frame, keys


def _ordered(key: list[str], frame: pl.DataFrame, last: str | None) -> pl.Series:
    """``frame``'s keys as texts (the cells joined by a NUL), when they strictly increase from ``last`` on; else
    raises. Equal keys give equal texts, so a window of texts holds every row of its keys (two keys that give one
    text only share a window, where the join tells them apart)."""
    keys = frame.select(key_text(key))[:, 0]
    if keys.null_count() or not (keys.slice(1) > keys.head(-1)).all():
        raise _Unordered
    if last is not None and keys.len() and not keys[0] > last:
        raise _Unordered
    return keys


def _in_windows(key: list[str], fields: dict[str, FieldSpec], answers: Path, actual: Path,
                blank_keys: frozenset[str]) -> tuple[Tally, _Split, _Split]:
    """Both tables judged a window of keys at a time as they are read: each window holds every key up to the
    smaller of the two tables' greatest keys read so far, so a key's rows are in one window on both sides."""
    e, a = _Read(answers), _Read(actual)
    with (closing(_ahead(_in_order(e.frames(key, blank_keys), key))) as e_frames,
          closing(_ahead(_in_order(a.frames(key, blank_keys), key))) as a_frames):
        expected, got = _Window(e, e_frames), _Window(a, a_frames)
        tally = Tally()
        while True:
            expected.fill()
            got.fill()
            if expected.ended and got.ended:  # a table ends only once every row it held was taken
                break
            bound = min(s.last for s in (expected, got) if s.last is not None and not s.ended)
            tally.add(tally_tables(key, fields, expected.upto(bound), got.upto(bound), blank_keys, ordered=True))
    return tally, e.split(), a.split()


_END = object()
READER = "tri-agent-read-ahead"  # each reading thread's name
T = TypeVar("T")


def _ahead(items: Generator[T, None, None]) -> Generator[T, None, None]:
    """``items`` produced one ahead in a thread of their own: the next block is read and parsed (polars and
    SHA-256 let go of the interpreter) while this one is judged. An exception is raised where the item would
    have been. Closed early (``closing``), it stops the thread and waits for it, ``items`` closed too: a reader
    given up on holds no block and no file once its consumer has moved on."""
    queue: Queue[object] = Queue(maxsize=1)
    stop = threading.Event()

    def produce() -> None:
        with closing(items):
            try:
                for item in items:
                    if not _hand(queue, stop, item) or stop.is_set():
                        return
            except BaseException as exc:  # handed over to the consumer, raised there
                _hand(queue, stop, exc)
                return
            _hand(queue, stop, _END)

    thread = threading.Thread(target=produce, daemon=True, name=READER)
    thread.start()
    try:
        while (item := queue.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield cast(T, item)
    finally:
        stop.set()
        thread.join()


def _hand(queue: Queue[object], stop: threading.Event, item: object) -> bool:
    """``item`` put in ``queue`` once there is room; False if the consumer stopped first."""
    while not stop.is_set():
        try:
            queue.put(item, timeout=0.1)
            return True
        except Full:
            continue
    return False
