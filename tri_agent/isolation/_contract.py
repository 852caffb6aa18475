"""Role charters and their visibility contracts, and the iron rules no charter may break.

A charter is ``roles/<role>.md``: YAML front matter (the contract) and the charter prompt as the body.
Paths in a contract are globs over the acceptance project's layout::

    spec/**                    the spec sources
    target/**                  the implementation (only the builder writes it)
    exam/**                    the examiner's exam; exam/judge/** holds the tester's results,
                               exam/tickets/** the judge's tickets
    builds/<id>/visible/**     cases and inputs an exam build published
    builds/<id>/sealed/**      answer keys (the judge reads them while grading; nobody writes them)
    evidence/**                the evidence store (the engine only)

``*`` matches within one path segment, ``**`` across segments. ``hidden`` beats ``readable``;
``protected`` beats ``writable``; a role can only write what it can read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field

from .. import _yamldoc
from .._errors import MalformedInput, PolicyViolation, UsageError
from .._model import Written
from .._resources import shipped

RoleName = Literal["examiner", "builder", "tester", "judge"]
ROLES: tuple[RoleName, ...] = ("examiner", "builder", "tester", "judge")
TOOLS = ("list", "read", "search", "write", "run_case", "exam_build", "score", "rerun", "file_ticket", "submit")
# agent configuration and history a role must never inherit from the project: they steer or inform agents
AGENT_CONFIG_DIRS = frozenset({".git", ".claude", ".codex", ".cursor", ".aider.tags.cache.v3", ".github", ".vscode",
                               ".idea", ".hg", ".svn", ".gemini", ".continue", ".windsurf"})
AGENT_CONFIG_FILES = frozenset({"CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "GEMINI.md", ".mcp.json",
                                ".cursorrules", ".windsurfrules", ".aider.conf.yml", ".gitmodules", ".gitattributes",
                                ".aider.chat.history.md", ".aider.input.history"})


class Contract(Written):
    """The machine-readable part of a charter."""

    model_config = ConfigDict(frozen=True)

    schema_version: Literal[1] = Field(default=1, description="Version of the contract format.")
    role: RoleName = Field(description="The role this charter governs: examiner, builder, tester or judge.")
    readable: list[str] = Field(description="Globs of project paths the role's workspace receives.")
    hidden: list[str] = Field(default_factory=list, description="Never in the workspace, whatever 'readable' says.")
    writable: list[str] = Field(default_factory=list, description="Globs the role may create, change or delete.")
    protected: list[str] = Field(default_factory=list, description="Never writable, whatever 'writable' says.")
    memory: Literal["kept", "fresh"] = Field(description="fresh: a new spawn with no memory every round.")
    tools: list[str] = Field(description="Tools the engine gives an API-driven role: " + ", ".join(TOOLS) + ".")

    def can_read(self, path: str) -> bool:
        return _any(self.readable, path) and not _any(self.hidden, path)

    def can_write(self, path: str) -> bool:
        return self.can_read(path) and _any(self.writable, path) and not _any(self.protected, path)


@dataclass(frozen=True)
class Charter:
    contract: Contract
    body: str
    path: Path


def glob_regex(pattern: str) -> re.Pattern[str]:
    """``**`` crosses ``/``, ``*`` and ``?`` do not; everything else is literal."""
    return _compiled(pattern)


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def _any(patterns: list[str], path: str) -> bool:
    return any(_compiled(p).match(path) for p in patterns)


def is_agent_config(rel: str) -> bool:
    parts = rel.split("/")
    return any(p in AGENT_CONFIG_DIRS for p in parts[:-1]) or parts[-1] in AGENT_CONFIG_FILES or \
        parts[-1] in AGENT_CONFIG_DIRS


# Canary paths stand for whole areas of the project when a contract is checked.
IMPLEMENTATION = ("target/app.py", "target/pkg/module.py", "target/.hidden/config.toml")
ANSWERS = ("builds/r1/sealed/answers.jsonl", "builds/r1/sealed/behaviors.jsonl", "exam/oracle/oracle.py")
EVIDENCE = ("evidence/round-1/record.json", "builds/r1/visible/cases.jsonl", "builds/r1/sealed/answers.jsonl")

IronRule = tuple[str, Callable[[Contract], list[str]]]


def _cannot_read(role: RoleName, paths: tuple[str, ...], what: str) -> Callable[[Contract], list[str]]:
    def check(c: Contract) -> list[str]:
        return [f"{role} can read {what} ({p})" for p in paths if c.role == role and c.can_read(p)]

    return check


def _only_builder_writes_target(c: Contract) -> list[str]:
    return [f"{c.role} can write the target ({p})" for p in IMPLEMENTATION if c.role != "builder" and c.can_write(p)]


def _nobody_writes_evidence(c: Contract) -> list[str]:
    return [f"{c.role} can write engine evidence ({p})" for p in EVIDENCE if c.can_write(p)]


def _tester_is_fresh(c: Contract) -> list[str]:
    return ["the tester keeps memory across rounds"] if c.role == "tester" and c.memory != "fresh" else []


IRON_RULES: tuple[IronRule, ...] = (
    ("tester-never-sees-implementation", _cannot_read("tester", IMPLEMENTATION, "the implementation")),
    ("tester-never-sees-answers", _cannot_read("tester", ANSWERS, "answers")),
    ("builder-never-sees-answers", _cannot_read("builder", ANSWERS, "answers")),
    ("examiner-never-sees-implementation", _cannot_read("examiner", IMPLEMENTATION, "the implementation")),
    ("only-the-builder-writes-the-target", _only_builder_writes_target),
    ("nobody-writes-evidence", _nobody_writes_evidence),
    ("the-tester-has-no-memory", _tester_is_fresh),
)


def violations(contract: Contract) -> list[str]:
    """Every iron rule ``contract`` breaks, as ``rule: what``."""
    return [f"{name}: {v}" for name, check in IRON_RULES for v in check(contract)]


def roles_dir() -> Path:
    return shipped("roles")


def load_charter(role: str, folder: Path | None = None, *, unsafe: bool = False) -> Charter:
    """The charter of ``role``; a contract breaking an iron rule is refused unless ``unsafe``."""
    if role not in ROLES:
        raise UsageError(f"no role {role!r}", hint=f"roles: {', '.join(ROLES)}")
    path = (folder or roles_dir()) / f"{role}.md"
    if not path.is_file():
        raise UsageError(f"{path} does not exist", hint="every role needs a charter file")
    contract, body = _parse(path)
    if contract.role != role:
        raise MalformedInput(f"front matter says role {contract.role!r}", where=f"{path}:1")
    unknown = [t for t in contract.tools if t not in TOOLS]
    if unknown:
        raise MalformedInput(f"unknown tool {unknown[0]!r}; tools: {', '.join(TOOLS)}", where=f"{path}:1")
    broken = violations(contract)
    if broken and not unsafe:
        raise PolicyViolation(f"{path}: the contract breaks an iron rule ({broken[0]})",
                              hint="fix the charter; --unsafe-contract runs it anyway, and that run can never certify")
    return Charter(contract, body, path)


def _parse(path: Path) -> tuple[Contract, str]:
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n") or "\n---\n" not in text[4:]:
        raise MalformedInput("no YAML front matter between '---' lines", where=f"{path}:1")
    head, body = text[4:].split("\n---\n", 1)
    return _yamldoc.validate(head, str(path), Contract, first_line=2), body.strip() + "\n"  # line 1 is '---'
