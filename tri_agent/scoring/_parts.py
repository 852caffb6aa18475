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
import os
import tempfile
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from .._errors import MalformedInput, UsageError
from ._caliber import Drift, FieldSpec
from ._channels import KeyTuple, Tally, finish, tally_tables
from ._report import AnswersChannel
from ._tables import DELIMITED, DIALECTS, ROW, Table, blocks, csv_header, records, table_format, without_blank

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


def streamable(answers: Path, actual: Path) -> bool:
    """Both tables delimited files, together at least ``STREAM_BYTES``."""
    try:
        sizes = answers.stat().st_size + actual.stat().st_size
        return {table_format(answers), table_format(actual)} <= DELIMITED and sizes >= STREAM_BYTES
    except (OSError, UsageError):
        return False


def score_in_parts(key: list[str], fields: dict[str, FieldSpec], answers: Path, actual: Path,
                   drift: Drift | None, blank_keys: frozenset[str] = frozenset()) -> Parted | None:
    """The answers channel of ``answers`` and ``actual`` scored in parts; None where the in-memory path must speak
    (anything it would refuse or report as a defect)."""
    try:
        headers = [csv_header(p) for p in (answers, actual)]
        if any(c not in headers[1] for c in key) or any(c not in headers[0] for c in [*key, *fields]):
            return None
        parts = max(2, math.ceil(sum(os.stat(p).st_size for p in (answers, actual)) / PART_BYTES))
        with tempfile.TemporaryDirectory() as tmp:
            split = [_split(p, key, blank_keys, parts, Path(tmp) / side)
                     for p, side in ((answers, "expected"), (actual, "actual"))]
            tally = Tally()
            for n in range(parts):
                expected, got = (_part(p, h, d, f, n) for p, h, (f, d) in zip((answers, actual), headers, split,
                                                                              strict=True))
                tally.add(tally_tables(key, fields, expected, got, blank_keys))
        if tally.expected == 0 or tally.defect is not None:
            return None
    except (MalformedInput, pl.exceptions.PolarsError):
        return None
    channel, failing = finish(fields, tally, drift)
    stand_in = [_part(p, h, d, None, 0) for p, h, (_, d) in zip((answers, actual), headers, split, strict=True)]
    return Parted(stand_in[0], stand_in[1], channel, failing)


def _split(path: Path, key: list[str], blank_keys: frozenset[str], parts: int,
           folder: Path) -> tuple[Path, Future[str]]:
    """``path`` read as ``read_table`` reads it (every cell text, blank records dropped, each row its index), the
    key's blank cells made values where the caliber says so, written as ``parts`` files by a hash of the key, a block
    at a time; and the SHA-256 of the very bytes read."""
    dialect, digest, first = DIALECTS[table_format(path)], hashlib.sha256(), 0
    folder.mkdir()
    for n, (header, block) in enumerate(blocks(path, dialect, BLOCK_BYTES)):
        digest.update(header if n == 0 else b"")
        digest.update(block)
        frame = records(header + block, dialect, first)
        first += frame.height
        frame = without_blank(frame).with_columns(pl.col(c).fill_null("") for c in key if c in blank_keys)
        frame = frame.with_columns((pl.struct(key).hash() % parts).alias(_PART))
        for (part,), rows in frame.partition_by(_PART, as_dict=True, include_key=False).items():
            rows.write_ipc(folder / f"{part}-{n}.arrow")
    done: Future[str] = Future()
    done.set_result(digest.hexdigest())
    return folder, done


def _part(path: Path, header: list[str], digest: Future[str], folder: Path | None, n: int) -> Table:
    """Part ``n`` of a split table (no rows when the hash gave it none, or when ``folder`` is None)."""
    files = sorted(folder.glob(f"{n}-*.arrow")) if folder is not None else []
    if files:
        frame = pl.scan_ipc(files)
    else:
        frame = pl.DataFrame(schema={ROW: pl.get_index_type(), **dict.fromkeys(header, pl.String)}).lazy()
    return Table(path, table_format(path), header, frame, digest)
