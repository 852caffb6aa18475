"""What a browser case's reads become before they leave the case's jail: canonical accessibility trees, white
space collapsed, volatile parts replaced (by the cleaner ``client.py`` makes of the plan's rules).

The pilot runs this inside the case's jail (the file is copied beside it and loaded by its path, so it imports
only the standard library and PyYAML): the page decides how much work a read costs (a huge tree, text that makes
a volatile pattern backtrack), and that work belongs under the case's deadline, never in the orchestrator.
``_pages`` imports it too, for the plan's checks and the tests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import yaml

TEXT_CAP = 1 << 20  # characters of one raw read; a longer one is unreadable (null), never cut into a subset


def read_value(source: str, raw: str | None, drop: frozenset[str], clean: Callable[[str], str]) -> str | None:
    """A raw read as a row's cell: a ``tree:`` read as canonical JSON, a ``text:`` read with its white space
    collapsed, every value cleaned; null when there was nothing to read or too much."""
    if raw is None or len(raw) > TEXT_CAP:
        return None
    if source.startswith("tree:"):
        tree = normal_tree(raw, drop=drop, clean=clean)
        return None if tree is None else json.dumps(tree, ensure_ascii=False, sort_keys=True)
    if source.startswith("text:"):
        return clean(" ".join(raw.split()))
    return clean(raw)


# --- accessibility trees -------------------------------------------------------------------------------------------

class _SnapshotLoader(yaml.BaseLoader):
    """Every scalar stays text (no 'yes' -> True); an alias, which no snapshot holds, is refused (a page could
    otherwise make a small text expand into a huge tree)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise ValueError("an accessibility snapshot holds no YAML aliases")
        return super().compose_node(parent, index)


_HEADER = re.compile(r'^(?P<role>[A-Za-z]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?(?P<states>(?: \[[^\]]*\])*)$')
_STATE = re.compile(r"\[([^\]=]+)(?:=([^\]]*))?\]")


def normal_tree(snapshot: str, *, drop: frozenset[str] = frozenset(),
                clean: Callable[[str], str] = lambda s: s) -> list[dict[str, Any]] | None:
    """An accessibility snapshot (Playwright's YAML) as canonical nodes; None when it is not one (a page cannot
    make the orchestrator's parser fail: it only loses the read)."""
    if len(snapshot) > TEXT_CAP:
        return None
    try:
        items = yaml.load(snapshot, Loader=_SnapshotLoader)
        return [] if items is None else _nodes(items, drop, clean)
    except (yaml.YAMLError, ValueError, RecursionError):
        return None


def _nodes(items: Any, drop: frozenset[str], clean: Callable[[str], str]) -> list[dict[str, Any]]:
    if not isinstance(items, list):
        raise ValueError("a snapshot is a list of nodes")
    nodes: list[dict[str, Any]] = []
    for item in items:
        header, body = _split(item)
        if header.startswith("/"):  # a property of the enclosing node (/url, /placeholder): the caller folds it
            nodes.append({"property": header[1:], "text": clean(body if isinstance(body, str) else "")})
            continue
        nodes.append(_node(header, body, drop, clean))
    return nodes


def _split(item: Any) -> tuple[str, Any]:
    if isinstance(item, str):
        return item, None
    if isinstance(item, dict) and len(item) == 1:
        header, body = next(iter(item.items()))
        if isinstance(header, str):
            return header, body
    raise ValueError(f"not a snapshot node: {str(item)[:60]!r}")


def _node(header: str, body: Any, drop: frozenset[str], clean: Callable[[str], str]) -> dict[str, Any]:
    match = _HEADER.match(header)
    if match is None:
        raise ValueError(f"not a snapshot node header: {header[:60]!r}")
    node: dict[str, Any] = {"role": match["role"]}
    if match["name"] is not None:
        node["name"] = clean(json.loads(f'"{match["name"]}"'))
    for state, value in _STATE.findall(match["states"]):
        node[state] = value or "true"
    if isinstance(body, str):
        node["text"] = clean(body)
    elif body is not None:
        children = _nodes(body, drop, clean)
        for prop in [c for c in children if "property" in c]:
            if prop["property"] not in drop:
                node[prop["property"]] = prop["text"]
        kept = [c for c in children if "property" not in c]
        if kept:
            node["children"] = kept
    for name in drop:
        node.pop(name, None)
    return node

