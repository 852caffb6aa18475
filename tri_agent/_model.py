"""The two kinds of on-disk model, and the one strictness rule they share.

Every format the project reads or writes is a pydantic model deriving from one of two bases, so the rule is in
the type and ``tests/test_model.py`` can walk the registry of formats and check it:

- :class:`Written`: a file a person or a role writes (``acceptance.yaml``, a target file, the exam's files, a
  recording of scripted roles, an agent's response, an LLM's ruling). An unknown key is refused: exit 3 naming
  the key, the file and its line, and the nearest known name ("did you mean ...?"). A misspelled key silently
  dropped would be a setting silently not applied.
- :class:`Record`: a file the engine writes and reads back (reports, summaries, trail entries, pins). An unknown
  key is refused too: the engine never writes one, so a record that holds one was written by someone else.

``known_keys`` and ``nearest`` give the names a model accepts at a location, for the message.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict


class Written(BaseModel):
    """Base of every file a person or a role writes: unknown keys are refused, with a suggestion."""

    model_config = ConfigDict(extra="forbid")


class Record(BaseModel):
    """Base of every file the engine writes and reads back: unknown keys are refused."""

    model_config = ConfigDict(extra="forbid")


def known_keys(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[str]:
    """The keys a mapping at ``loc`` inside a ``model`` document may hold (every model a union there could be),
    names and aliases, sorted; empty when ``loc`` leads to no model."""
    found: set[str] = set()
    for m in _models_at(model, loc):
        for name, info in m.model_fields.items():
            found.add(info.alias or name)
    return sorted(found)


def nearest(model: type[BaseModel], loc: tuple[str | int, ...], key: str) -> str | None:
    """The known key closest to the unknown ``key`` at ``loc`` (None when nothing is close)."""
    close = difflib.get_close_matches(key, known_keys(model, loc), n=1, cutoff=0.6)
    return close[0] if close else None


def _models_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> list[type[BaseModel]]:
    current: list[Any] = [model]
    for part in loc:
        current = [t for c in current for t in _step(c, part)]
    return [t for c in current for t in _alternatives(c) if _is_model(t)]


def _step(annotation: Any, part: str | int) -> list[Any]:
    """What a value at ``annotation`` holds under the key or index ``part``."""
    out = []
    for t in _alternatives(annotation):
        if _is_model(t):
            field = next((f for n, f in t.model_fields.items() if part in (n, f.alias)), None)
            if field is not None:
                out.append(field.annotation)
        elif typing.get_origin(t) in (list, tuple, set, frozenset) and isinstance(part, int):
            out += list(typing.get_args(t)[:1])
        elif typing.get_origin(t) is dict:
            out += list(typing.get_args(t)[1:2])
    return out


def _alternatives(annotation: Any) -> list[Any]:
    """The members of a union (nested, Optional, Annotated unwrapped), else the annotation itself."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _alternatives(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for a in typing.get_args(annotation) for t in _alternatives(a)]
    return [annotation]


def _is_model(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, BaseModel)
