"""LLM rulings as a measuring instrument: K samples, an agreement floor, fail closed, cited evidence.

Judges rule on what code cannot: behaviour categories, test-quality smells, leak suspicions, weakened
tests. Such a ruling can only *raise flags*; it never certifies anything. The reply schema has no
"clean" field: an empty flag list means "nothing flagged", and a ruling that cannot be read, that
cites a location which does not resolve (such a sample is discarded whole), or whose readable samples
fall below the floor is inconclusive, which counts as a flag (fail closed).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field, ValidationError

from .._model import Record, Written

Verdict = Literal["flagged", "nothing_flagged", "inconclusive"]


class Claim(Written):
    """One flag a sample raised: what, where (file:line inside the evidence folder), why."""

    model_config = ConfigDict(frozen=True)

    category: str = Field(description="Flag category; one of those the question allows, or the sample is dropped.")
    location: str = Field(pattern=r"^[^:]+:[1-9][0-9]*$",
                          description="file:line in the evidence folder; a citation that does not resolve drops the "
                                      "sample.")
    reason: str = Field(min_length=1, description="Why the sample raised the flag.")


class Reply(Written):
    """The only shape a sample may answer in."""


    flags: list[Claim]


class Ruling(Record):
    """One K-sampled ruling: what was asked, how many samples counted, and the claims they agreed on."""

    schema_version: Literal[1] = Field(default=1, description="Version of the ruling format.")
    question: str = Field(description="The prompt each sample was asked.")
    samples: int = Field(description="Samples asked (K).")
    readable_samples: int = Field(description="Samples whose reply was readable and whose citations all resolved.")
    floor: float = Field(description="Share of all samples that must raise a claim for it to count, and be "
                                     "readable for the ruling to be conclusive.")
    verdict: Verdict = Field(description="flagged and inconclusive both block certification.")
    flags: list[Claim] = Field(description="Claims raised by at least the floor share of all samples.")
    dropped: list[str] = Field(description="Why samples or claims were not counted.")


def rule(ask: Callable[[str], str], question: str, *, categories: set[str], evidence: Path, k: int = 3,
         floor: float = 2 / 3) -> Ruling:
    """Ask ``k`` times; report claims that at least ``floor`` of the samples raise, citing real lines."""
    share = Fraction(str(floor))
    dropped: list[str] = []
    counted: Counter[tuple[str, str]] = Counter()
    first: dict[tuple[str, str], Claim] = {}
    readable = 0
    for i in range(k):
        claims = _sample(ask, question, i, categories, evidence, dropped)
        if claims is None:
            continue
        readable += 1
        for claim in {(c.category, c.location): c for c in claims}.values():
            counted[(claim.category, claim.location)] += 1
            first.setdefault((claim.category, claim.location), claim)
    agreed = [first[key] for key, n in sorted(counted.items()) if n * share.denominator >= share.numerator * k]
    enough = readable * share.denominator >= share.numerator * k
    verdict: Verdict = "inconclusive" if not enough else "flagged" if agreed else "nothing_flagged"
    return Ruling(question=question, samples=k, readable_samples=readable, floor=float(share), verdict=verdict,
                  flags=agreed, dropped=dropped)


def _sample(ask: Callable[[str], str], question: str, i: int, categories: set[str], evidence: Path,
            dropped: list[str]) -> list[Claim] | None:
    raw = ask(question)
    try:
        reply = Reply.model_validate(json.loads(_unfenced(raw)))
    except (ValueError, ValidationError):
        dropped.append(f"sample {i + 1}: unreadable reply {raw[:80]!r}")
        return None
    problems = [p for p in (_unresolved(c, categories, evidence) for c in reply.flags) if p]
    if problems:  # a sample that cites what is not there is not evidence: it does not count at all
        dropped += [f"sample {i + 1}: {p}" for p in problems]
        return None
    return reply.flags


def _unfenced(raw: str) -> str:
    """A reply wrapped in a Markdown code fence (a common habit of models) is still the same reply."""
    text = raw.strip()
    if text.startswith("```") and text.endswith("```"):
        text = text[3:-3]
        text = text[text.index("\n") + 1:] if "\n" in text else text
    return text


def _unresolved(claim: Claim, categories: set[str], evidence: Path) -> str:
    if claim.category not in categories:
        return f"category {claim.category!r} is not one of {sorted(categories)}"
    path, _, line = claim.location.rpartition(":")
    target = (evidence / path).resolve()
    if not target.is_relative_to(evidence.resolve()) or not target.is_file():
        return f"citation {claim.location} names no file of the evidence"
    if int(line) > len(target.read_text(encoding="utf-8", errors="replace").splitlines()):
        return f"citation {claim.location} is past the end of the file"
    return ""
