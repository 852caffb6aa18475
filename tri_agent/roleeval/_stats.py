"""Rates with their denominators and 95% intervals, clustered by program.

``wilson`` is the Wilson score interval of k successes in n trials. Cases made from one program are not
independent evidence, so ``rate`` widens it by the design effect of the clusters: the ratio of the
cluster-robust variance of the pooled rate to its variance as if every trial were independent (never below 1),
and the interval is Wilson's at the effective sample size n / deff. With one cluster there is no estimate of
the between-program spread: the interval is Wilson's over the program count (one), as wide as it can honestly be.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal


@dataclass(frozen=True)
class Rate:
    """k of n, its 95% interval, the clusters it came from and how much they widened it."""

    k: float
    n: int
    low: float
    high: float
    clusters: int
    design_effect: float

    @property
    def value(self) -> float | None:
        return self.k / self.n if self.n else None


def wilson(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` trials; (0, 1) when there are none."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # at k = 0 (k = n) the bound is 0 (1) exactly; rounding would leave it a hair inside
    return 0.0 if k <= 0 else max(0.0, centre - half), 1.0 if k >= n else min(1.0, centre + half)


def rate(trials: Iterable[tuple[str, bool]]) -> Rate:
    """The rate of successes over ``trials`` (cluster, success), its interval widened by the clusters."""
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for cluster, success in trials:
        per[cluster][0] += int(success)
        per[cluster][1] += 1
    k, n = sum(s for s, _ in per.values()), sum(t for _, t in per.values())
    deff = _design_effect(list(per.values()), k, n)
    effective = n / deff if n else 0.0
    low, high = wilson(k / n * effective if n else 0.0, effective)
    return Rate(k=k, n=n, low=low, high=high, clusters=len(per), design_effect=deff)


def _design_effect(clusters: list[list[int]], k: int, n: int) -> float:
    if n == 0:
        return 1.0
    p = k / n
    if len(clusters) < 2:
        return float(n)  # one program: the effective sample is one
    robust = len(clusters) / (len(clusters) - 1) * sum((s - p * t) ** 2 for s, t in clusters) / n ** 2
    independent = p * (1 - p) / n
    return max(1.0, robust / independent) if independent > 0 else 1.0
