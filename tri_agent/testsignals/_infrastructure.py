"""Test infrastructure: the files around the tests that the weakened judge reads too, and the moves of a change
that forge outcomes, as claims.

A conftest, a plugin, a helper module or a pytest setting can make a suite report green without a test file
changing. Two answers:

- ``infrastructure``: the changed files that are not tests yet shape them (modules under a test folder, modules
  that import pytest, pytest's settings) go to the weakened judge beside the test files;
- ``forged_in``: every changed Python file scanned for the moves of ``testcode._forging.RULES``; each one the
  change added is a flag by itself, no judge needed, cited at its ``after/<path>:<line>``.

A move is "added" when the statement (or the hook's whole definition) appears, word for word after parsing, in
no base version of the change's files: code the base already had, or code a change only moved, is not flagged
again.
"""

from __future__ import annotations

import re

from ..drivers._rulings import Claim
from ..testcode import is_pytest_config, is_test_file
from ..testcode._forging import RULES, added_moves, imports_pytest, in_test_folder, source_text

__all__ = ["RULES", "forged", "forged_in", "infrastructure", "source_text"]

_PYTEST_SECTION = re.compile(r"^\[(?:pytest|tool:pytest|tool\.pytest[^\]]*)\]\s*$", re.MULTILINE)
Texts = dict[str, tuple[str | None, str | None]]  # path -> (text at the base, text at the head)


def infrastructure(path: str, before: str | None, after: str | None) -> bool:
    """Whether a changed file that is not a test file shapes the tests: under a test folder, importing pytest, or
    a pytest setting that changed."""
    if is_test_file(path):
        return False
    if is_pytest_config(path):
        return _pytest_settings(before) != _pytest_settings(after)
    if not path.endswith(".py"):
        return False
    return in_test_folder(path) or any(imports_pytest(t) for t in (before, after) if t is not None)


def _pytest_settings(text: str | None) -> str:
    """The pytest sections of a settings file, as text ('' when none)."""
    if not text:
        return ""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("["):
            inside = bool(_PYTEST_SECTION.match(line))
        if inside and line.strip():
            out.append(line.rstrip())
    return "\n".join(out)


def forged_in(texts: Texts) -> list[Claim]:
    """The moves of ``RULES`` the change added, over every changed Python file, one claim each."""
    added = added_moves({path: before for path, (before, _) in texts.items()},
                        {path: after for path, (_, after) in texts.items()})
    return [Claim(category="forged", location=f"after/{path}:{line}", reason=f"{RULES[rule]}: {shown}")
            for path, rule, line, shown in added]


def forged(path: str, before: str | None, after: str | None) -> list[Claim]:
    """``forged_in`` for one file."""
    return forged_in({path: (before, after)})

