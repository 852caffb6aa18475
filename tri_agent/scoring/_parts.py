"""Tables too large for memory, scored a part at a time: memory flat in the row count.

Both delimited tables are scanned once by polars' streaming engine into parts by a hash of the key (every row of a
key lands in the same part, on both sides), each pair of parts is judged by the rules of ``_channels``
(``tally_tables``), and the tallies add up to the whole: the channel is the one the in-memory path gives, byte for
byte. Whatever that path would refuse or name (a malformed file, a blank or repeated key in the answers, a bad
sealed value, a target's table it cannot read) is left to it, so the message is the same too: only such files are
ever read whole.
"""

from __future__ import annotations

import hashlib
import math
import tempfile
from concurrent.futures import Future
from dataclasses import dataclass
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
    parts = parts_for(answers, actual)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            expected, got = (_split(p, key, blank_keys, parts, Path(tempfile.mkdtemp(dir=tmp)))
                             for p in (answers, actual))
            tally = Tally()
            for n in range(parts):
                tally.add(tally_tables(key, fields, expected.table(n), got.table(n), blank_keys))
        if tally.expected == 0:
            return None
    except (MalformedInput, pl.exceptions.PolarsError, OSError):  # OSError: the temporary folder full, say
        return None
    channel, failing = finish(fields, tally, drift)
    return Parted(expected.table(), got.table(), channel, failing)


def _split(path: Path, key: list[str], blank_keys: frozenset[str], parts: int, folder: Path) -> _Split:
    """``path`` read as ``read_table`` reads it (the header checked on the bytes read, every cell text, blank records
    dropped), written as ``parts`` files by a hash of the key, a block at a time; and the SHA-256 of the very bytes
    read. A row's index counts within its block only: no message ever names it (anything worth a message is left to
    the in-memory path)."""
    dialect, digest, header = DIALECTS[table_format(path)], hashlib.sha256(), []
    for n, (line, block) in enumerate(blocks(path, dialect, BLOCK_BYTES)):
        if n == 0:
            digest.update(line)
            header = csv_header(line, path, dialect)
        digest.update(block)
        frame = without_blank(same_columns(records(line + block, dialect), header, path))
        # a key cell left empty reads as null, a quoted empty one as "": alike where blank is a value (as
        # blank_as_value makes them before any join), so both land in the same part
        frame = frame.with_columns(pl.col(c).fill_null("") for c in key if c in blank_keys)
        frame = frame.with_columns((pl.struct(key).hash() % parts).alias(_PART))
        for (part,), rows in frame.partition_by(_PART, as_dict=True, include_key=False).items():
            rows.write_ipc(folder / f"{part}-{n}.arrow")
    done: Future[str] = Future()
    done.set_result(digest.hexdigest())
    return _Split(path, header, folder, done)
