"""The builder's own tests as pytest collects them, and which of them a round lost: the *reduced* signal of
``tri-agent evidence`` (``collection``), applied to the builder's code, on top of the smells that read test names.

At preflight the files the builder may write are collected once (in the jail, on a clean copy), and sealed in the
preflight record's ``code.json``; each round collects the builder's code again. An id collected at preflight and
no longer collected is a ``tests-removed`` smell (a blocker), unless it moved (an id with the same test name and
parameters is collected elsewhere: another file, a class) or the removals file in the builder's folder
(``collection.REMOVALS``) names it with a reason, which is then a note the judge reads. That catches what
reading names cannot: a parametrized case dropped, a test deselected by a conftest or ``collect_ignore``, a module
that no longer imports, a class renamed out of pytest's pattern, a conftest that stops pytest.

The list comes from the process that imports the builder's code, so that code could write it: the syntax-tree
smell keeps running on every test file (a removed or renamed function is found either way), and an id the
collection reports that its file does not define is a forged collection (``outcome-forged``).
"""

from __future__ import annotations

import ast
import tempfile
from pathlib import Path

from pydantic import Field

from .._errors import InfrastructureFailure
from .._model import Record
from ..collection import REMOVALS, collect, reduced
from ._smells import SMELLS, Smell, is_test_file

COLLECT_TIMEOUT = 120.0  # s: collecting imports every test module, which is the builder's code
SESSION = "<session>"  # the error of a collection that did not run at all


class Collected(Record):
    """The node ids pytest collected from a copy of the builder's files, with the files that failed to collect."""

    root: str = Field(description="The folder collected in, project-relative ('' for the project itself): node ids "
                                  "are relative to it.")
    ids: list[str] = Field(description="Every node id collected, in pytest's order.")
    errors: list[str] = Field(description="Files (node ids) that failed to collect; '<session>: why' when pytest "
                                          "did not collect at all.")


def collected_of(files: list[tuple[str, bytes]], root: str | None = None) -> Collected | None:
    """``files`` (project-relative path, bytes) written out clean and collected in the jail. At preflight
    (``root`` None): None when none of them is a Python test file. In a round (``root``: the preflight's folder):
    always a collection, empty when no test file is left."""
    tests = any(rel.endswith(".py") and is_test_file(rel) for rel, _ in files)
    if root is None and not tests:
        return None
    root = _root_of([rel for rel, _ in files]) if root is None else root
    if not tests:
        return Collected(root=root, ids=[], errors=[])
    with tempfile.TemporaryDirectory(prefix="tri-agent-collect-") as tmp:
        (Path(tmp) / root).mkdir(parents=True, exist_ok=True)
        for rel, data in files:
            (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / rel).write_bytes(data)
        try:
            ids, errors = collect(Path(tmp) / root, COLLECT_TIMEOUT)
        except InfrastructureFailure as exc:  # pytest did not run its collection at all: every test is gone
            ids, errors = [], [f"{SESSION}: {exc.message.replace(tmp, '.')}"]
    return Collected(root=root, ids=ids, errors=errors)


def _root_of(paths: list[str]) -> str:
    """The one top-level folder every path is under (the builder's ``target/``), else the project itself."""
    tops = {p.split("/", 1)[0] for p in paths}
    return tops.pop() if len(tops) == 1 and all("/" in p for p in paths) else ""


def removed(baseline: Collected | None, now: Collected | None, removals: str, texts: dict[str, str | None]
            ) -> list[Smell]:
    """The smells of the round's collection against the preflight's: each id gone (``tests-removed``) unless it
    moved or ``removals`` (the removals file's text) names it with a reason (then a note); a collection that did not
    run (one smell); ids no file defines (``outcome-forged``). ``texts``: project-relative path -> text now."""
    if baseline is None or now is None or _failed(baseline):
        return []
    if _failed(now):
        return [_smell("tests-removed", baseline.root, f"pytest collected none of the {len(baseline.ids)} tests "
                                                       f"it collected at preflight ({_failed(now)})")]
    gone = reduced((baseline.ids, baseline.errors), (now.ids, now.errors), removals)
    moved = {_leaf(i) for i in gone.added}
    out = [_smell("tests-removed", _path(baseline.root, i), f"test {i} is no longer collected")
           for i in gone.removed if _leaf(i) not in moved]
    out += [_smell("tests-removal-disclosed", _path(baseline.root, d.id), f"test {d.id}: {d.reason}")
            for d in gone.disclosed]
    return out + _undefined(now, texts)


def _failed(collected: Collected) -> str:
    return next((e.removeprefix(f"{SESSION}: ") for e in collected.errors if e.startswith(SESSION)), "")


def _undefined(now: Collected, texts: dict[str, str | None]) -> list[Smell]:
    """Ids whose Python file defines no function or class of their test's name: a list the collected code wrote."""
    names: dict[str, set[str] | None] = {}
    out = []
    for node_id in now.ids:
        path = _path(now.root, node_id)
        if path not in names:
            names[path] = _defined(texts.get(path)) if path.endswith(".py") else None
        defined = names[path]
        parts = [p.split("[", 1)[0] for p in node_id.split("::")[1:] if "." not in p]  # a doctest names a dotted path
        if defined is not None and not all(p in defined for p in parts):
            out.append(_smell("outcome-forged", path, f"the collection lists {node_id}, which {path} does not define"))
    return out


def _defined(text: str | None) -> set[str] | None:
    """Every function, class and module-level name a Python file binds (None when it cannot be read as one)."""
    try:
        tree = ast.parse(text) if text is not None else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if tree is None:
        return None
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)} \
        | {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


# the one smell only the collection finds: a removal on record, shown to the judge (what it says is the builder's)
DISCLOSED = ("note", "a test the builder removed, with its reason on record")


def _smell(name: str, path: str, what: str) -> Smell:
    severity, meaning = DISCLOSED if name == "tests-removal-disclosed" else (SMELLS[name].severity,
                                                                           SMELLS[name].meaning)
    return Smell(name=name, severity=severity, path=path, line=None, detail=f"{meaning}: {what}")


def _leaf(node_id: str) -> str:
    """A test's name and parameters, wherever it is (``test_x[2]`` of ``a.py::T::test_x[2]``)."""
    return node_id.rsplit("::", 1)[-1]


def removals_path(root: str) -> str:
    """Where the builder discloses a removal: the removals file in the folder collected in."""
    return f"{root}/{REMOVALS}" if root else REMOVALS


def _path(root: str, node_id: str) -> str:
    file = node_id.split("::", 1)[0]
    return f"{root}/{file}" if root else file
