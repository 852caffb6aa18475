"""YAML documents read into pydantic models, with every error pointing at file:line.

PyYAML silently keeps the last of two equal mapping keys and pydantic reports errors by location
path, not by line; this module closes both gaps so that a bad caliber or preset is one clear line.

Every YAML file the project reads comes through here, and it is bounded (``LIMITS``) before anything walks
it: a document's size, its nodes counted with every alias expanded (an alias bomb is a few lines that
expand to billions), its nesting depth, the length of one scalar and of a number literal. Past a bound,
the file is malformed input (exit 3) with file:line, never a hang or an internal error.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ._errors import MalformedInput, UsageError
from ._model import known_keys, nearest

M = TypeVar("M", bound=BaseModel)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Loc = tuple[str | int, ...]
_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
_SCALARS = yaml.constructor.SafeConstructor()  # reads one scalar alone, so a value its tag cannot read has a line


@dataclass(frozen=True)
class Limits:
    """The bounds every YAML document is held to (a project's files are small; these leave room)."""

    document_bytes: int = 4 << 20
    nodes: int = 200_000  # with every alias expanded
    depth: int = 64
    scalar_chars: int = 1 << 20
    number_chars: int = 64


LIMITS = Limits()


def load(path: Path, model: type[M]) -> M:
    """Parse ``path`` as YAML and validate it as ``model``; errors name file:line and field."""
    return validate(_read(path), str(path), model)


def validate(text: str, where: str, model: type[M], first_line: int = 1) -> M:
    """``text`` (a YAML document, or one part of a file that starts at ``first_line`` of ``where``) validated
    as ``model``; errors name where:line and field, an unknown key the nearest known one."""
    data, lines = _parsed(text, where)
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as exc:
        raise explained(exc, model, where, {k: v + first_line - 1 for k, v in lines.items()}) from None


@lru_cache(maxsize=256)
def data(text: str, where: str) -> Any:
    """The data of one YAML document, within ``LIMITS``: for formats that validate it themselves."""
    return _parsed(text, where)[0]


def _parsed(text: str, where: str) -> tuple[Any, dict[_Loc, int]]:
    """The document and the line of every node (cached: a run reads the same caliber many times; the
    result is only ever validated, never changed)."""
    path = Path(where)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:  # a lone surrogate, in a str built in code: libyaml cannot take it
        raise MalformedInput(f"not Unicode text (a lone surrogate at character {exc.start})", where=where) from None
    if size > LIMITS.document_bytes:
        raise MalformedInput(f"the document is larger than {LIMITS.document_bytes} bytes", where=where,
                             hint="a YAML file here is configuration: keep data in the exam's inputs")
    try:
        node = yaml.compose(text, Loader=_LOADER)
        if node is not None:
            _bounded(node, where)
        data = yaml.load(text, Loader=_LOADER)  # a safe loader: libyaml's when present
    except RecursionError:
        raise MalformedInput("YAML nests too deeply (a recursive alias?)", where=str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())  # one line, whatever libyaml says
        raise MalformedInput(f"not valid YAML ({problem})", where=f"{path}{line}") from None
    lines: dict[_Loc, int] = {}
    try:
        if node is not None:
            _index(node, (), lines, path)
    except RecursionError:
        raise MalformedInput("YAML nests too deeply (a recursive alias?)", where=str(path)) from None
    return data, lines


def _bounded(root: yaml.Node, where: str) -> None:
    """Refuse a document past ``LIMITS`` before anything expands it: each node is visited once, its size
    with aliases expanded computed from its children's (an alias is the same node object, met again).

    A node entered but not yet sized is still being expanded: what is pushed above its ``done`` entry is its
    descendants, so meeting it again there is a cycle; once its ``done`` entry is popped, every child is sized."""
    size: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes when expanded, depth)
    entered: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in size:
            continue
        children = _children(node)
        if not done:
            if id(node) in entered:
                raise MalformedInput("YAML refers to itself (a recursive alias)", where=_at(where, node))
            entered.add(id(node))
            stack.append((node, True))
            stack += [(c, False) for c in children]  # a child already sized is skipped when popped
            continue
        size[id(node)] = (1 + sum(size[id(c)][0] for c in children),
                          1 + max((size[id(c)][1] for c in children), default=0))
        _check_node(node, size[id(node)], where)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _check_node(node: yaml.Node, measured: tuple[int, int], where: str) -> None:
    nodes, depth = measured
    if nodes > LIMITS.nodes:
        raise MalformedInput(f"YAML expands to more than {LIMITS.nodes} nodes (aliases expanded): an alias bomb?",
                             where=_at(where, node), hint="write the values out; aliases may not multiply")
    if depth > LIMITS.depth:
        raise MalformedInput(f"YAML nests deeper than {LIMITS.depth} levels", where=_at(where, node))
    if isinstance(node, yaml.ScalarNode):
        if len(node.value) > LIMITS.scalar_chars:
            raise MalformedInput(f"a value of {len(node.value)} characters (at most {LIMITS.scalar_chars})",
                                 where=_at(where, node))
        if node.tag in _NUMBER_TAGS and len(node.value) > LIMITS.number_chars:
            raise MalformedInput(f"a number literal of {len(node.value)} characters (at most "
                                 f"{LIMITS.number_chars})", where=_at(where, node),
                                 hint="quote it if it is text; no setting needs a number that long")
        read = _SCALARS.yaml_constructors.get(node.tag)
        try:
            if read is not None:
                read(_SCALARS, node)
        except (ValueError, LookupError, AttributeError) as exc:  # 2020-13-45, 0x_, !!bool maybe: not YAML's errors
            why = f" ({str(exc)[:120]})" if isinstance(exc, ValueError) else ""  # one line, however long the value
            shown = node.value if len(node.value) <= 60 else node.value[:57] + "..."
            raise MalformedInput(f"cannot read {shown!r} as {node.tag.removeprefix('tag:yaml.org,2002:')}{why}",
                                 where=_at(where, node), hint="quote it if it is text") from None


def _at(where: str, node: yaml.Node) -> str:
    return f"{where}:{node.start_mark.line + 1}"


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


def explained(exc: ValidationError, model: type[BaseModel], where: str,
              lines: dict[_Loc, int] | None = None) -> MalformedInput:
    """The first error of a validation as one line: the field, what is wrong, the value; for an unknown key, the
    nearest known one (first: a misspelt key is also a required one missing, and the key is the cause).
    ``lines`` (the line of each location) adds the line to ``where``."""
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(err["loc"])
    at = f"{where}:{_line_for(loc, lines)}" if lines is not None else where
    if err["type"] == "extra_forbidden":
        return unknown_key(model, loc, at)
    field = ".".join(str(p) for p in loc).encode("unicode_escape").decode("ascii") or "(document)"
    value = f" (value {err['input']!r})" if "input" in err and not isinstance(err["input"], dict) else ""
    return MalformedInput(f"{field}: {err['msg']}{value}", where=at)


def unknown_key(model: type[BaseModel], loc: _Loc, where: str) -> MalformedInput:
    """A key ``model`` does not know at ``loc`` (its last part): the key, the nearest known one, the known ones."""
    key, inside = str(loc[-1]), tuple(loc[:-1])
    near = nearest(model, inside, key)
    known = known_keys(model, inside)
    field = ".".join(str(p) for p in loc).encode("unicode_escape").decode("ascii")  # one line, whatever the key
    guess = f" (did you mean {near!r}?)" if near else ""
    return MalformedInput(f"{field}: unknown key {key!r}{guess}", where=where,
                          hint=f"the keys known here: {', '.join(known)}" if known else "remove the key")


def _line_for(loc: _Loc, lines: dict[_Loc, int]) -> int:
    # pydantic adds tags for unions (e.g. 'sum_of_parts'); fall back to the longest known prefix, else line 1
    while loc not in lines:
        if not loc:
            return 1
        loc = loc[:-1]
    return lines[loc]
