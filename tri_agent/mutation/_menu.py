"""The mutation menu the examiner writes: bug classes, never code.

The examiner may not see the implementation, so it names what could go wrong (a class, the spec clause it
threatens, inputs it expects to expose it); the operators and the judge turn each class into concrete
mutants of the code of the round.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from .. import _yamldoc
from .._errors import MalformedInput
from .._model import Written

ID = r"^[a-z0-9][a-z0-9-]*$"


class _Strict(Written):
    model_config = ConfigDict(frozen=True)


class BugClass(_Strict):
    """One class of bug the exam must catch."""

    id: str = Field(pattern=ID, description="Class id: a preset's (rounding-mode, strip-dropped, ...) or a new one.")
    clause: str = Field(min_length=1, description="The spec clause the bug would break, in the spec's words.")
    inputs: list[dict[str, str]] = Field(default_factory=list, description="Input sets (file name -> content) "
                                         "expected to expose the bug; used when hunting for a difference.")


class Menu(_Strict):
    """``mutations.yaml``."""

    schema_version: Literal[2] = Field(default=2, description="Version of the mutation menu format (2: bug "
                                                               "classes; 1 held code and is refused).")
    classes: list[BugClass] = Field(min_length=1, description="The bug classes; ids must be unique.")
    min_sites: int = Field(default=3, ge=0, description="Fewest places the operators must find for each class in "
                           "the code of a round (or as many as the code had at the start, when that was fewer): "
                           "code rewritten out of their reach is not green.")
    include: list[str] = Field(default_factory=list, description="Where mutants are made: shell patterns matched "
                               "against each Python file's path in the target folder ('*' crosses folders: "
                               "'ledger/*.py'); empty: every file that is not a test, a cache or an environment.")
    exclude: list[str] = Field(default_factory=list, description="Files never mutated, though included (a CLI "
                               "module, a vendored library: code the spec is not about).")

    def scope(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(include, exclude) as ``python_files`` takes them."""
        return tuple(self.include), tuple(self.exclude)


def load_menu(path: Path) -> Menu:
    """The menu at ``path``; a version-1 menu (patches with anchors) is refused with what to write instead."""
    try:
        raw: Any = _yamldoc.data(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, MalformedInput):
        raw = None  # the strict loader below names the problem with its place
    if isinstance(raw, dict) and raw.get("schema_version") == 1:
        raise MalformedInput("a version-1 mutation menu holds code (anchors and patches), which the examiner may not "
                             "see", where=f"{path}: schema_version",
                             hint="write bug classes instead: schema_version: 2, classes: [{id, clause, inputs}]")
    menu = _yamldoc.load(path, Menu)
    ids = [c.id for c in menu.classes]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise MalformedInput(f"bug class {dup!r} is listed twice", where=f"{path}: classes")
    return menu


class ConcreteMutant(_Strict):
    """A mutant the judge wrote against the code of the round (it sees the implementation): one exact edit."""

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", description="Mutant id, unique in the file.")
    bug_class: str = Field(pattern=ID, description="The bug class it realises (one no operator covers, or any class "
                                                   "of a target that is not Python).")
    file: str = Field(min_length=1, description="File of the target, relative to its baseline folder.")
    find: str = Field(min_length=1, description="Exact text of the round's code it replaces; must occur once.")
    replace: str = Field(description="Text put in its place.")


class ConcreteMutants(_Strict):
    """``exam/judge/config/mutants.yaml``: the judge's concrete mutants (the tester neither sees nor writes it)."""

    schema_version: Literal[1] = Field(default=1, description="Version of the judge's mutant file format.")
    mutants: list[ConcreteMutant] = Field(min_length=1, description="The mutants; ids must be unique.")


def load_concrete(path: Path) -> ConcreteMutants:
    mutants = _yamldoc.load(path, ConcreteMutants)
    ids = [m.id for m in mutants.mutants]
    if len(set(ids)) != len(ids):
        raise MalformedInput("mutant ids must be unique", where=f"{path}: mutants")
    return mutants
