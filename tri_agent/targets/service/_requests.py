"""A service case: the request sequence an exam sends, and the rows read back from its answers and its database.

Each case of a service target keeps its plan in ``requests.json`` in its inputs folder::

    {"schema_version": 1, "clock": "2026-03-01T09:00:00Z",
     "steps": [
       {"id": "login", "method": "POST", "path": "/login", "json": {"user": "ana"},
        "capture": {"token": "$.token"}},
       {"id": "pay", "method": "POST", "path": "/payments", "repeat": 2,
        "headers": {"Authorization": "Bearer {{token}}", "Idempotency-Key": "k-1"},
        "json": {"amount": "10.00"}, "select": {"balance": "$.balance", "where": "header:Location"}}],
     "queries": [{"name": "payments", "sql": "SELECT id, amount FROM payments ORDER BY id"}],
     "volatile": [{"pattern": "\"took_ms\": [0-9]+", "as": "\"took_ms\": 0"}]}

Rows (every cell text, or null where a row has no such value), keyed by ``case``, ``step`` and ``n``:

- one per answer to a step: ``n`` is the repetition (``0`` then ``1``... for a step with ``repeat``), ``status`` the
  HTTP status code, and one column per ``select`` entry: a JSONPath into the JSON body (a string as itself,
  anything else as JSON text, numbers exactly as the service wrote them), ``exists:`` and a JSONPath (``true``
  or ``false``: whether a value other than null is there), or ``header:Name``;
- one per row a side-effect query returns after the case, read from the database by the orchestrator, never by
  the service: ``step`` is the query's name, ``n`` the row number, one column per result column.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from ... import _yamldoc
from ..._model import Written
from ...scoring._tables import JsonNumber, to_json_text, unique_keys_object
from .._specs import Cell
from ._client import _NOTHING, jsonpath

PLAN_FILE = "requests.json"
MAX_BODY = 64 << 20
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
KEY = ("case", "step", "n")
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


class _Strict(Written):
    model_config = ConfigDict(frozen=True, populate_by_name=True)


class Step(_Strict):
    """One request of a case (``{{name}}`` anywhere in it: a value an earlier step captured)."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:-]+$", description="Step name, unique in the case; "
                    "the rows' ``step`` column.")
    method: Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] = Field(
        default="GET", description="HTTP method.")
    path: str = Field(pattern=r"^/[^\x00-\x20\x7f]*$", description="Request path, starting with '/' (no spaces or "
                      "control characters: escape them).")
    query: dict[str, str | list[str]] = Field(default_factory=dict, description="Query parameters; a list sends "
                                              "the parameter once per value, in order (?tag=a&tag=b).")
    headers: dict[str, str] = Field(default_factory=dict, description="Request headers (names are tokens; values "
                                    "hold no line breaks or other control characters).")
    json_body: Any = Field(default=None, alias="json", description="A JSON body (sent with Content-Type "
                           "application/json unless a header says otherwise).")
    text: str | None = Field(default=None, description="A raw body instead (malformed JSON, any bytes as text).")
    times: int = Field(default=1, ge=1, le=64 << 20, description="The raw body repeated this many times (oversized "
                       "bodies without an oversized exam).")
    capture: dict[str, str] = Field(default_factory=dict, description="Name -> JSONPath into the first answer's "
                                    "body; later steps use the value as {{name}}.")
    select: dict[str, str] = Field(default_factory=dict, description="Row column -> JSONPath into the body, "
                                   "'exists:' and a JSONPath ('true' when the body holds a value other than null "
                                   "there, else 'false': for opaque values such as cursors), 'count:' and a JSONPath "
                                   "(how many values it selects: the items of a list, 1 for any other value, 0 for "
                                   "none), or 'header:Name'; in an exploded step, '@' instead of '$' starts a path "
                                   "at the row's item.")
    explode: str | None = Field(default=None, description="JSONPath to a list in the body: one row per item "
                                "instead of one per answer, its `n` the answer's repetition, a dot and the item's "
                                "position (0.0, 0.1...) or the value of its `item_key` field; no item, no row.")
    item_key: str | None = Field(default=None, min_length=1, description="Exploded steps: the item field that "
                                 "names its row (unique within the answer), instead of its position.")
    repeat: int = Field(default=1, ge=1, le=10, description="The same request sent this many times (replay, "
                        "idempotency); one row per answer.")
    clock: str | None = Field(default=None, description="Move the service's clock to this value before the step.")

    @model_validator(mode="after")
    def _one_body(self) -> Step:
        if "json_body" in self.model_fields_set and self.text is not None:
            raise ValueError("a step sends either 'json' or 'text', not both")
        if self.text is not None and len(self.text.encode("utf-8")) * self.times > MAX_BODY:
            raise ValueError(f"text x times is past {MAX_BODY} bytes: an oversized body needs no more")
        return self

    @field_validator("headers")
    @classmethod
    def _clean_headers(cls, headers: dict[str, str]) -> dict[str, str]:
        for name, value in headers.items():
            if not _TOKEN.fullmatch(name) or _CONTROL.search(value):
                raise ValueError(f"header {name!r}: a name is a token, a value holds no control characters")
        return headers

    @field_validator("select")
    @classmethod
    def _selectable(cls, select: dict[str, str]) -> dict[str, str]:
        for column, source in select.items():
            if column in KEY or column == "status":
                raise ValueError(f"select: {column!r} is a column every row already has")
            if not source.startswith("header:"):
                jsonpath({}, _path(source))  # a path outside the subset is refused here, not later
        return select

    @model_validator(mode="after")
    def _explodable(self) -> Step:
        if self.explode is not None:
            jsonpath({}, self.explode)
        elif self.item_key is not None or any(_at_item(s) for s in self.select.values()):
            raise ValueError("item_key and '@' paths are for an exploded step (explode: a JSONPath to a list)")
        return self

    def wire(self) -> dict[str, Any]:
        """What the driver in the jail sends: the request, its captures, repetition and clock."""
        out = self.model_dump(exclude={"select", "json_body", "explode", "item_key"}, exclude_none=True)
        if "json_body" in self.model_fields_set:
            out["json"] = self.json_body
        # only the headers a row reads come back: the rest (Date, Server) would make every run differ
        out["read_headers"] = sorted({v.removeprefix("header:").lower() for v in self.select.values()
                                      if v.startswith("header:")})
        return out


class Query(_Strict):
    """A side-effect query, run against the case's database after the service has stopped."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:-]+$", description="The rows' ``step`` column.")
    sql: str = Field(min_length=1, description="One read-only SQL statement.")


class Volatile(_Strict):
    """A part of every read value that differs between runs (an id, a time, a token), replaced before scoring."""

    pattern: str = Field(min_length=1, description="Regular expression.")
    as_: str = Field(default="<volatile>", alias="as", description="What every match becomes, taken literally (no "
                     "group references).")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from None
        return pattern


class RequestPlan(_Strict):
    """``requests.json``: one case of a service target."""

    schema_version: Literal[1] = Field(default=1, description="Version of the request plan format.")
    clock: str | None = Field(default=None, description="The service's clock when it starts (the target declares "
                              "how it is set).")
    steps: list[Step] = Field(min_length=1, description="Requests, in order.")
    queries: list[Query] = Field(default_factory=list, description="Side-effect queries after the case.")
    volatile: list[Volatile] = Field(default_factory=list, description="Rules applied, inside the case's jail, to "
                                     "every answer's body and read headers before anything reads or records them "
                                     "(a timing field, a generated id); captures read the answer as it came.")

    @model_validator(mode="after")
    def _unique(self) -> RequestPlan:
        unique_names([s.id for s in self.steps] + [q.name for q in self.queries])
        return self

    def uses_clock(self) -> bool:
        return self.clock is not None or any(s.clock is not None for s in self.steps)


def unique_names(names: list[str]) -> None:
    """A case's step and query names key its rows: each may be used once (ValueError naming the first repeat)."""
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"step and query names must be unique in a case: {repeated[0]!r} is used twice")


def load_plan(inputs: Path) -> RequestPlan:
    """The case's plan, or MalformedInput naming the file and the field."""
    return _yamldoc.load(inputs / PLAN_FILE, RequestPlan)




def step_rows(case: str, plan: RequestPlan, answers: list[dict[str, Any]]) -> list[dict[str, Cell]]:
    """One row per answer the driver reported, or per listed item of an exploded step (an error line has no row:
    its rows count as missing)."""
    steps = {s.id: s for s in plan.steps}
    rows: list[dict[str, Cell]] = []
    for answer in answers:
        step = steps.get(str(answer.get("step")))
        if step is None or "status" not in answer or not isinstance(answer.get("n"), int):
            continue
        base: dict[str, Cell] = {"case": case, "step": step.id, "n": str(answer["n"]), "status": str(answer["status"])}
        body = _document(answer.get("body"))
        headers = answer["headers"] if isinstance(answer.get("headers"), dict) else {}
        for name, item in _items(step, body):
            row = {**base, "n": f"{base['n']}.{name}"} if step.explode else dict(base)
            for column, source in step.select.items():
                row[column] = _selected(source, item if _at_item(source) else body, headers)
            rows.append(row)
    return rows


def _items(step: Step, body: Any) -> list[tuple[str, Any]]:
    """The answer itself (no explode), or its listed items by position or by their ``item_key``."""
    if step.explode is None:
        return [("", body)]
    found = _NOTHING if body is _NOTHING else jsonpath(body, step.explode)
    listed = found if isinstance(found, list) else []
    if step.item_key is None:
        return [(str(i), item) for i, item in enumerate(listed)]
    return [(_key_of(item, step.item_key, i), item) for i, item in enumerate(listed)]


def _key_of(item: Any, field: str, position: int) -> str:
    value = item.get(field) if isinstance(item, dict) else None
    if value is None:
        return f"#{position}"  # an item without its key still gets a row, which its absence from the key fails
    return value if isinstance(value, str) else to_json_text(value)


def _at_item(source: str) -> bool:
    return source.removeprefix("exists:").removeprefix("count:").startswith("@")


def _path(source: str) -> str:
    """The JSONPath of a select source (after its ``exists:`` or ``count:``), '@' read as '$' for validation."""
    path = source.removeprefix("exists:").removeprefix("count:")
    return "$" + path[1:] if path.startswith("@") else path


def _document(body: Any) -> Any:
    if not isinstance(body, str):
        return _NOTHING
    try:
        return json.loads(body, parse_float=JsonNumber, parse_int=JsonNumber, object_pairs_hook=unique_keys_object)
    except (ValueError, RecursionError):
        return _NOTHING


def _selected(source: str, body: Any, headers: dict[str, Any]) -> Cell:
    if source.startswith("header:"):
        value = headers.get(source.removeprefix("header:").lower())
        return value if isinstance(value, str) else None
    if source.startswith("exists:"):  # whether the answer holds a value there (an opaque cursor, a token)
        found = _NOTHING if body is _NOTHING else jsonpath(body, _path(source))
        return "false" if found is _NOTHING or found is None else "true"
    if source.startswith("count:"):  # how many values it selects: a listing's length, without its items
        found = _NOTHING if body is _NOTHING else jsonpath(body, _path(source))
        return str(len(found) if isinstance(found, list) else 0 if found is _NOTHING or found is None else 1)
    if body is _NOTHING:
        return None
    found = jsonpath(body, _path(source))
    if found is _NOTHING or found is None:
        return None
    return found if isinstance(found, str) else to_json_text(found)


def query_rows(case: str, name: str, columns: list[str], values: list[tuple[Any, ...]]) -> list[dict[str, Cell]]:
    """The rows of one side-effect query; a result column may not be named like a key column (it would move
    the row onto another step's key): ValueError."""
    clash = [c for c in columns if c in KEY]
    if clash or len(set(columns)) != len(columns):
        raise ValueError(f"query {name}: result columns must be unique and not named case, step or n "
                         f"({', '.join(clash) or 'a repeated name'}); rename them with AS")
    return [{"case": case, "step": name, "n": str(i), **{c: _sql_text(v) for c, v in zip(columns, row, strict=True)}}
            for i, row in enumerate(values)]


def _sql_text(value: Any) -> Cell:
    if value is None:
        return None
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def read_answers(stdout: bytes) -> list[dict[str, Any]]:
    """The driver's lines; a line that is not a JSON object (a hostile service can write there too) is skipped."""
    answers = []
    for line in stdout.decode("utf-8", "replace").splitlines():
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(item, dict):
            answers.append(item)
    return answers
