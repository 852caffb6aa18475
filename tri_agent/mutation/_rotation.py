"""Which mutants a round judges: every bug class covered, new instances first.

Instances are made afresh from the code of each round, so their ids name the edit (operator, file, the code
replaced and its replacement), not a line number. The calibration and the final round take up to
``per_class`` instances of every class; the rounds between take a smaller sample spread over the classes, of
which at least 30% (50% after a red round) must be instances no earlier round judged, or the sample is short
and the exam is asked for more classes.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from ._operators import Instance


@dataclass(frozen=True)
class Selection:
    """How to sample: every class up to ``per_class`` instances (the calibration and the final round), or
    ``total`` instances spread over the classes with a share of new ones (the rounds between)."""

    per_class: int
    total: int | None = None
    used: frozenset[str] = frozenset()
    retired: frozenset[str] = frozenset()  # ids@target-digest proven equivalent on this very code
    red: bool = False
    seed: str = "0"


@dataclass(frozen=True)
class Rotation:
    """This round's sample, and whether it holds enough instances no earlier round judged."""

    chosen: list[str]
    new: list[str]
    need: int
    empty_classes: list[str]  # classes of the menu the code of this round gives no instance of

    @property
    def short(self) -> bool:
        return len(self.new) < self.need


def select(found: list[Instance], classes: list[str], how: Selection, digest: str) -> Rotation:
    """The round's instances, deterministically: new ones first in every class, classes taken in turn."""
    rng = random.Random(how.seed)
    pools: dict[str, list[str]] = {}
    for cls in classes:
        pool = [i.id for i in found if i.bug_class == cls and f"{i.id}@{digest}" not in how.retired]
        fresh, seen = [i for i in pool if i not in how.used], [i for i in pool if i in how.used]
        rng.shuffle(fresh)
        rng.shuffle(seen)
        pools[cls] = fresh + seen
    empty = [c for c in classes if not pools[c]]
    if how.total is None:
        chosen = [i for cls in classes for i in pools[cls][:how.per_class]]
        return Rotation(sorted(chosen), sorted(i for i in chosen if i not in how.used), 0, empty)
    chosen = _in_turn(pools, rng, how.total, lambda i: i not in how.used)
    chosen += _in_turn({c: [i for i in p if i not in chosen] for c, p in pools.items()}, rng,
                       how.total - len(chosen), lambda _i: True)
    share = 5 if how.red else 3  # tenths: 50% after a red round, 30% otherwise
    new = sorted(i for i in chosen if i not in how.used)
    return Rotation(sorted(chosen), new, -(-share * len(chosen) // 10), empty)


def _in_turn(pools: dict[str, list[str]], rng: random.Random, n: int, keep: Callable[[str], bool]) -> list[str]:
    """Up to ``n`` ids, one class at a time in a shuffled order, the first kept id of each class per turn."""
    queues = {c: [i for i in p if keep(i)] for c, p in pools.items()}
    order = sorted(queues)
    rng.shuffle(order)
    out: list[str] = []
    while len(out) < n and any(queues.values()):
        for cls in order:
            if queues[cls] and len(out) < n:
                out.append(queues[cls].pop(0))
    return out
