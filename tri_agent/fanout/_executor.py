"""The executor every fan-out goes through (case runs today), and the one in use.

An executor maps a task over items: ``task(item, folders)``, where ``folders`` names the folders the task reads (the
built target, the exam's visible folder). The local pool (the default) runs the task on threads of this process with
the folders as they are; a cluster (``_dask``) ships each folder once per worker as a bundle and returns what each
task made, checked before it is kept. Whoever composes a run (the CLI, an acceptance) chooses the executor with
``using``; the code that fans out asks ``current()``, so it never needs to know where its tasks run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")
Task = Callable[[T, Mapping[str, Path]], R]


class Executor(Protocol):
    """Runs a task over items, in order of the items; ``ships``: the results travel (from another process or
    machine), and what a task wrote on its side must come back inside its result."""

    ships: bool
    faults: list[str]

    def map(self, task: Task[T, R], items: Sequence[T], *, folders: Mapping[str, Path], jobs: int,
            label: Callable[[T], str], deadline: float, check: Callable[[T, R], str | None],
            keep: Callable[[T, R], R] = ...) -> list[R]:
        """``task`` over ``items``; ``jobs``: at most this many at once; ``deadline``: seconds one task may take once
        started; ``check``: why a result that travelled cannot be kept (None: it can); ``keep``: what is recorded
        of a result that checked, made as it comes."""
        ...


class LocalPool:
    """Threads of this process (the default): the folders are read in place and nothing travels."""

    ships = False

    def __init__(self) -> None:
        self.faults: list[str] = []

    def map(self, task: Task[T, R], items: Sequence[T], *, folders: Mapping[str, Path], jobs: int,
            label: Callable[[T], str], deadline: float, check: Callable[[T, R], str | None],
            keep: Callable[[T, R], R] = lambda _item, result: result) -> list[R]:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return list(pool.map(lambda item: task(item, folders), items))


LOCAL = LocalPool()
_ACTIVE: list[Executor] = []


def current() -> Executor:
    """The executor the innermost ``using`` chose; the local pool outside any."""
    return _ACTIVE[-1] if _ACTIVE else LOCAL


@contextmanager
def using(executor: Executor) -> Iterator[Executor]:
    _ACTIVE.append(executor)
    try:
        yield executor
    finally:
        _ACTIVE.remove(executor)
