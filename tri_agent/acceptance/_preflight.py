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

from pydantic import Field

from .. import _yamldoc
from .._errors import PolicyViolation, UsageError
from .._model import Record
from ..drivers._scripted import Script
from ..isolation._contract import ROLES, roles_dir
from ._config import CONFIG, AcceptanceConfig

_NOT_EXAM = ("tickets",)  # filed by the run: tickets are delivered, not configuration


class Configuration(Record):
    """``configuration.json`` in the preflight record: every file that steers the run, by digest."""

    schema_version: Literal[1] = Field(default=1, description="Version of the configuration format.")
    files: dict[str, str] = Field(description="Label -> SHA-256 of the file's bytes. Labels: project:<path> for "
                                              "project files, charter:<role> for role charters.")


def configuration(project: Path, config: AcceptanceConfig, extra: list[Path] | None = None) -> Configuration:
    """The digests of everything that steers a run of ``project``, as it is now."""
    files: dict[str, str] = {}
    paths = [project / CONFIG, project / config.target, *(project / s for s in config.spec), *(extra or [])]
    paths += _tree(project / config.exam, skip=_NOT_EXAM)
    # every role that reads the spec reads all of spec/ (the charters' glob), listed in `spec:` or not
    paths += _tree(project / "spec", skip=())
    if config.script:
        paths += _script_files(project / config.script)
    for path in paths:
        files[f"project:{_relative(project, path)}"] = _digest(path)
    for role in ROLES:
        files[f"charter:{role}"] = _digest(roles_dir() / f"{role}.md")
    return Configuration(files=dict(sorted(files.items())))


def _script_files(script: Path) -> list[Path]:
    """The scripted roles' recording and every file it names (``content_file``), nothing else beside it."""
    if not script.is_file():
        return [script]
    recorded = _yamldoc.load(script, Script)
    named = {call.content_file for e in recorded.episodes for call in e.calls if call.content_file}
    return [script, *(script.parent / name for name in sorted(named))]


def check_configuration(now: Configuration, sealed: Configuration) -> None:
    """Refuse a run whose configuration changed since preflight (exit 5), naming the first change."""
    for label in sorted(sealed.files.keys() | now.files.keys()):
        before, after = sealed.files.get(label), now.files.get(label)
        if before != after:
            what = "appeared" if not before else "disappeared" if not after else "changed"
            raise PolicyViolation(f"the run's configuration changed since preflight: {label} {what}",
                                  hint="only the builder's code may change during a run; restore the file, or start "
                                       "a new run with a new store")


def exposed_exam(project: Path, config: AcceptanceConfig, denied: list[Path]) -> list[str]:
    """Where an in-session builder could read the exam parts a builder must never see (generator, oracle,
    caliber, menu): in the project's files, in an exam folder its sandbox does not deny, or anywhere in the
    project's git history (a copy committed under any name, ever). Such a run cannot certify."""
    source = (project / config.exam).resolve()
    hidden = _hidden_parts(source)
    found = []
    if source.is_relative_to(project.resolve()):
        rel = source.relative_to(project.resolve()).as_posix()
        found += sorted({f"{rel}/{p.relative_to(source).parts[0]}" for p in hidden})
    elif hidden and not any(source == d or source.is_relative_to(d) for d in denied):
        found.append(f"{source} (outside the project, but not denied to the session)")
    found += [f"git history holds {p.relative_to(source).as_posix()}" for p in _committed(project, hidden)]
    return found


def _hidden_parts(exam: Path) -> list[Path]:
    parts = [exam / name for name in ("exam.yaml", "caliber.yaml", "mutations.yaml")]
    parts += [p for folder in ("generator", "oracle") for p in sorted((exam / folder).rglob("*"))]
    return [p for p in parts if p.is_file() and not p.is_symlink() and p.stat().st_size > 0]


def _committed(project: Path, files: list[Path]) -> list[Path]:
    """The files whose exact content is an object of the project's repository (any commit, any name)."""
    if not files:
        return []
    ids = subprocess.run(["git", "hash-object", "--stdin-paths"], cwd=project, capture_output=True, text=True,
                         input="".join(f"{f}\n" for f in files), check=False).stdout.split()
    if len(ids) != len(files):
        return []
    present = subprocess.run(["git", "cat-file", "--batch-check"], cwd=project, capture_output=True, text=True,
                             input="".join(f"{i}\n" for i in ids), check=False).stdout.splitlines()
    return [f for f, line in zip(files, present, strict=False) if not line.endswith(" missing")]


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
