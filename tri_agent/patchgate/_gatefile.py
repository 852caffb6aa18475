"""``tri-agent-gate.yaml``: the gate file a repository commits on its base branch, and what it pins.

It says which test files score an agent's patch and which only diagnose, what the agent's workspace never holds,
who counts as an agent, and how the scoring run is invoked. Every path is relative to the repository's root and
stays inside it; every glob is the contract's (``*`` within one segment, ``**`` across them).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import ConfigDict, Field, field_validator

from .. import _yamldoc
from .._errors import UsageError
from .._model import Written

GATE_FILE = "tri-agent-gate.yaml"
FLAKE_CLASSES = ("timing", "order", "network", "rng", "env")  # why a test left the scoring surface: a closed set


def _inside(value: str, what: str) -> str:
    """A repository-relative POSIX path or glob that cannot leave the repository."""
    path = PurePosixPath(value)
    if not value or value.startswith("/") or "\\" in value or ".." in path.parts:
        raise ValueError(f"{what} {value!r} must be a path inside the repository (relative, '/' separated, no '..')")
    return value


class _Strict(Written):
    model_config = ConfigDict(frozen=True)


class Classes(_Strict):
    """The ownership classes: one class per test file; a file no glob names is diagnostic and never scores."""

    scoring_properties: list[str] = Field(default_factory=list, description="Globs of the scoring properties: "
                                          "universal checks over a pinned corpus; a failure blocks the merge.")
    scoring_fixtures: list[str] = Field(default_factory=list, description="Globs of the read-only bytes the "
                                        "properties consume; hashed into the scoring surface.")
    diagnostic: list[str] = Field(default_factory=list, description="Globs of the tests that help people and "
                                  "never vote on a merge (examples, UI checks, anything that may flake).")
    ledger: str = Field(description="Path of the flake ledger: why each test left the scoring surface.")

    @field_validator("scoring_properties", "scoring_fixtures", "diagnostic")
    @classmethod
    def _globs(cls, value: list[str]) -> list[str]:
        return [_inside(v, "glob") for v in value]

    @field_validator("ledger")
    @classmethod
    def _ledger(cls, value: str) -> str:
        return _inside(value, "ledger")


class Fixtures(_Strict):
    """The fixture schema every scoring fixture must parse by, and the lock that pins the schema's bytes."""

    schema_path: str = Field(alias="schema", description="Path of the fixture schema (JSON Schema).")
    lock: str = Field(description="Path of the lock: the schema's SHA-256.")

    @field_validator("schema_path", "lock")
    @classmethod
    def _paths(cls, value: str) -> str:
        return _inside(value, "path")


_PARALLEL = re.compile(r"^(-n|--numprocesses|--dist|--maxprocesses|--tx|-d)(=|$)|^-n.|(?<!no:)xdist|addopts")
_SHELL = re.compile(r"\|\||&&|;|\|")


class Invocation(_Strict):
    """The pinned scoring run: pytest with these arguments, ``PYTEST_ADDOPTS`` emptied, no xdist, a fixed seed."""

    pytest_args: list[str] = Field(default_factory=lambda: ["-q"], alias="pytest",
                                   description="Arguments to pytest (one per item; no shell: nothing like '|| true').")
    seed: int = Field(default=0, ge=0, description="The random seed every scoring run is given (PYTHONHASHSEED and "
                      "the property runner's).")

    @field_validator("pytest_args")
    @classmethod
    def _pinned(cls, value: list[str]) -> list[str]:
        for item in value:
            if _PARALLEL.search(item):
                raise ValueError(f"pytest argument {item!r} runs the scoring suite in parallel: it runs in one process")
            if _SHELL.search(item):
                raise ValueError(f"pytest argument {item!r} is shell syntax: the invocation is an argument list, and "
                                 "an exit status is never overridden")
        return value


class GateFile(_Strict):
    """``tri-agent-gate.yaml``: the contract of a repository's patch gate, committed on its base branch."""

    schema_version: Literal[1] = Field(default=1, description="Version of the gate file format.")
    classes: Classes = Field(description="Globs of the ownership classes, and the flake ledger's path.")
    held_out: list[str] = Field(default_factory=list, description="Globs of the held-out suite: never in the agent's "
                                "workspace, run only by the verdict.")
    spec: str | None = Field(default=None, description="Path of the spec the patch is held to.")
    fixtures: Fixtures | None = Field(default=None, description="The fixture schema and its lock.")
    agents: list[str] = Field(default_factory=list, description="Author e-mail patterns of agent identities (fnmatch: "
                              "'*@agents.example.com'); an agent is never the last author of the ledger or the map.")
    forbidden: list[str] = Field(default_factory=list, description="Globs of paths a patch may not touch (the "
                                 "scoring tree, the ledger, the gate file itself are forbidden whatever this says).")
    invocation: Invocation = Field(default_factory=Invocation, description="The pinned scoring run.")
    corpus: str | None = Field(default=None, description="Folder of the property corpus: one file per case, the "
                               "property named by its folder.")
    unfreeze_runs: int = Field(default=20, ge=2, description="Runs in a row, with the pinned command on one scoring "
                               "surface, that a test off the ledger must have passed before it scores again.")

    @field_validator("held_out", "forbidden")
    @classmethod
    def _globs(cls, value: list[str]) -> list[str]:
        return [_inside(v, "glob") for v in value]

    @field_validator("spec", "corpus")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return None if value is None else _inside(value, "path")


def load_gate(repo: Path) -> GateFile:
    """The gate file of the repository at ``repo`` (exit 2 when it has none, 3 when it does not validate)."""
    path = repo / GATE_FILE
    if not path.is_file():
        raise UsageError(f"{repo} has no {GATE_FILE}", hint="commit one on the base branch (docs/gate.md shows one)")
    return _yamldoc.load(path, GateFile)


def parse_gate(text: str, where: str) -> GateFile:
    """A gate file's text (as a revision holds it), validated; errors name ``where``:line."""
    return _yamldoc.validate(text, where, GateFile)
