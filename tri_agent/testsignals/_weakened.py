"""The *weakened* signal: a judge asked about each changed test file, K times, that can only flag or stay silent.

The question, the masking, the retries and the sampling are ``drivers._weakening``'s, shared with an acceptance's
ruling on its builder's tests. A claim whose citation does not resolve is dropped with its sample; a flag counts
only when at least ``floor`` of the K samples raise it; too few readable samples make the signal inconclusive.
``samples`` is null when no judge ran, never a made-up figure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import Field

from .._model import Record
from ..drivers._rulings import Claim
from ..drivers._weakening import FLOOR, Changed, K, masked, weakening

__all__ = ["FLOOR", "K", "Weakened", "judged", "masked", "not_judged"]


class Weakened(Record):
    """The judge's finding on the changed test files, and who judged."""

    state: Literal["flagged", "silent", "inconclusive", "not_judged"] = Field(
        description="flagged: claims at or above the floor; silent: the judge found nothing to report (never a "
                    "pass); inconclusive: too few readable samples; not_judged: no judge, or no test file changed.")
    samples: int | None = Field(description="Samples that counted (readable, every citation resolved); null when "
                                            "no judge ran.")
    k: int = Field(description="Samples asked for.")
    floor: float = Field(description="Share of the K samples a flag needs.")
    flags: list[Claim] = Field(description="The claims that reached the floor, each at a real file:line.")
    dropped: list[str] = Field(description="Samples and claims not counted, and why.")
    judge: str | None = Field(description="The judge's model or driver identity; null when none ran.")
    files: list[str] = Field(description="The changed test files asked about.")
    reason: str = Field(description="Why the state is what it is, in words.")


def not_judged(files: list[str], why: str, k: int = K, floor: float = FLOOR) -> Weakened:
    return Weakened(state="not_judged", samples=None, k=k, floor=floor, flags=[], dropped=[], judge=None,
                    files=files, reason=why)


def judged(ask: Callable[[str], str], judge: str, changed: list[Changed], *,
           k: int = K, floor: float = FLOOR, retries: int = 2) -> Weakened:
    """Ask ``ask`` about ``changed`` (path, before, after) ``k`` times; flag what ``floor`` of them agree on."""
    files = [p for p, _, _ in changed]
    if not changed:
        return not_judged(files, "no test file changed", k, floor)
    ruling = weakening(ask, changed, k=k, floor=floor, retries=retries)
    if ruling.verdict == "inconclusive":
        return Weakened(state="inconclusive", samples=ruling.readable_samples, k=k, floor=floor, flags=[],
                        dropped=ruling.dropped, judge=judge, files=files,
                        reason=f"{ruling.readable_samples} of {k} samples were readable, below the floor")
    state: Literal["flagged", "silent"] = "flagged" if ruling.flags else "silent"
    return Weakened(state=state, samples=ruling.readable_samples, k=k, floor=floor, flags=ruling.flags,
                    dropped=ruling.dropped, judge=judge, files=files,
                    reason=f"{len(ruling.flags)} claim(s) reached {floor:.0%} of {k} samples" if ruling.flags
                    else "no claim reached the floor: nothing to report (not a pass)")
