"""YAML documents read into pydantic models, with every error pointing at file:line.

PyYAML silently keeps the last of two equal mapping keys and pydantic reports errors by location
path, not by line; this module closes both gaps so that a bad caliber or preset is one clear line.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ._errors import MalformedInput, UsageError

M = TypeVar("M", bound=BaseModel)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Loc = tuple[str | int, ...]


def load(path: Path, model: type[M]) -> M:
    """Parse ``path`` as YAML and validate it as ``model``; errors name file:line and field."""
    data, lines = _parsed(_read(path), str(path))
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as exc:
        raise _first_error(exc, lines, path) from None


@lru_cache(maxsize=256)
def _parsed(text: str, where: str) -> tuple[Any, dict[_Loc, int]]:
    """The document and the line of every node (cached: a run reads the same caliber many times; the
    result is only ever validated, never changed)."""
    path = Path(where)
    try:
        node = yaml.compose(text, Loader=_LOADER)
        data = yaml.load(text, Loader=_LOADER)  # a safe loader: libyaml's when present
    except RecursionError:
        raise MalformedInput("YAML nests too deeply (a recursive alias?)", where=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise MalformedInput(f"not valid YAML ({getattr(exc, 'problem', exc)})", where=f"{path}{line}") from None
    lines: dict[_Loc, int] = {}
    try:
        if node is not None:
            _index(node, (), lines, path)
    except RecursionError:
        raise MalformedInput("YAML nests too deeply (a recursive alias?)", where=str(path)) from None
    return data, lines


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path} does not exist", hint="check the path") from None
    except UnicodeDecodeError as exc:
        raise MalformedInput(f"not UTF-8 at byte {exc.start}", where=str(path)) from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None


def _index(node: yaml.Node, loc: _Loc, lines: dict[_Loc, int], path: Path) -> None:
    lines[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                where = f"{path}:{key_node.start_mark.line + 1}"
                raise MalformedInput(f"key {key!r} repeated (first at line {seen[key]})", where=where)
            seen[key] = key_node.start_mark.line + 1
            _index(value_node, (*loc, key), lines, path)
    elif isinstance(node, yaml.SequenceNode):
        for i, child in enumerate(node.value):
            _index(child, (*loc, i), lines, path)


def _first_error(exc: ValidationError, lines: dict[_Loc, int], path: Path) -> MalformedInput:
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    line = _line_for(loc, lines)
    field = ".".join(str(p) for p in loc) or "(document)"
    value = f" (value {err['input']!r})" if "input" in err and not isinstance(err["input"], dict) else ""
    return MalformedInput(f"{field}: {err['msg']}{value}", where=f"{path}:{line}")


def _line_for(loc: _Loc, lines: dict[_Loc, int]) -> int:
    # pydantic adds tags for unions (e.g. 'sum_of_parts'); fall back to the longest known prefix
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1
