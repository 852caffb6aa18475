"""The *weakened* signal: a judge asked about each changed test file, K times, that can only flag or stay silent.

The question, the masking, the retries and the sampling are ``drivers._weakening``'s, shared with an acceptance's
ruling on its builder's tests. A claim whose citation does not resolve is dropped with its sample; a flag counts
only when at least ``floor`` of the K samples raise it; too few readable samples make the signal inconclusive.
``samples`` is null when no judge ran, never a made-up figure.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from .._errors import UsageError
from .._model import Record
from ..drivers._episode import Usage
from ..drivers._rulings import Claim, Ruling
from ..drivers._weakening import FLOOR, Changed, K, masked, weakening

__all__ = ["FLOOR", "Judge", "K", "Weakened", "agent_judge", "api_judge", "judged", "masked", "not_judged",
           "with_forged"]


class Weakened(Record):
    """The judge's finding on the changed test files, and who judged."""

    state: Literal["flagged", "silent", "inconclusive", "not_judged"] = Field(
        description="flagged: a forged outcome, or claims at or above the floor; silent: the judge found nothing "
                    "to report (never a pass); inconclusive: too few readable samples; not_judged: no judge, or no "
                    "test file changed.")
    samples: int | None = Field(description="Samples that counted (readable, every citation resolved); null when "
                                            "no judge ran.")
    k: int = Field(description="Samples asked for.")
    floor: float = Field(description="Share of the K samples a flag needs.")
    flags: list[Claim] = Field(description="The judge's claims that reached the floor, each at a real file:line.")
    forged: list[Claim] = Field(default_factory=list, description=(
        "Moves the change added that forge outcomes (testsignals._infrastructure.RULES), found without a judge: "
        "each flags by itself."))
    dropped: list[str] = Field(description="Samples and claims not counted, and why.")
    judge: str | None = Field(description="The judge's model or driver identity; null when none ran.")
    usage: Usage | None = Field(default=None, description="Tokens the judge's samples used, as its provider "
                                                          "reported them; null when none ran or none were told.")
    files: list[str] = Field(description="The changed test files, and the infrastructure around them, asked about.")
    reason: str = Field(description="Why the state is what it is, in words.")


@dataclass(frozen=True)
class Judge:
    """Who rules on weakening: a name for the record, the call that asks, and what it has spent so far."""

    name: str
    ask: Callable[[str], str]
    spent: Callable[[], Usage] | None = None


SYSTEM = ("You review changes to a repository's tests. You rule only on the files in the message, you cite them by "
          "file:line, and you can only raise flags: you never certify anything.")
_KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}


def api_judge(provider: str, model: str, *, base_url: str | None = None, key_env: str | None = None) -> Judge:
    """A model behind the Anthropic or OpenAI SDK as the judge (``base_url``: a compatible server; an OpenAI one
    is then spoken to through Chat Completions)."""
    from ..drivers._llm import anthropic_driver, openai_driver

    env = key_env or _KEYS.get(provider, "")
    if provider not in _KEYS:
        raise UsageError(f"--judge {provider!r} is not a judge", hint="use anthropic or openai")
    key = os.environ.get(env)
    if not key:
        raise UsageError(f"the {provider} judge needs {env}", hint=f"export {env}, or name the variable with --key-env")
    driver = anthropic_driver(model, api_key=key, base_url=base_url) if provider == "anthropic" else \
        openai_driver(model, api_key=key, base_url=base_url, api="chat" if base_url else "responses")
    return Judge(f"{provider}:{model}", lambda q: driver.ask_text(SYSTEM, q), lambda: driver.spent)


def agent_judge(profile: str, model: str | None = None, *, binary: str | None = None,
                timeout: float = 600.0) -> Judge:
    """A CLI agent (claude or codex, through its profile) as the judge: each sample one plain question, with no
    tools and no project settings, in an empty folder; the tokens it reports are added up."""
    from ..drivers._profiles import ask_agent

    if profile not in ("claude", "codex"):
        raise UsageError(f"--judge {profile!r} is not a judge", hint="use anthropic, openai, claude or codex")
    spent = [Usage()]

    def ask(question: str) -> str:
        text, usage = ask_agent(profile, question, SYSTEM, binary=binary, model=model, timeout=timeout)
        spent[0] = spent[0] + Usage(**usage)
        return text

    return Judge(f"{profile}-cli:{model or 'default'}", ask, lambda: spent[0])


def not_judged(files: list[str], why: str, k: int = K, floor: float = FLOOR) -> Weakened:
    return Weakened(state="not_judged", samples=None, k=k, floor=floor, flags=[], dropped=[], judge=None,
                    files=files, reason=why)


def with_forged(weakened: Weakened, forged: list[Claim]) -> Weakened:
    """``weakened`` with the forged outcomes the scan found: any one of them flags, whatever the judge said."""
    if not forged:
        return weakened
    return weakened.model_copy(update={"state": "flagged", "forged": forged, "reason": (
        f"{len(forged)} move(s) that forge outcomes, found without a judge; the judge: {weakened.reason}")})


def judged(judge: Judge, changed: list[Changed], *, k: int = K, floor: float = FLOOR, retries: int = 2) -> Weakened:
    """Ask ``judge`` about ``changed`` (path, before, after) ``k`` times; flag what ``floor`` of them agree on."""
    files = [p for p, _, _ in changed]
    if not changed:
        return not_judged(files, "no test file changed", k, floor)
    ruling = weakening(judge.ask, changed, k=k, floor=floor, retries=retries)
    spent = judge.spent() if judge.spent else None
    return _weakened(ruling, judge, files, k, floor).model_copy(update={"usage": spent})


def _weakened(ruling: Ruling, judge: Judge, files: list[str], k: int, floor: float) -> Weakened:
    if ruling.verdict == "inconclusive":
        return Weakened(state="inconclusive", samples=ruling.readable_samples, k=k, floor=floor, flags=[],
                        dropped=ruling.dropped, judge=judge.name, files=files,
                        reason=f"{ruling.readable_samples} of {k} samples were readable, below the floor")
    state: Literal["flagged", "silent"] = "flagged" if ruling.flags else "silent"
    return Weakened(state=state, samples=ruling.readable_samples, k=k, floor=floor, flags=ruling.flags,
                    dropped=ruling.dropped, judge=judge.name, files=files,
                    reason=f"{len(ruling.flags)} claim(s) reached {floor:.0%} of {k} samples" if ruling.flags
                    else "no claim reached the floor: nothing to report (not a pass)")
