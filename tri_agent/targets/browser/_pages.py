"""A browser case: the UI steps an exam performs through a real page, and the rows read back from it.

Each case of a browser target keeps its plan in ``ui.json`` in its inputs folder::

    {"schema_version": 1, "clock": "2026-03-01T09:00:00Z",
     "steps": [
       {"id": "open", "do": "goto", "path": "/signup"},
       {"id": "name", "do": "fill", "target": "label:Name", "value": "Zoë"},
       {"id": "plan", "do": "select", "target": "label:Plan", "value": "pro"},
       {"id": "send", "do": "click", "target": "role:button:Sign up", "replay": 1,
        "read": {"summary": "tree:role:region:Summary", "where": "url"}},
       {"id": "api", "do": "request", "path": "/api/me", "select": {"plan": "$.plan"}}],
     "volatile": [{"pattern": "[0-9a-f]{32}", "as": "<token>"}],
     "queries": [{"name": "members", "sql": "SELECT name, plan FROM members ORDER BY id"}]}

``ACTIONS`` is the closed set of what a step does; ``LOCATORS`` how a step names an element (by role and
accessible name, label, text, placeholder, test id, or CSS); ``READS`` what a step reads after it acted.

Rows, every cell text, keyed by ``case``, ``step`` and ``n`` (as a service case's):

- one per step that reads (``n`` is ``0``): one column per ``read`` entry; a ``request`` step (sent by the browser
  context, with its cookies) also has ``status`` and its ``select`` columns, exactly as a service step's;
- one per row a side-effect query returns after the case (the database, read by the orchestrator).

A ``tree:`` read is the element's accessibility tree (the browser's, as Playwright reports it) turned into
canonical JSON: a list of nodes ``{"role", "name", "text", <state>: value, "children"}`` with only what the node
has. It is compared whole: a golden tree that holds only part of the region does not match it. Volatile parts
(ids, times, tokens) are replaced by the plan's ``volatile`` rules (their ``as`` text taken literally) in every
page read, and ``drop`` removes named node properties (``url``) before anything is compared. That work is done
by the pilot inside the case's jail (``_trees``), under the case's deadline: the orchestrator only checks that
each cell is text and each tree JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from ... import _yamldoc
from ..._model import Written
from .._specs import Cell
from ..service._requests import KEY, Query, Volatile, _document, _selected, unique_names
from ._trees import TEXT_CAP

PAGE_FILE = "ui.json"

# action -> the fields a step of it must have (besides id); the rest of the step's fields must be absent
ACTIONS: dict[str, tuple[str, ...]] = {
    "goto": ("path",),          # open a path of the app
    "fill": ("target", "value"),  # type into a field (its previous content replaced)
    "select": ("target", "value"),  # choose an option of a select by its label or value
    "check": ("target",),       # tick a checkbox or radio button
    "uncheck": ("target",),
    "click": ("target",),       # click; ``replay`` re-sends the form request the click made (double submit)
    "press": ("target", "key"),  # a key on an element (Enter submits)
    "upload": ("target", "file"),  # a file of the case's inputs into a file field
    "wait": ("target",),        # until the element is visible (the step fails when it never is)
    "back": (),                 # the browser's back button
    "reload": (),
    "unguard": ("target",),     # switch off a form's client-side validation (novalidate; required, pattern,
                                # min/max/length limits and input types removed): the server must check alone
    "request": ("path",),       # an HTTP request from the page's context (its cookies): the API channel
    "pause": (),                # nothing: a place to move the clock or read
}
LOCATORS = ("role", "label", "text", "placeholder", "testid", "css")
READS = ("tree", "text", "value", "count", "visible", "url", "title")
_OPTIONAL = ("target", "value", "key", "path", "file")


class _Strict(Written):
    model_config = ConfigDict(frozen=True, populate_by_name=True)


def check_locator(spec: str) -> str:
    """``role:button:Save``, ``label:Name``, ``text:Thanks``, ``placeholder:…``, ``testid:…``, ``css:form``."""
    kind, _, rest = spec.partition(":")
    if kind not in LOCATORS or not rest:
        raise ValueError(f"locator {spec!r}: one of {', '.join(k + ':…' for k in LOCATORS)}")
    if kind == "role" and not re.fullmatch(r"[a-z]+", rest.partition(":")[0]):
        raise ValueError(f"locator {spec!r}: role:<aria role>[:<accessible name>]")
    return spec


def check_read(source: str) -> str:
    kind, _, rest = source.partition(":")
    if kind not in READS:
        raise ValueError(f"read {source!r}: one of {', '.join(READS)} (url and title alone; the rest with a locator)")
    if kind in ("url", "title"):
        if rest:
            raise ValueError(f"read {source!r}: {kind} takes no locator")
    elif not rest:
        raise ValueError(f"read {source!r}: {kind} needs a locator ({kind}:<locator>)")
    else:
        check_locator(rest)
    return source


class UiStep(_Strict):
    """One step of a browser case (see ``ACTIONS`` for what each ``do`` needs)."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:-]+$", description="Step name, unique in the case; the "
                    "rows' ``step`` column.")
    do: Literal["goto", "fill", "select", "check", "uncheck", "click", "press", "upload", "wait", "back", "reload",
                "unguard", "request", "pause"] = Field(description="What the step does (the ACTIONS table).")
    target: str | None = Field(default=None, description="The element: role:<role>[:<name>], label:, text:, "
                               "placeholder:, testid: or css:.")
    value: str | None = Field(default=None, description="fill: the text; select: the option's label or value.")
    key: str | None = Field(default=None, description="press: the key (Enter, Tab, Escape, a letter...).")
    path: str | None = Field(default=None, pattern=r"^/[^\x00-\x20\x7f]*$", description="goto and request: the "
                             "path in the app.")
    file: str | None = Field(default=None, description="upload: a file of the case's inputs folder.")
    method: Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] = Field(
        default="GET", description="request: the HTTP method.")
    json_body: Any = Field(default=None, alias="json", description="request: a JSON body.")
    select: dict[str, str] = Field(default_factory=dict, description="request: row column -> JSONPath into the "
                                   "answer, 'exists:'+JSONPath or 'header:Name' (as a service step's).")
    replay: int = Field(default=0, ge=0, le=5, description="click: the form request the click sent, sent again "
                        "this many times from the same page (its cookies, its body): a double submit.")
    clock: str | None = Field(default=None, description="Move the app's clock to this value before the step.")
    read: dict[str, str] = Field(default_factory=dict, description="After the step: row column -> tree:<locator>, "
                                 "text:<locator>, value:<locator>, count:<locator>, visible:<locator>, url or "
                                 "title.")

    @model_validator(mode="after")
    def _fits_action(self) -> UiStep:
        needed = ACTIONS[self.do]
        missing = [f for f in needed if getattr(self, f) is None]
        extra = [f for f in _OPTIONAL if f not in needed and getattr(self, f) is not None]
        if missing or extra:
            what = f"needs {', '.join(missing)}" if missing else f"takes no {', '.join(extra)}"
            raise ValueError(f"step {self.id!r}: {self.do} {what}")
        if self.do != "request" and (self.select or "json_body" in self.model_fields_set or self.method != "GET"):
            raise ValueError(f"step {self.id!r}: method, json and select belong to request steps")
        if self.replay and self.do != "click":
            raise ValueError(f"step {self.id!r}: replay belongs to click steps")
        parts = PurePosixPath(self.file or "").parts
        if self.file is not None and (not parts or PurePosixPath(self.file).is_absolute() or ".." in parts):
            raise ValueError(f"step {self.id!r}: file {self.file!r} must name a file inside the case's inputs")
        both = sorted(set(self.read) & set(self.select))
        if both:
            raise ValueError(f"step {self.id!r}: column {both[0]!r} is both read and selected")
        return self

    @field_validator("target")
    @classmethod
    def _locator(cls, target: str | None) -> str | None:
        return None if target is None else check_locator(target)

    @field_validator("read")
    @classmethod
    def _reads(cls, read: dict[str, str]) -> dict[str, str]:
        for column, source in read.items():
            if column in (*KEY, "status"):
                raise ValueError(f"read: {column!r} is a column every row already has")
            check_read(source)
        return read

    @field_validator("select")
    @classmethod
    def _selects(cls, select: dict[str, str]) -> dict[str, str]:
        from ..service._requests import Step  # one rule for select, a service step's

        Step(id="x", path="/", select=select)
        return select

    def reads(self) -> bool:
        return bool(self.read) or self.do == "request"

    def wire(self) -> dict[str, Any]:
        out = self.model_dump(exclude={"json_body", "select", "read"}, exclude_none=True)
        if "json_body" in self.model_fields_set:
            out["json"] = self.json_body
        out["read"] = dict(self.read)
        # only the headers a row reads come back (see the service steps)
        out["select_headers"] = sorted({v.removeprefix("header:").lower() for v in self.select.values()
                                        if v.startswith("header:")})
        return out


class UiPlan(_Strict):
    """``ui.json``: one case of a browser target."""

    schema_version: Literal[1] = Field(default=1, description="Version of the UI plan format.")
    clock: str | None = Field(default=None, description="The app's clock when it starts (the target declares how "
                              "it is set).")
    steps: list[UiStep] = Field(min_length=1, description="UI steps, in order, in one fresh browser context.")
    volatile: list[Volatile] = Field(default_factory=list, description="Rules applied to every read value.")
    drop: list[str] = Field(default_factory=list, description="Node properties removed from every tree read "
                            "(e.g. url).")
    queries: list[Query] = Field(default_factory=list, description="Side-effect queries after the case.")

    @model_validator(mode="after")
    def _unique(self) -> UiPlan:
        unique_names([s.id for s in self.steps] + [q.name for q in self.queries])
        return self

    def uses_clock(self) -> bool:
        return self.clock is not None or any(s.clock is not None for s in self.steps)


def load_page_plan(inputs: Path) -> UiPlan:
    """The case's UI plan, or MalformedInput naming the file and the field."""
    return _yamldoc.load(inputs / PAGE_FILE, UiPlan)


# --- rows --------------------------------------------------------------------------------------------------------

def page_rows(case: str, plan: UiPlan, answers: list[dict[str, Any]]) -> list[dict[str, Cell]]:
    """One row per reading step the pilot reported; an error line has no row (its rows count as missing)."""
    steps = {s.id: s for s in plan.steps}
    rows: list[dict[str, Cell]] = []
    for answer in answers:
        step = steps.get(str(answer.get("step")))
        reads = answer.get("reads")
        if step is None or not step.reads() or not isinstance(reads, dict) or answer.get("n") != 0:
            continue
        row: dict[str, Cell] = {"case": case, "step": step.id, "n": "0"}
        for column, source in step.read.items():
            row[column] = _read_cell(source, reads.get(column))
        if step.do == "request" and isinstance(answer.get("status"), int):
            row["status"] = str(answer["status"])
            body = _document(answer.get("body"))
            headers = answer["headers"] if isinstance(answer.get("headers"), dict) else {}
            for column, source in step.select.items():
                row[column] = _selected(source, body, headers)
        rows.append(row)
    return rows


def _read_cell(source: str, value: Any) -> Cell:
    """A cell as the pilot reported it: text or null; a tree must be the JSON the pilot made of it."""
    if not isinstance(value, str) or len(value) > 4 * TEXT_CAP:  # a tree's JSON may outgrow its snapshot
        return None
    if source.startswith("tree:"):
        try:
            json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value
