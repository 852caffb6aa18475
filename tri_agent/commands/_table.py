"""The command table's parts: a command (its name, its help, its arguments, its handler) and the helpers its
handlers print and write with. ``tri_agent._cli`` builds the parser from the table, one loop, no logic."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import UsageError
from .._resources import shipped

Handler = Callable[[argparse.Namespace], int]
UNSANDBOXED = ("run role-written code (targets, generators, oracles) even where no OS sandbox works; such a run "
               "can never certify")
CLUSTER = ("run the cases on a Dask cluster: local:N (N worker processes on this machine) or a scheduler's address "
           "(tcp://HOST:8786); see docs/scale.md")
GROUPS = {  # commands with subcommands: their help
    "exam": "build an exam and run it against a target",
    "contract": "role contracts",
    "gate": "the patch gate: score an agent's pull request on a frozen surface",
}
OUTPUT_FILES = ("json", "md", "docs")  # options naming one file a command writes: refused when it exists


@dataclass(frozen=True)
class Arg:
    """One ``add_argument`` call, as data."""

    names: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Command:
    """One command: ``name`` ("exam build" under the group "exam"), its help, its arguments and its handler."""

    name: str
    help: str
    args: tuple[Arg, ...]
    handler: Handler
    refuses: Callable[[argparse.Namespace], None] = lambda _args: None  # before any work: what it must not overwrite


def arg(*names: str, **options: Any) -> Arg:
    return Arg(names, options)


def command(name: str, help: str, *args: Arg,
            refuses: Callable[[argparse.Namespace], None] | None = None) -> Callable[[Handler], Command]:
    """The handler below, with its name, help and arguments beside it."""
    def made(handler: Handler) -> Command:
        return Command(name, help, args, handler, refuses or (lambda _args: None))
    return made


def unsandboxed(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "allow_unsandboxed", False))


def say(args: argparse.Namespace, line: str) -> None:
    """A summary line: to stdout, unless stdout carries the JSON report (--json -)."""
    print(line, file=sys.stderr if str(getattr(args, "json", None)) == "-" else sys.stdout)


def write(path: Path | None, text: str) -> None:
    """``text`` into the report file ``path`` (``-``: stdout), whole or not at all."""
    if path is None:
        return
    if str(path) == "-":
        sys.stdout.write(text)
        return
    if path.is_dir():
        raise UsageError(f"{path} is a folder", hint="give a file name for the report")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def refuse_existing(args: argparse.Namespace) -> None:
    """Before any work: a file a command would write must not exist yet, unless --force (evidence is never
    replaced by accident)."""
    if getattr(args, "force", False):
        return
    for option in OUTPUT_FILES:
        path = getattr(args, option, None)
        if path is not None and str(path) != "-" and (path.exists() or path.is_symlink()):
            raise UsageError(f"--{option} {path} already exists",
                             hint="choose a new file name, or pass --force to replace it")


def shipped_names(folder: str) -> list[str]:
    """The names of the presets or skeletons shipped (file or folder names), read without parsing any."""
    return sorted(p.stem for p in shipped(folder).iterdir() if p.suffix == ".yaml" or (p / "exam").is_dir())


@contextmanager
def shown(what: str) -> Iterator[None]:
    """A long command's progress on stderr: a live bar on a terminal, a line every 30 seconds on a pipe or in CI
    (cases, mutants with their kills, hunted inputs, an estimate of the time left)."""
    from rich.console import Console

    from .._progress import Meter, ticker, watching
    from ..acceptance._live import live

    console = Console(stderr=True)
    with watching(Meter()) as meter, live(console, what, meter):
        if console.is_terminal:
            yield
            return
        with ticker(meter, lambda line: print(f"{what}: {line}", file=sys.stderr, flush=True)):
            yield
