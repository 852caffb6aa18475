"""Channels 1 and 2: an actual table joined to its sealed answer table on the key, cell by cell.

The work is split for speed without splitting the rules: polars scans both tables, joins them, and
keeps only the rows that are not *certainly* passing (see ``ToleranceClass.fast_equal``); every kept
row is then judged by the exact Python rules of ``_tolerance``. So a million matching rows cost one
streaming join, and every failure, every in-tolerance difference and every malformed cell is decided
by the reference implementation.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

import polars as pl

from .._errors import MalformedInput
from ._caliber import Drift, FieldSpec
from ._report import AnswersChannel, CellFailure, DeltaCount, DriftAudit, FieldTally
from ._tables import DELIMITED, ROW, Table, unreadable_table
from ._tolerance import (
    BLANK_CHARS,
    CLASSES,
    EXACT,
    BadValue,
    check_expected,
    compare_cell,
    decimal_places,
    is_blank,
    not_blank,
)

_E, _A = "\x1fe:", "\x1fa:"
_RE, _RA = "\x1f_re", "\x1f_ra"
_H, _AK = "\x1f_h", "\x1fk:"  # the key's hash; a key column of the target's side while joined by hash
_C = "\x1fc:"  # a field's cell proven to pass by the fast path
KeyTuple = tuple[str, ...]


@dataclass
class Tally:
    """What the rules found in a pair of tables, before it is a channel."""

    failed: Counter[str] = field(default_factory=Counter)
    deltas: dict[str, list[Decimal]] = field(default_factory=dict)
    failures: list[tuple[KeyTuple, int, CellFailure]] = field(default_factory=list)
    failed_rows: int = 0
    missing: int = 0
    unexpected: int = 0
    expected: int = 0  # rows of the answer key
    actual: int = 0  # rows of the target's table, unusable ones included
    defect: str | None = None  # why the target's table could not be read as a whole (it stood in with no rows)

    def add(self, other: Tally) -> None:
        """Fold in the tally of another part of the same tables (no key in both)."""
        self.failed.update(other.failed)
        for name, deltas in other.deltas.items():
            self.deltas.setdefault(name, []).extend(deltas)
        self.failures += other.failures
        self.failed_rows += other.failed_rows
        self.missing += other.missing
        self.unexpected += other.unexpected
        self.expected += other.expected
        self.actual += other.actual
        self.defect = self.defect or other.defect


def compare_tables(key: list[str], fields: dict[str, FieldSpec], expected: Table, actual: Table,
                   drift: Drift | None = None, allow_empty: bool = False,
                   blank_keys: frozenset[str] = frozenset()) -> tuple[AnswersChannel, set[KeyTuple]]:
    """Score ``actual`` against ``expected``; returns the channel and the keys of every failing row.

    An empty answer key proves nothing and is refused, unless the caller scores one case of a larger
    key (``allow_empty``), where "this case has no rows" is a legitimate expectation. In the key columns
    ``blank_keys`` names, a blank string is a value (a null is still none).
    """
    tally = tally_tables(key, fields, expected, actual, blank_keys)
    if tally.expected == 0 and not allow_empty:
        raise MalformedInput("the answer key has no rows; an empty key would pass anything",
                             where=str(expected.path), hint="check that the oracle wrote its answers")
    return finish(fields, tally, drift)


def tally_tables(key: list[str], fields: dict[str, FieldSpec], expected: Table, actual: Table,
                 blank_keys: frozenset[str] = frozenset(), ordered: bool = False) -> Tally:
    """Every rule of ``compare_tables`` applied to one pair of tables, short of the channel: tallies of tables
    split by key (every row of a key on the same side of the split) add up to the tally of the whole.

    ``ordered``: the caller has proven both tables strictly increasing in their key texts (``key_text``), so
    their keys are unique, and the rows are paired by a merge (``_merged``) instead of a join."""
    _require_columns(key, fields, expected)
    actual = blank_as_value(_keyed(key, actual), blank_keys)
    e, a = _load(key, fields, blank_as_value(expected, blank_keys), actual)
    _check_keys(key, e, expected, blank_keys, ordered)
    tally = Tally(expected=e.height, actual=a.height, defect=actual.defect)
    a, repeated = _usable(key, a, tally, blank_keys, ordered)
    # in file order: the join's order varies from run to run, and the first bad sealed value must be the one named
    rows = _interesting_rows(key, fields, e, a, ordered).sort(_RE, _RA, nulls_last=True)
    for row in rows.iter_rows(named=True):
        _judge_row(row, key, fields, expected, tally, repeated)
    _repeated_unexpected(key, e, repeated, tally)
    return tally


def finish(fields: dict[str, FieldSpec], tally: Tally, drift: Drift | None) -> tuple[AnswersChannel, set[KeyTuple]]:
    """The channel of a tally (its failures in key, then field order), and the keys of every failing row."""
    tally.failures.sort(key=lambda t: (t[0], t[1]))
    channel = _channel(fields, tally, tally.expected, tally.actual, drift)
    if tally.defect is not None:
        channel = channel.model_copy(update={"actual_defects": [tally.defect], "verdict": "fail"})
    return channel, {t[0] for t in tally.failures}


def _keyed(key: list[str], actual: Table) -> Table:
    """The target's table, or a stand-in with no rows when it lacks a key column (its rows cannot be matched)."""
    absent = [c for c in key if c not in actual.columns]
    if not absent or actual.defect is not None:
        return actual
    return unreadable_table(actual.path, tuple(key), f"the actual table has no key column {absent[0]!r} "
                                                     f"(columns: {', '.join(actual.columns) or 'none'})")


def blank_as_value(table: Table, blank_keys: frozenset[str]) -> Table:
    """In CSV no cell is null: an empty cell of a column where blank is a value is the empty string (polars
    reads an unquoted empty cell as null). JSONL keeps its nulls: there a null is no value."""
    columns = [c for c in table.columns if c in blank_keys]
    if table.format not in DELIMITED or not columns:
        return table
    return replace(table, frame=table.frame.with_columns(pl.col(c).fill_null("") for c in columns))


def key_present(key: list[str], blank_keys: frozenset[str]) -> pl.Expr:
    """Every key cell holds a value: not null, and not blank unless blank is a value in its column."""
    return pl.all_horizontal([pl.col(c).is_not_null() if c in blank_keys else not_blank(pl.col(c)) for c in key])


def _usable(key: list[str], a: pl.DataFrame, tally: Tally, blank_keys: frozenset[str] = frozenset(),
            ordered: bool = False) -> tuple[pl.DataFrame, set[KeyTuple]]:
    """The target's rows that can be matched: a row with a blank key fails as blank_key, and every row of a
    repeated key is set aside (each such key fails as duplicate_key: which of its rows is the answer?)."""
    blank = ~key_present(key, blank_keys)
    blanks = a.select(blank.sum()).item()
    blank_key_failures(tally, blanks)
    if blanks:  # a filter copies every column: only when there is something to leave out
        a = a.filter(~blank)
    if ordered or _unique(key, a):
        return a, set()
    counts = a.group_by(key).len()
    dups = counts.filter(pl.col("len") > 1).select(key)
    repeated = {tuple(str(v) for v in r) for r in dups.iter_rows()}
    return a.join(dups, on=key, how="anti"), repeated


def blank_key_failures(tally: Tally, rows: int) -> None:
    """``rows`` rows of the target's table without a key: each an unexpected row, failing as blank_key."""
    for _ in range(rows):
        tally.unexpected += 1
        tally.failures.append(((), -1, CellFailure(key={}, field=None, cls=None, expected=None, actual=None,
                                                   reason="blank_key")))


def _repeated_unexpected(key: list[str], e: pl.DataFrame, repeated: set[KeyTuple], tally: Tally) -> None:
    """A repeated key the answers do not hold at all: one unexpected row, failing as duplicate_key."""
    known = {tuple(str(v) for v in r) for r in e.select(key).iter_rows()} if repeated else set()
    for k in sorted(repeated - known):
        tally.unexpected += 1
        tally.failures.append((k, -1, CellFailure(key={c: k[i] for i, c in enumerate(key)}, field=None, cls=None,
                                                  expected=None, actual=None, reason="duplicate_key")))


def validate_keys(key: list[str], table: Table, blank_keys: frozenset[str] = frozenset()) -> None:
    """Refuse a table (e.g. a replay) whose keys are absent, blank (where blank is no value) or duplicated."""
    absent = [c for c in key if c not in table.columns]
    if absent:
        raise MalformedInput(f"column {absent[0]!r} is absent", where=f"{table.path}:1")
    frame = blank_as_value(table, blank_keys).frame.select(*key, pl.col(ROW).alias(_RA)).collect()
    _check_keys(key, frame, table, blank_keys)


def _require_columns(key: list[str], fields: dict[str, FieldSpec], expected: Table) -> None:
    absent = [c for c in [*key, *fields] if c not in expected.columns]
    if absent:
        raise MalformedInput(
            f"column {absent[0]!r} is absent (columns: {', '.join(expected.columns) or 'none'})",
            where=f"{expected.path}:1", hint="name it in the header, or fix the caliber's key/fields",
        )


def _load(key: list[str], fields: dict[str, FieldSpec], expected: Table,
          actual: Table) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Both tables in memory, each file parsed once, both in parallel, columns renamed apart."""
    present = [f for f in fields if f in actual.columns]
    e = expected.frame.select(*key, ROW, *fields).rename({ROW: _RE} | {f: _E + f for f in fields})
    a = actual.frame.select(*key, ROW, *present).rename({ROW: _RA} | {f: _A + f for f in present})
    a = a.with_columns(pl.lit(None, pl.String).alias(_A + f) for f in fields if f not in present)
    e_frame, a_frame = pl.collect_all([e, a])
    return e_frame, a_frame


def _check_keys(key: list[str], frame: pl.DataFrame, table: Table, blank_keys: frozenset[str] = frozenset(),
                ordered: bool = False) -> None:
    """Refuse blank and duplicate keys (none in a table proven ``ordered``), naming file:line."""
    blank = ~key_present(key, blank_keys)
    row_col = _RE if _RE in frame.columns else _RA
    first_blank = frame.filter(blank).select(row_col, *key).head(1)
    if first_blank.height:
        raise MalformedInput(_why_blank(first_blank.row(0, named=True), key, blank_keys),
                             where=table.where(first_blank[row_col].item()), hint=f"every row needs {', '.join(key)}")
    if not ordered and not _unique(key, frame):
        _raise_duplicate(key, frame, row_col, table)


def _why_blank(row: dict[str, Any], key: list[str], blank_keys: frozenset[str]) -> str:
    if not blank_keys:
        return "blank key value; blank is not a value"
    column = next(c for c in key if row[c] is None or (c not in blank_keys and not row[c].strip(BLANK_CHARS)))
    if column in blank_keys:
        return f"null key value in {column!r}; a null is no value, even where blank_keys lets a blank string be one"
    return f"blank key value in {column!r}; blank is not a value (blank_keys does not name {column!r})"


def _unique(key: list[str], frame: pl.DataFrame) -> bool:
    # cheap proofs first: a strictly increasing key, or as many distinct hashes as rows
    # (equal keys always hash alike, so distinct hashes prove distinct keys; only a tie needs the exact test)
    if len(key) == 1 and bool((frame[key[0]] > frame[key[0]].shift(1)).fill_null(True).all()):
        return True
    if frame.select(key_hash(key).n_unique()).item() == frame.height:
        return True
    return bool(frame.select(pl.struct(key).n_unique()).item() == frame.height)


def _raise_duplicate(key: list[str], frame: pl.DataFrame, row_col: str, table: Table) -> None:
    dup = (frame.group_by(key).agg(pl.col(row_col).sort().alias("rows"))
           .filter(pl.col("rows").list.len() > 1).sort(pl.col("rows").list.first()))
    first, second = dup["rows"][0][0], dup["rows"][0][1]
    values = ", ".join(f"{c}={dup[c][0]!r}" for c in key)
    raise MalformedInput(f"duplicate key ({values}), first at line {table.line_of(first)}",
                         where=table.where(second), hint="keys must be unique in a table")


def _interesting_rows(key: list[str], fields: dict[str, FieldSpec], e: pl.DataFrame, a: pl.DataFrame,
                      ordered: bool = False) -> pl.DataFrame:
    """Rows not proven to pass: first by plain string equality, then by value among what remains. A row on one
    side only is never proven (its other side's cells are null, and a caliber has at least one field)."""
    same_text = ~pl.all_horizontal([_certain(f, spec, by_value=False) for f, spec in fields.items()])
    rest = _merged(key, e, a, same_text) if ordered else None
    if rest is None:
        rest = _joined(key, e, a, same_text)
    # which cells of a kept row are proven too: the exact rules skip those (a zero difference, a valid sealed value)
    rest = rest.with_columns(_certain(f, spec, by_value=True).alias(_C + f) for f, spec in fields.items())
    return rest.filter(~pl.all_horizontal(_C + f for f in fields))


def _joined(key: list[str], e: pl.DataFrame, a: pl.DataFrame, keep: pl.Expr) -> pl.DataFrame:
    """The rows ``keep`` selects of the two sides joined on a 64-bit hash of the key (a number joins in half the
    time of a text). A pair whose keys differ is kept too: should there be one (two keys sharing a hash, which an
    adversary can arrange), the sides are joined again on the key itself. Each side holds a key once, so a
    pairing of unequal keys is the only way a hash can mislead the join."""
    paired = pl.any_horizontal(pl.col(c) != pl.col(_AK + c) for c in key).fill_null(False).alias(_H)
    rest = (e.lazy().with_columns(key_hash(key).alias(_H))
            .join(a.lazy().with_columns(key_hash(key).alias(_H)).rename({c: _AK + c for c in key}), on=_H,
                  how="full")
            .with_columns(paired).filter(keep | pl.col(_H)).collect(engine="streaming"))
    if rest[_H].any():
        return e.lazy().join(a.lazy(), on=key, how="full", coalesce=True).filter(keep).collect(engine="streaming")
    return rest.with_columns(pl.coalesce(c, _AK + c).alias(c) for c in key).drop(_H, *(_AK + c for c in key))


def _merged(key: list[str], e: pl.DataFrame, a: pl.DataFrame, keep: pl.Expr) -> pl.DataFrame | None:
    """The rows ``keep`` selects of the two sides paired without a join: both strictly increasing in their key
    texts, each answers' row finds the target's row of its text by a binary search. None where two paired rows'
    keys differ (cells holding a NUL can give two keys one text): the join pairs those."""
    e_text, a_text = (side.select(key_text(key)).to_series() for side in (e, a))
    at = a_text.search_sorted(e_text)  # where each answers' key is, or would be, among the target's
    hit = at < a.height
    if a.height:
        hit = hit & (a_text.gather(at.clip(0, a.height - 1)) == e_text)
    taken = at.filter(hit)
    if len(key) > 1 and not e.filter(hit).select(key).equals(a[taken].select(key)):
        return None
    twins = a.drop(key).select(pl.all().gather(pl.select(pl.when(hit).then(at)).to_series()))
    alone = pl.repeat(True, a.height, eager=True)
    alone.scatter(taken, False)
    return pl.concat([pl.concat([e, twins], how="horizontal"), a.filter(alone)], how="diagonal").filter(keep)


def key_text(key: list[str]) -> pl.Expr:
    """The key's cells joined by a NUL, one text per row, ordered as the key's cells are (equal keys give equal
    texts; keys whose cells hold a NUL can share one)."""
    return pl.concat_str(key, separator="\x00")


def key_hash(key: list[str], seed: int = 0) -> pl.Expr:
    """A 64-bit hash of the key's cells (equal keys, equal hashes); one column hashed as itself, in a third of
    the time of a struct of one field."""
    return (pl.struct(key) if len(key) > 1 else pl.col(key[0])).hash(seed)


def _certain(name: str, spec: FieldSpec, by_value: bool) -> pl.Expr:
    fast = CLASSES[spec.cls].fast
    if fast is None:
        return pl.lit(False)
    e, a = pl.col(_E + name), pl.col(_A + name)
    ok = fast.equal(e, a) if by_value else (e == a) & fast.valid(e)
    if spec.values is not None:
        ok = ok & e.is_in(spec.values)
    if spec.places is not None:  # only a plain d.ddd text is certain here; anything else takes the slow path
        ok = ok & (a.str.strip_chars().str.extract(r"^[+-]?\d*\.(\d+)$", 1).str.len_chars() == spec.places)
    return ok.fill_null(False)


def _judge_row(row: dict[str, Any], key: list[str], fields: dict[str, FieldSpec],
               expected: Table, tally: Tally, repeated: set[KeyTuple]) -> None:
    key_map = {c: str(row[c]) for c in key}
    k = tuple(key_map.values())
    if row[_RA] is None and row[_RE] is not None and k in repeated:  # the target gave this key twice or more
        tally.failed_rows += 1
        tally.missing += 1
        tally.failures.append((k, -1, CellFailure(key=key_map, field=None, cls=None, expected=None, actual=None,
                                                  reason="duplicate_key")))
        return
    if row[_RE] is None:
        tally.unexpected += 1
        tally.failures.append((k, -1, CellFailure(key=key_map, field=None, cls=None, expected=None,
                                                  actual=None, reason="unexpected_row")))
        return
    failed = False
    for i, (name, spec) in enumerate(fields.items()):
        if row[_C + name]:
            continue
        reason, delta = _judge_cell(row, name, spec, expected)
        if reason is not None:
            failed = True
            tally.failed[name] += 1
            tally.failures.append((k, i, CellFailure(key=key_map, field=name, cls=spec.cls,
                                                     expected=row[_E + name], actual=row[_A + name], reason=reason)))
        elif delta:
            tally.deltas.setdefault(name, []).append(delta)
    tally.failed_rows += failed
    tally.missing += row[_RA] is None


def _judge_cell(row: dict[str, Any], name: str, spec: FieldSpec,
                expected: Table) -> tuple[str | None, Decimal | None]:
    cls, enum = spec.rule(), frozenset(spec.values) if spec.values is not None else None
    if spec.nullable and row[_E + name] is None:  # the row has no such value: neither may the target's
        if row[_RA] is None:
            return "missing_row", None
        return (None if row[_A + name] is None or is_blank(row[_A + name], cls.name) else "unexpected_value"), None
    try:
        sealed = check_expected(cls, row[_E + name], enum)
    except BadValue as exc:
        raise MalformedInput(f"field {name!r}: {exc}", where=expected.where(row[_RE])) from None
    if row[_RA] is None:
        return "missing_row", None
    try:
        cell = compare_cell(cls, sealed, row[_A + name], enum)
    except BadValue:
        return "unreadable_value", None  # the target's answer, not the exam's: a red cell
    if cell.ok and spec.places is not None and decimal_places(row[_A + name]) != spec.places:
        return "wrong_places", None
    return cell.reason, cell.delta


def _channel(fields: dict[str, FieldSpec], tally: Tally, n_expected: int, n_actual: int,
             drift: Drift | None) -> AnswersChannel:
    tallies = {
        name: FieldTally(cls=spec.cls, passed=n_expected - tally.failed[name], failed=tally.failed[name],
                         within_tolerance_nonzero=len(tally.deltas.get(name, [])))
        for name, spec in fields.items()
    }
    audits = [_audit(n, s, tally.deltas.get(n, []), drift) for n, s in fields.items()
              if drift is not None and s.rule().bound is not None]
    passed = n_expected - tally.failed_rows
    return AnswersChannel(
        verdict="pass" if not tally.failures else "fail", passed=passed, total=n_expected + tally.unexpected,
        rows_expected=n_expected, rows_actual=n_actual, rows_missing=tally.missing,
        rows_unexpected=tally.unexpected, fields=tallies, failures=[t[2] for t in tally.failures], drift=audits,
    )


def _audit(name: str, spec: FieldSpec, deltas: list[Decimal], drift: Drift) -> DriftAudit:
    up = sum(1 for d in deltas if d > 0)
    down = len(deltas) - up
    # 0.010 and 0.01 are one difference: count normalised values so the text is order-independent
    counts = Counter(EXACT.normalize(d) for d in deltas)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    # the share is compared as an exact fraction: 0.56 * 25 is 14.000000000000002 in binary floats
    share = Fraction(str(drift.direction_share))
    systematic = len(deltas) >= drift.min_cases and max(up, down) * share.denominator >= share.numerator * len(deltas)
    return DriftAudit(
        field=name, cls=spec.cls, tolerance=str(spec.rule().bound), nonzero=len(deltas),
        positive=up, negative=down, top_deltas=[DeltaCount(delta=format(d, "f"), count=c) for d, c in top],
        systematic=systematic,
    )
