"""Rates with their denominators and 95% intervals, clustered by program.

``wilson`` is the Wilson score interval of k successes in n trials. Cases made from one program are not
independent evidence, so ``rate`` widens it by the design effect of the clusters: the ratio of the
cluster-robust variance of the pooled rate to its variance as if every trial were independent (never below 1,
the rate shrunk off 0 and 1 so that programs that all pass still count as few), and the interval is Wilson's at
the effective sample size n / deff, with Student's t on programs - 1 degrees of freedom in place of the normal's
quantile when there are fewer than 30 programs. With one program there is no estimate of the spread between
programs: the interval is Wilson's over one trial, as wide as it can honestly be.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048)  # t, 1..28 df


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
    if not (math.isfinite(k) and math.isfinite(n) and 0 <= k <= n):
        raise ValueError(f"no interval for {k} successes in {n} trials")
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
    effective = n / deff  # deff is 1 or more
    low, high = wilson(k / n * effective if n else 0.0, effective, _quantile(len(per)))
    return Rate(k=k, n=n, low=low, high=high, clusters=len(per), design_effect=deff)


def _quantile(clusters: int) -> float:
    """The two-sided 95% quantile for ``clusters`` programs: Student's t on clusters - 1 degrees of freedom (few
    programs say little about the spread between programs), the normal's from 30 on."""
    return _T95[clusters - 2] if 2 <= clusters < 2 + len(_T95) else Z95


def _design_effect(clusters: list[list[int]], k: int, n: int) -> float:
    if n == 0:
        return 1.0
    p = (k + 0.5) / (n + 1)  # shrunk off 0 and 1: all-pass clusters still say how few they are
    if len(clusters) < 2:
        return float(n)  # one program: the effective sample is one
    robust = len(clusters) / (len(clusters) - 1) * sum((s - p * t) ** 2 for s, t in clusters) / n ** 2
    independent = p * (1 - p) / n
    return max(1.0, robust / independent)  # the shrunk rate is never 0 or 1: independent > 0
