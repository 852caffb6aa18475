"""Everything a run will need, checked before it writes any evidence, and every problem reported at once.

``accept`` calls ``check_project`` before its preflight; ``tri-agent check PROJECT`` runs it alone. The
checks read and parse, never write: the configuration, the spec and the git state, the target file, the
exam folder (its exam.yaml, caliber and mutation menu), the scripted roles' recording and every file it
names, each role's driver and what it needs (a command, a credential's presence), and the sandbox.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from .. import _yamldoc
from .._errors import MalformedInput, NotReady, TriAgentError, UsageError
from ..drivers._scripted import Script
from ..exam._formats import load_exam
from ..mutation._menu import load_menu
from ..sandbox import _jail
from ..scoring._caliber import load_caliber
from ..targets._target import Target
from ._config import AcceptanceConfig, check_git, check_spec, load_config
from ._state import locate

# what an API driver needs in the environment (its presence only; the value is never read here)
CREDENTIAL = {"anthropic": ("ANTHROPIC_API_KEY",), "openai": ("OPENAI_API_KEY", "OPENAI_BASE_URL")}


def ready(project: Path) -> None:
    """Raise NotReady with every problem, or return: the project can start a run."""
    problems = check_project(project)
    if problems:
        raise NotReady(problems)


def check_project(project: Path) -> list[TriAgentError]:
    """Every problem found, in the order a run would meet them (empty: ready)."""
    project = project.resolve()
    try:
        config = load_config(project)
    except TriAgentError as exc:
        return [exc]  # nothing else can be located without it
    checks = (check_spec(project, config), check_git(project))
    problems: list[TriAgentError] = [UsageError(f"preflight: {c.name}: {c.detail}") for c in checks if not c.ok]
    for check in (_target, _exam, _script, _drivers):
        problems += check(project, config)
    problems += _attempt(lambda: locate(project, config))  # a store accept would refuse (inside the project)
    problems += _attempt(_jail.require)
    return problems


def _attempt(fn: Callable[[], object]) -> list[TriAgentError]:
    try:
        fn()
    except TriAgentError as exc:
        return [exc]
    return []


def _target(project: Path, config: AcceptanceConfig) -> list[TriAgentError]:
    return _attempt(lambda: Target.load(project / config.target))


def _exam(project: Path, config: AcceptanceConfig) -> list[TriAgentError]:
    exam = project / config.exam
    if not exam.is_dir():
        return [UsageError(f"the exam folder {exam} does not exist", hint="set exam: in acceptance.yaml")]
    problems = _attempt(lambda: load_exam(exam))
    if (exam / "caliber.yaml").is_file():
        problems += _attempt(lambda: load_caliber(exam / "caliber.yaml"))
    if (exam / "mutations.yaml").is_file():
        problems += _attempt(lambda: load_menu(exam / "mutations.yaml"))
    return problems


def _script(project: Path, config: AcceptanceConfig) -> list[TriAgentError]:
    scripted = sorted(r for r, d in _drivers_of(config).items() if d == "scripted")
    if not scripted:
        return []
    if config.script is None:
        return [UsageError(f"{', '.join(scripted)} scripted, but acceptance.yaml names no script",
                           hint="set script: to the recorded role actions, or choose other drivers")]
    path = project / config.script
    try:
        recorded = _yamldoc.load(path, Script)
    except TriAgentError as exc:
        return [exc]
    named = sorted({c.content_file for e in recorded.episodes for c in e.calls if c.content_file})
    return [MalformedInput(f"the script names {name}, which does not exist", where=str(path),
                           hint="add the file beside the script, or fix content_file")
            for name in named if not (path.parent / name).is_file()]


def _drivers(project: Path, config: AcceptanceConfig) -> list[TriAgentError]:
    problems: list[TriAgentError] = []
    for role, driver in sorted(_drivers_of(config).items()):
        if driver == "command":
            argv = config.commands.get(role)
            if not argv:
                problems.append(UsageError(f"{role} is a command driver but commands: names no command for it",
                                           hint=f"add commands: {{{role}: [PROGRAM, ARGS...]}}"))
            elif shutil.which(argv[0]) is None and not (project / argv[0]).is_file():
                problems.append(UsageError(f"{role}'s command {argv[0]!r} is not installed or not found",
                                           hint="install it, or give its path"))
        names = CREDENTIAL.get(driver, ())
        if names and not any(os.environ.get(n) for n in names):
            problems.append(UsageError(f"{role} is driven by {driver}, but {' or '.join(names)} is not set",
                                       hint="export the credential (tri-agent doctor shows which are set)"))
    return problems


def _drivers_of(config: AcceptanceConfig) -> dict[str, str]:
    roles = ("examiner", "builder", "tester", "judge")
    return {r: config.drivers.get(r, "scripted") for r in roles}
