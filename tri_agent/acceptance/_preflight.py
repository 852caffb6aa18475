"""Preflight: what is sealed before any role acts, and checked again before every round.

The preflight record holds the checks that passed, the builder's code as committed (every later diff's
base), the exam as the run found it (from then on the run's exam lives in its state folder, never in the
project), the seed commitments for the baseline and round 1, and the **configuration**: the digest of
every file that steers the run (``acceptance.yaml``, the target file, the spec, the project's exam folder,
the scripted roles, the role charters, an in-session builder's agent settings). Any later change to one of
them is a policy violation (exit 5): a builder may change its own code and tests, nothing else.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from .._errors import PolicyViolation, UsageError
from ..isolation._contract import ROLES, roles_dir
from ._config import CONFIG, AcceptanceConfig

_NOT_EXAM = ("tickets",)  # filed by the run: tickets are delivered, not configuration


class Configuration(BaseModel):
    """``configuration.json`` in the preflight record: every file that steers the run, by digest."""

    schema_version: Literal[1] = Field(default=1, description="Version of the configuration format.")
    files: dict[str, str] = Field(description="Label -> SHA-256 of the file's bytes. Labels: project:<path> for "
                                              "project files, charter:<role> for role charters.")


def configuration(project: Path, config: AcceptanceConfig, extra: list[Path] | None = None) -> Configuration:
    """The digests of everything that steers a run of ``project``, as it is now."""
    files: dict[str, str] = {}
    paths = [project / CONFIG, project / config.target, *(project / s for s in config.spec), *(extra or [])]
    paths += _tree(project / config.exam, skip=_NOT_EXAM)
    if config.script:
        paths += _tree((project / config.script).parent, skip=())
    for path in paths:
        files[f"project:{_relative(project, path)}"] = _digest(path)
    for role in ROLES:
        files[f"charter:{role}"] = _digest(roles_dir() / f"{role}.md")
    return Configuration(files=dict(sorted(files.items())))


def check_configuration(now: Configuration, sealed: Configuration) -> None:
    """Refuse a run whose configuration changed since preflight (exit 5), naming the first change."""
    for label in sorted(sealed.files.keys() | now.files.keys()):
        before, after = sealed.files.get(label), now.files.get(label)
        if before != after:
            what = "appeared" if not before else "disappeared" if not after else "changed"
            raise PolicyViolation(f"the run's configuration changed since preflight: {label} {what}",
                                  hint="only the builder's code may change during a run; restore the file, or start "
                                       "a new run with a new store")


def exposed_exam(project: Path, config: AcceptanceConfig) -> list[str]:
    """The exam parts a builder must never read (generator, oracle, caliber, menu) that an in-session builder
    could, in the project's files or its git history: such a run cannot certify."""
    source = (project / config.exam).resolve()
    if not source.is_relative_to(project.resolve()):
        return []
    rel = source.relative_to(project.resolve()).as_posix()
    hidden = [f"{rel}/{name}" for name in ("generator", "oracle", "caliber.yaml", "mutations.yaml", "exam.yaml")]
    found = [h for h in hidden if (project / h).exists()]
    history = subprocess.run(["git", "log", "--all", "--format=", "--name-only", "--", *hidden], cwd=project,
                             capture_output=True, text=True, check=False).stdout.split()
    return sorted(set(found) | {h for h in hidden if any(p == h or p.startswith(h + "/") for p in history)})


def import_exam(project: Path, config: AcceptanceConfig, dest: Path) -> int:
    """Copy the project's exam (regular files only; tickets stay out) into ``dest``; returns files copied."""
    dest.mkdir(parents=True, exist_ok=True)
    source = project / config.exam
    count = 0
    for path in _tree(source, skip=(*_NOT_EXAM, "judge")):  # an earlier tester's results never carry over
        rel = path.relative_to(source)
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dest / rel)
        count += 1
    return count


def _tree(root: Path, skip: tuple[str, ...]) -> list[Path]:
    if not root.is_dir():
        return []
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in skip or "__pycache__" in rel.parts:
            continue
        if path.is_symlink():
            raise UsageError(f"{path} is a symbolic link", hint="the run copies and seals its configuration and "
                             "exam; replace the link with the file it points to")
        if path.is_file():
            out.append(path)
    return out


def _relative(project: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(project.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def _digest(path: Path) -> str:
    if not path.is_file():
        return ""  # absent: recorded as such, so its appearance later is a change
    return hashlib.sha256(path.read_bytes()).hexdigest()
