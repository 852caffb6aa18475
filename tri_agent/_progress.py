"""Live progress of a long stage: counters its workers advance, read by whoever watches (the acceptance's clock).

A stage that runs many things (cases, mutants, hunted inputs) says how many it expects and advances as each
ends; nothing here prints. The watcher shows the counters as a live bar on a terminal and nothing at all on a
pipe or in CI, where each stage ends with its one line as before. Progress is never evidence: it is read only
for the eye, and a stage with nobody watching pays one attribute lookup per call.

    with watching(meter):
        expect("cases", len(cases))
        ...
        advance("cases")
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from threading import Event, Lock, Thread

# the counters, in the order a line shows them: (name, what its total counts)
COUNTERS = (("cases", "cases"), ("mutants", "mutants"), ("hunted", "hunted inputs"))
_SUFFIX = {"mutants": "killed"}  # a counter shown with another beside it: mutants 3/10 (2 killed)


@dataclass
class Meter:
    """Counters of one stage: done and expected per name; thread-safe."""

    started: float = field(default_factory=time.monotonic)
    done: dict[str, int] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    _lock: Lock = field(default_factory=Lock)

    def expect(self, name: str, n: int) -> None:
        with self._lock:
            self.total[name] = self.total.get(name, 0) + n

    def advance(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.done[name] = self.done.get(name, 0) + n

    def fraction(self) -> float | None:
        """How far the stage is, by its first counter with a total (None: nothing expected yet)."""
        with self._lock:
            for name, _ in COUNTERS:
                if self.total.get(name):
                    return min(1.0, self.done.get(name, 0) / self.total[name])
        return None

    def line(self) -> str:
        """The counters in words: ``cases 12/34 · mutants 3/10 (2 killed) · hunted inputs 120/340``."""
        with self._lock:
            parts = []
            for name, words in COUNTERS:
                if self.total.get(name):
                    extra = _SUFFIX.get(name)
                    more = f" ({self.done.get(extra, 0)} {extra})" if extra else ""
                    parts.append(f"{words} {self.done.get(name, 0)}/{self.total[name]}{more}")
            return " · ".join(parts)

    def remaining(self, now: float | None = None) -> float | None:
        """Seconds left, estimated from the pace so far (None: too early to tell)."""
        part = self.fraction()
        if not part:
            return None
        elapsed = (now if now is not None else time.monotonic()) - self.started
        return elapsed * (1 - part) / part


_WATCHED: list[Meter] = []  # the meter of the stage being watched (one stage at a time: the clock's)


@contextmanager
def watching(meter: Meter) -> Iterator[Meter]:
    """Route every ``expect`` and ``advance`` of this process to ``meter`` while the block runs."""
    _WATCHED.append(meter)
    try:
        yield meter
    finally:
        _WATCHED.remove(meter)


def expect(name: str, n: int) -> None:
    if _WATCHED:
        _WATCHED[-1].expect(name, n)


def advance(name: str, n: int = 1) -> None:
    if _WATCHED:
        _WATCHED[-1].advance(name, n)


@contextmanager
def ticker(meter: Meter, say: Callable[[str], None], every: float = 30.0) -> Iterator[None]:
    """Tell ``say`` the meter's line every ``every`` seconds while it changes: the progress of a long command on a
    pipe or in CI, whole lines only (a live bar would garble a log)."""
    stop = Event()

    def tell() -> None:
        last = ""
        while not stop.wait(every):
            line = meter.line()
            if line and line != last:
                left = meter.remaining()
                say(line + (f" · about {left:.0f} s left" if left is not None else ""))
                last = line

    thread = Thread(target=tell, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
