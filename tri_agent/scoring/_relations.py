"""Channel 3: metamorphic relations, identities of the spec that need no expected values.

Each relation kind is one function over the actual table (and the replay table for idempotence),
returning one outcome per checked instance. A failed relation on rows the sealed answers agree with
is attributed to the exam: the caliber declared an identity the spec does not promise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal

from .._errors import MalformedInput, UsageError
from ._caliber import Caliber, EqualPair, Idempotent, Match, Monotone, Ordered, Selector, SumOfParts
from ._report import Attribution, RelationFailure, RelationOutcome, RelationsChannel
from ._tables import ROW, Table
from ._tolerance import EXACT, BadValue, Cell, compare_cell, is_blank, parse_count, parse_decimal

Row = dict[str, str | None]
KeyTuple = tuple[str, ...]
Observed = dict[KeyTuple, set[str]]
AnyRelation = SumOfParts | EqualPair | Idempotent | Monotone | Ordered


@dataclass(frozen=True)
class _Context:
    caliber: Caliber
    rows: list[Row]
    replay: list[Row] | None
    failing: set[KeyTuple]

    def key(self, row: Row) -> KeyTuple:
        return tuple(str(row.get(c)) for c in self.caliber.key)

    def attribution(self, **where: str | None) -> Attribution:
        """``exam`` only if channel 1 passed every row of the instance, dropped rows included.

        ``where`` names the instance by column values (a group, or the case of a pair). When a column is
        not part of the key, the failing rows cannot be told apart, so any failure counts (engine); so does a failing
        row with no key at all (a blank key: it could be any instance's).
        """
        if not self.failing:
            return "exam"
        key = self.caliber.key
        if any(c not in key for c in where):
            return "engine"
        at = [(key.index(c), v) for c, v in where.items()]
        hit = any(len(k) != len(key) or all(k[i] == v for i, v in at) for k in self.failing)
        return "engine" if hit else "exam"


def evaluate(caliber: Caliber, actual: Table, replay: Table | None, failing: set[KeyTuple],
             observed: Observed | None = None) -> RelationsChannel:
    """Check every relation the caliber declares; a relation that cannot run is a usage error.

    ``observed`` maps a case (its values of the behaviour key) to the behaviours its runs ended in; a scoped
    relation needs it.
    """
    if any(isinstance(r, Idempotent) for r in caliber.relations) and replay is None:
        name = next(r.name for r in caliber.relations if isinstance(r, Idempotent))
        raise UsageError(f"relation {name!r} is idempotent and needs a second run", hint="pass --replay ACTUAL2")
    empty = [r.name for r in caliber.relations if isinstance(r, EqualPair | Monotone) and not r.pairs]
    if empty:
        raise MalformedInput(f"relation {empty[0]!r} has no case pairs, so it would check nothing",
                             hint="list pairs in the caliber, or score with the caliber a build wrote")
    ctx = _Context(caliber, _rows(actual), _rows(replay) if replay is not None else None, failing)
    outcomes = [_not_empty(r, _KINDS[r.kind](*_scoped(r, ctx, observed))) for r in caliber.relations]
    passed = sum(o.checked - o.failed for o in outcomes)
    total = sum(o.checked for o in outcomes)
    return RelationsChannel(verdict="pass" if passed == total else "fail", passed=passed, total=total,
                            relations=outcomes)


def _scoped(rel: AnyRelation, ctx: _Context, observed: Observed | None) -> tuple[AnyRelation, _Context]:
    """The relation and the rows it checks: with a scope, only the cases whose run ended in its behaviours
    (and, for a pair relation, only the pairs whose two cases both did)."""
    if rel.scope is None:
        return rel, ctx
    if observed is None or ctx.caliber.behaviors is None:
        raise UsageError(f"relation {rel.name!r} is scoped by behaviour and needs the observed behaviours",
                         hint="pass --expected-behaviors F --observed-behaviors F")
    columns, admits = ctx.caliber.behaviors.key, rel.scope.admits

    def kept(rows: list[Row]) -> list[Row]:
        return [r for r in rows if admits(observed.get(tuple(str(r.get(c)) for c in columns)))]

    ctx = replace(ctx, rows=kept(ctx.rows), replay=kept(ctx.replay) if ctx.replay is not None else None)
    if isinstance(rel, EqualPair | Monotone):
        pairs = [(a, b) for a, b in rel.pairs if admits(observed.get((a,))) and admits(observed.get((b,)))]
        rel = rel.model_copy(update={"pairs": pairs})
    return rel, ctx


def _not_empty(rel: AnyRelation, outcome: RelationOutcome) -> RelationOutcome:
    """A scope that admitted no case checked nothing: that is the exam's failure, never a silent pass."""
    if rel.scope is None or outcome.checked:
        return outcome
    return _outcome(rel, 1, [RelationFailure(where="all cases", detail="no case ended in a behaviour its scope "
                                             "admits, so it checked nothing", attribution="exam")])


def _rows(table: Table) -> list[Row]:
    return table.frame.sort(ROW).collect().to_dicts()


def _selected(row: Row, sel: Selector) -> bool:
    return all(_hit(row.get(c), m) for c, m in sel.where.items()) and not any(
        _hit(row.get(c), m) for c, m in sel.where_not.items())


def _hit(value: str | None, match: Match) -> bool:
    return value in match if isinstance(match, list) else value == match


def _outcome(rel: AnyRelation, checked: int,
             failures: list[RelationFailure]) -> RelationOutcome:
    # each checked instance yields at most one failure, so they count directly
    return RelationOutcome(name=rel.name, kind=rel.kind, checked=checked, failed=len(failures), failures=failures)


def _sum_of_parts(rel: SumOfParts, ctx: _Context) -> RelationOutcome:
    groups: dict[tuple[str | None, ...], list[Row]] = {}
    for row in ctx.rows:
        groups.setdefault(tuple(row.get(c) for c in rel.by), []).append(row)
    if rel.skip_empty:
        groups = {k: rows for k, rows in groups.items()
                  if any(_selected(r, rel.parts) or _selected(r, rel.total) for r in rows)}
    failures = []
    for group_key, rows in sorted(groups.items(), key=lambda kv: tuple(str(v) for v in kv[0])):
        instance = dict(zip(rel.by, group_key, strict=True))
        where = ", ".join(f"{c}={v}" for c, v in instance.items()) or "all rows"
        detail = _sum_detail(rel, ctx, rows)
        if detail:
            failures.append(RelationFailure(where=where, detail=detail, attribution=ctx.attribution(**instance)))
    return _outcome(rel, len(groups), failures)


def _sum_detail(rel: SumOfParts, ctx: _Context, rows: list[Row]) -> str:
    parts = [r for r in rows if _selected(r, rel.parts)]
    totals = [r for r in rows if _selected(r, rel.total)]
    if len(totals) != 1:
        return f"expected one total row, found {len(totals)}"
    total_field = rel.total_field or rel.field
    cls = ctx.caliber.fields[rel.field].rule()
    try:
        read = parse_count if cls.name == "count" else parse_decimal
        summed = Decimal(0)
        for r in parts:
            summed = EXACT.add(summed, Decimal(read(_value(r, rel.field))))
        stated = _value(totals[0], total_field)
        cell = compare_cell(cls, stated, format(summed, "f"))
    except BadValue as exc:
        return f"unreadable value: {exc}"
    return "" if cell.ok else f"{len(parts)} parts sum to {summed}, total row says {stated}"


def _value(row: Row, name: str) -> str:
    value = row.get(name)
    if value is None or is_blank(value):
        raise BadValue(f"field {name!r} is blank")
    return value


def _equal_pair(rel: EqualPair, ctx: _Context) -> RelationOutcome:
    fields = rel.fields or list(ctx.caliber.fields)
    rest = [c for c in ctx.caliber.key if c != rel.case_column]
    failures = []
    for a, b in rel.pairs:
        rows_a = [r for r in ctx.rows if r.get(rel.case_column) == a and _selected(r, rel.rows)]
        rows_b = [r for r in ctx.rows if r.get(rel.case_column) == b and _selected(r, rel.rows)]
        detail = _pair_detail(rows_a, rows_b, rest, fields, ctx, rel.order_insensitive)
        if detail:
            engine = "engine" in (ctx.attribution(**{rel.case_column: a}), ctx.attribution(**{rel.case_column: b}))
            failures.append(RelationFailure(where=f"{a} vs {b}", detail=detail,
                                            attribution="engine" if engine else "exam"))
    return _outcome(rel, len(rel.pairs), failures)


def _pair_detail(rows_a: list[Row], rows_b: list[Row], rest: list[str], fields: list[str], ctx: _Context,
                 order_insensitive: bool) -> str:
    if not rows_a or not rows_b:
        return f"a case has no rows ({len(rows_a)} vs {len(rows_b)})"
    keys_a = [tuple(str(r.get(c)) for c in rest) for r in rows_a]
    keys_b = [tuple(str(r.get(c)) for c in rest) for r in rows_b]
    if sorted(keys_a) != sorted(keys_b):
        return f"row keys differ: {sorted(set(keys_a) ^ set(keys_b))[:3]}"
    if not order_insensitive and keys_a != keys_b:
        return "same rows in a different order"
    by_key = dict(zip(keys_b, rows_b, strict=True))
    for k, row in zip(keys_a, rows_a, strict=True):
        diff = _row_diff(row, by_key[k], fields, ctx, exact=False)
        if diff:
            return f"row {k}: {diff}"
    return ""


def _row_diff(first: Row, second: Row, fields: list[str], ctx: _Context, exact: bool) -> str:
    for name in fields:
        cell = _compare_values(ctx, name, first.get(name), second.get(name))
        if not cell.ok or (exact and cell.delta):
            return f"{name}: {first.get(name)!r} vs {second.get(name)!r}"
    return ""


def _compare_values(ctx: _Context, name: str, first: str | None, second: str | None) -> Cell:
    spec = ctx.caliber.fields[name]
    if first is None or is_blank(first):
        return Cell(is_blank(second))  # only whether they agree is read, never the reason
    try:
        return compare_cell(spec.rule(), first, second)
    except BadValue:
        return Cell(False)


def _idempotent(rel: Idempotent, ctx: _Context) -> RelationOutcome:
    assert ctx.replay is not None
    fields = rel.fields or list(ctx.caliber.fields)
    first = {ctx.key(r): r for r in ctx.rows}
    second = {ctx.key(r): r for r in ctx.replay}
    failures = []
    for k in sorted(first.keys() | second.keys()):
        where = ", ".join(f"{c}={v}" for c, v in zip(ctx.caliber.key, k, strict=True))
        if k not in first or k not in second:
            detail = "row only in the replay" if k not in first else "row missing from the replay"
        else:
            detail = _row_diff(first[k], second[k], fields, ctx, exact=True)
        if detail:  # a run that does not replay stably is the target's fault, whatever the key says
            failures.append(RelationFailure(where=where, detail=detail, attribution="engine"))
    return _outcome(rel, len(first.keys() | second.keys()), failures)


def _monotone(rel: Monotone, ctx: _Context) -> RelationOutcome:
    rest = [c for c in ctx.caliber.key if c != rel.case_column]
    failures = []
    for small, big in rel.pairs:
        rows_small = {tuple(str(r.get(c)) for c in rest): r for r in ctx.rows if r.get(rel.case_column) == small}
        rows_big = {tuple(str(r.get(c)) for c in rest): r for r in ctx.rows if r.get(rel.case_column) == big}
        detail = _shrinks(rows_small, rows_big, rel.field)
        if detail:
            engine = "engine" in (ctx.attribution(**{rel.case_column: small}),
                                  ctx.attribution(**{rel.case_column: big}))
            failures.append(RelationFailure(where=f"{small} within {big}", detail=detail,
                                            attribution="engine" if engine else "exam"))
    return _outcome(rel, len(rel.pairs), failures)


def _shrinks(small: dict[KeyTuple, Row], big: dict[KeyTuple, Row], name: str) -> str:
    if not small:
        return "the subset case has no rows"
    for k in sorted(small):
        if k not in big:
            return f"row {k} disappears in the superset"
        try:
            before, after = parse_count(_value(small[k], name)), parse_count(_value(big[k], name))
        except BadValue as exc:
            return f"row {k}: unreadable value: {exc}"
        if after < before:
            return f"row {k}: {name} shrinks from {before} to {after}"
    return ""


def _ordered(rel: Ordered, ctx: _Context) -> RelationOutcome:
    groups: dict[tuple[str | None, ...], list[Row]] = {}
    for row in ctx.rows:  # ctx.rows keep the order the target wrote them in
        if _selected(row, rel.rows):
            groups.setdefault(tuple(row.get(c) for c in rel.by), []).append(row)
    failures = []
    for group_key, rows in sorted(groups.items(), key=lambda kv: tuple(str(v) for v in kv[0])):
        values = [str(r.get(rel.field)) for r in rows]
        wrong = next((i for i in range(1, len(values))
                      if (values[i] > values[i - 1] if rel.descending else values[i] < values[i - 1])), None)
        if wrong is not None:
            where = ", ".join(f"{c}={v}" for c, v in zip(rel.by, group_key, strict=True)) or "all rows"
            # the key's own rows pass this relation (the build scores the key against itself), and cells
            # cannot show an order: a wrong order is always the target's
            failures.append(RelationFailure(where=where, detail=f"{values[wrong]!r} comes after {values[wrong - 1]!r}",
                                            attribution="engine"))
    return _outcome(rel, len(groups), failures)


_KINDS: dict[str, Callable[..., RelationOutcome]] = {
    "ordered": _ordered,
    "sum_of_parts": _sum_of_parts,
    "equal_pair": _equal_pair,
    "idempotent": _idempotent,
    "monotone": _monotone,
}
