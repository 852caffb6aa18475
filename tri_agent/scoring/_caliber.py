"""The caliber: the scoring contract the examiner writes, and whose hash every report echoes.

Minimal caliber::

    schema_version: 1
    key: [case, group]
    fields: {avg: amount, n: count, state: {class: status, values: [ok, late]}}

Optional sections: ``behaviors`` (channel 2), ``relations`` (channel 3) and ``drift`` (the audit of
differences that tolerance would otherwise hide).
"""

from __future__ import annotations

import hashlib
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, ConfigDict, Field, model_validator

from .. import _yamldoc
from .._model import Written
from ._tolerance import CLASSES, Bound, ClassName, ToleranceClass, parse_decimal, with_bound

Match = str | list[str]


class _Strict(Written):
    model_config = ConfigDict(frozen=True)


def _decimal_text(value: object) -> str:
    # a YAML float has lost digits before anyone sees it (0.1 is not 1/10): a bound must be written as text
    if not isinstance(value, str):
        raise ValueError(f"write the bound as a quoted decimal string like \"0.005\", not {value!r}")
    if parse_decimal(value) <= 0:  # parse_decimal refuses NaN, Infinity and anything but a decimal literal
        raise ValueError(f"must be greater than zero, found {value!r}")
    return value


DecimalText = Annotated[str, BeforeValidator(_decimal_text, json_schema_input_type=str)]


class Tolerance(_Strict):
    """A field's own tolerance in place of its class's default: ``{absolute: "0.005"}``, ``{relative: "1e-9"}``
    (both together: the wider bound holds) or ``{digits: 6}``; the sealed value is the reference."""

    absolute: DecimalText | None = Field(default=None, description="Largest |actual - expected| that passes, "
                                         "as a decimal string.")
    relative: DecimalText | None = Field(default=None, description="Largest |actual - expected| / |expected| "
                                         "that passes, as a decimal string below 1; at an expected zero only "
                                         "zero passes (add 'absolute' for a floor).")
    digits: int | None = Field(default=None, ge=1, le=50, strict=True, description="Significant digits that must "
                               "agree: |actual - expected| at most half a unit in the expected value's last such "
                               "digit; at an expected zero only zero passes.")

    @model_validator(mode="after")
    def _one_shape(self) -> Tolerance:
        if self.digits is not None and (self.absolute is not None or self.relative is not None):
            raise ValueError("'digits' cannot be combined with 'absolute' or 'relative'")
        if self.digits is None and self.absolute is None and self.relative is None:
            raise ValueError("declare 'absolute', 'relative' or 'digits'")
        if self.relative is not None and parse_decimal(self.relative) >= 1:
            raise ValueError(f"relative {self.relative!r} must be below 1 (1 passes any value of the same sign)")
        return self

    def bound(self) -> Bound:
        return Bound(absolute=Decimal(self.absolute or 0), relative=Decimal(self.relative or 0), digits=self.digits)


@lru_cache(maxsize=512)
def _rule(cls: ClassName, tolerance: Tolerance | None) -> ToleranceClass:
    return CLASSES[cls] if tolerance is None else with_bound(CLASSES[cls], tolerance.bound())


class FieldSpec(_Strict):
    """How one field is scored."""

    cls: ClassName = Field(alias="class", description="Tolerance class: " + ", ".join(CLASSES) + ".")
    values: list[str] | None = Field(default=None, description="For status: the declared enum.")
    places: int | None = Field(default=None, ge=0, le=18, description="For amount and ratio: the decimal places "
                               "the spec prescribes; an actual value written with other places fails (wrong_places) "
                               "even when it is within tolerance.")
    tolerance: Tolerance | None = Field(default=None, description="For amount and ratio: the field's own bound "
                                        "in place of the class's default; null: the class's default.")
    nullable: bool = Field(default=False, description="The answer key may hold null here: that row has no such "
                           "value (an API answer without the field, a side-effect row beside step rows), and the "
                           "target's cell must then be null or blank too (else unexpected_value).")

    @model_validator(mode="after")
    def _values_only_for_status(self) -> FieldSpec:
        if self.values is not None and self.cls != "status":
            raise ValueError("'values' is only meaningful for class status")
        if self.places is not None and self.cls not in ("amount", "ratio"):
            raise ValueError("'places' is only meaningful for classes amount and ratio")
        if self.tolerance is not None and self.cls not in ("amount", "ratio"):
            raise ValueError(f"'tolerance' is only meaningful for classes amount and ratio, not {self.cls}")
        return self

    def rule(self) -> ToleranceClass:
        """The class this field is judged by: its class, with the field's own bound when it declares one."""
        return _rule(self.cls, self.tolerance)


class Selector(_Strict):
    """Rows of the actual table chosen by column values (all conditions must hold)."""

    where: dict[str, Match] = Field(default_factory=dict, description="column -> value or list of values")
    where_not: dict[str, Match] = Field(default_factory=dict, description="column -> excluded value(s)")


class Scope(_Strict):
    """The cases a relation checks, by how their run ended (the observed behaviour, which channel 2 holds to
    the sealed one: a target cannot leave a relation's scope without failing channel 2)."""

    behavior: Match = Field(description="Behaviour category, or list of them, a case's run must have ended in; "
                                        "the rows of a case whose run ended otherwise are not checked.")

    def admits(self, observed: set[str] | None) -> bool:
        """A case with no observed behaviour is checked: a filter may only ever leave out what it names."""
        allowed = self.behavior if isinstance(self.behavior, list) else [self.behavior]
        return not observed or any(b in allowed for b in observed)


class _Relation(_Strict):
    name: str = Field(description="Relation name, unique in the caliber; reports name its outcome by it.")
    scope: Scope | None = Field(default=None, description="Only the cases whose run ended in these behaviours "
                                "(needs 'behaviors'); null: every case.")


class SumOfParts(_Relation):
    """The parts' ``field`` adds up to the total row's ``total_field``, within the field's tolerance."""

    kind: Literal["sum_of_parts"] = Field(description="Relation kind: sum_of_parts.")
    field: str = Field(description="Amount, ratio or count field summed over the part rows.")
    total_field: str | None = Field(default=None, description="Defaults to 'field'.")
    by: list[str] = Field(default_factory=list, description="Check separately within each group of these columns.")
    parts: Selector = Field(description="Selects the part rows within each group.")
    total: Selector = Field(description="Selects the total row within each group; exactly one must match.")
    skip_empty: bool = Field(default=False, description="A group holding neither a part nor a total row is no "
                             "instance (cases of a service exam that page through nothing); default: every group "
                             "is checked, and one without its total row fails.")


class EqualPair(_Relation):
    """Two cases whose inputs differ only in a way the spec says is irrelevant give equal outputs."""

    kind: Literal["equal_pair"] = Field(description="Relation kind: equal_pair.")
    case_column: str = Field(description="Column naming the case a row belongs to.")
    pairs: list[tuple[str, str]] = Field(default_factory=list, description="Case pairs; a build adds generated ones.")
    fields: list[str] | None = Field(default=None, description="Fields compared; default all caliber fields.")
    order_insensitive: bool = Field(default=True, description="Compare rows as a multiset, not a sequence.")
    rows: Selector = Field(default_factory=Selector, description="The rows of each case compared (default all), "
                           "e.g. only the side-effect rows of a replayed request.")


class Idempotent(_Relation):
    """Replaying the same input (``--replay``) gives the same table, row for row."""

    kind: Literal["idempotent"] = Field(description="Relation kind: idempotent.")
    fields: list[str] | None = Field(default=None, description="Fields that must be equal in the replay, with no "
                                                               "tolerance; default all caliber fields.")


class Monotone(_Relation):
    """A superset input never shrinks a count: for each (subset, superset) case pair, row by row."""

    kind: Literal["monotone"] = Field(description="Relation kind: monotone.")
    case_column: str = Field(description="Column naming the case a row belongs to.")
    field: str = Field(description="Count field that must not shrink from the subset case to the superset case.")
    pairs: list[tuple[str, str]] = Field(default_factory=list,
                                         description="(subset case, superset case) pairs; a build adds generated ones.")


class Ordered(_Relation):
    """The selected rows of each group appear in the order of ``field`` (as written, compared as text)."""

    kind: Literal["ordered"] = Field(description="Relation kind: ordered.")
    field: str = Field(description="Column whose values must not decrease from row to row (code-point order).")
    by: list[str] = Field(default_factory=list, description="Check separately within each group of these columns.")
    rows: Selector = Field(default_factory=Selector, description="The rows that must be in order (default all).")
    descending: bool = Field(default=False, description="Values must not increase instead.")


def _shorthand(value: object) -> object:
    return {"class": value} if isinstance(value, str) else value


# ``avg: amount`` is shorthand for ``avg: {class: amount}``; the exported schema admits both
FieldEntry = Annotated[FieldSpec, BeforeValidator(_shorthand, json_schema_input_type=FieldSpec | ClassName)]

Relation = Annotated[SumOfParts | EqualPair | Idempotent | Monotone | Ordered, Field(discriminator="kind")]


class Behaviors(_Strict):
    """Channel 2: the expected behaviour category per case, compared for equality."""

    key: list[str] = Field(default_factory=lambda: ["case"], description="Key columns of the behaviour tables.")
    field: str = Field(default="behavior", description="Column holding the behaviour category; not a key column.")
    values: list[str] = Field(min_length=1, description="The closed set of behaviour categories.")


class Drift(_Strict):
    """When differences inside tolerance count as a systematic defect."""

    min_cases: int = Field(default=3, ge=1, description="Fewest non-zero in-tolerance differences to judge.")
    direction_share: float = Field(default=0.9, gt=0.5, le=1.0,
                                   description="Share of them pointing one way that makes the drift systematic.")
    gate: bool = Field(default=True, description="A systematic drift fails the score.")


class Caliber(_Strict):
    """The scoring contract."""

    schema_version: Literal[1] = Field(default=1, description="Version of the caliber format.")
    key: list[str] = Field(min_length=1, description="Columns that together identify a row: unique, never blank "
                                                     "(unless 'blank_keys' says so), and not scored fields.")
    blank_keys: list[str] | None = Field(default=None, description="Key columns in which a blank string (empty "
                                         "or spaces) is a value, e.g. the group of rows that have none; a null or "
                                         "an absent column is still no value. In CSV, which has no null, an empty "
                                         "cell of such a column is the empty string.")
    fields: dict[str, FieldEntry] = Field(min_length=1, description="field -> class, or {class, values, places, "
                                          "tolerance}.")
    behaviors: Behaviors | None = Field(default=None, description="Channel 2; null: behaviours are not scored.")
    relations: list[Relation] = Field(default_factory=list, description="Channel 3; empty: no relation is checked.")
    drift: Drift = Field(default_factory=Drift, description="How the drift audit of amount and ratio fields judges.")

    @model_validator(mode="after")
    def _consistent(self) -> Caliber:
        if len(set(self.key)) != len(self.key):
            raise ValueError(f"key {self.key} names a column twice")
        pattern = next((c for c in (*self.key, *self.fields) if c.startswith("^") and c.endswith("$")), None)
        if pattern is not None:  # polars reads such a name as a regular expression, matching other columns too
            raise ValueError(f"column {pattern!r} is written as a regular expression (^...$): rename the column")
        stray = [c for c in self.blank_keys or [] if c not in self.key]
        if stray:
            raise ValueError(f"blank_keys: {stray[0]!r} is not a key column (key: {self.key})")
        if self.behaviors is not None and self.behaviors.field in self.behaviors.key:
            raise ValueError(f"behaviors: {self.behaviors.field!r} is both the key and the behaviour field")
        overlap = set(self.key) & set(self.fields)
        if overlap:
            raise ValueError(f"column {sorted(overlap)[0]!r} is both a key and a scored field")
        names = [r.name for r in self.relations]
        if len(set(names)) != len(names):
            raise ValueError("relation names must be unique")
        for rel in self.relations:
            _check_scope(rel, self.behaviors, self.key)
            if isinstance(rel, Ordered):
                if rel.field not in (*self.key, *self.fields):
                    raise ValueError(f"relation {rel.name!r} orders by {rel.field!r}, which is neither a key column "
                                     "nor a declared field")
                continue
            _check_relation_fields(rel, self.fields)
        return self


def _check_relation_fields(rel: SumOfParts | EqualPair | Idempotent | Monotone, fields: dict[str, FieldSpec]) -> None:
    used: list[str] = []
    if isinstance(rel, SumOfParts):
        used = [rel.field, rel.total_field or rel.field]
    elif isinstance(rel, Monotone):
        used = [rel.field]
    elif rel.fields is not None:
        used = rel.fields
    for name in used:
        if name not in fields:
            raise ValueError(f"relation {rel.name!r} uses field {name!r}, which 'fields' does not declare")
    if isinstance(rel, SumOfParts) and fields[rel.field].cls not in ("amount", "ratio", "count"):
        raise ValueError(f"relation {rel.name!r}: sum_of_parts needs an amount, ratio or count field")
    if isinstance(rel, Monotone) and fields[rel.field].cls != "count":
        raise ValueError(f"relation {rel.name!r}: monotone needs a count field")


def _check_scope(rel: _Relation, behaviors: Behaviors | None, key: list[str]) -> None:
    """A scope reads the observed behaviour of each row's case: it needs the behaviour channel, and rows that
    carry the behaviour tables' key (for a pair relation, its case column alone)."""
    if rel.scope is None:
        return
    if behaviors is None:
        raise ValueError(f"relation {rel.name!r} has a scope, which needs a 'behaviors' section")
    named = rel.scope.behavior if isinstance(rel.scope.behavior, list) else [rel.scope.behavior]
    unknown = [b for b in named if b not in behaviors.values]
    if unknown:
        raise ValueError(f"relation {rel.name!r}: scope behaviour {unknown[0]!r} is not one of the declared "
                         f"behaviors {behaviors.values}")
    if not set(behaviors.key) <= set(key):
        raise ValueError(f"relation {rel.name!r} has a scope, but the behaviour key {behaviors.key} is not part "
                         f"of the caliber's key {key}, so a row's case cannot be told")
    if isinstance(rel, EqualPair | Monotone) and behaviors.key != [rel.case_column]:
        raise ValueError(f"relation {rel.name!r} has a scope, which for a pair relation needs the behaviour key "
                         f"to be its case column [{rel.case_column!r}], not {behaviors.key}")


def load_caliber(path: Path) -> tuple[Caliber, str]:
    """The caliber at ``path`` and the SHA-256 of its bytes."""
    caliber = _yamldoc.load(path, Caliber)
    return caliber, hashlib.sha256(path.read_bytes()).hexdigest()
