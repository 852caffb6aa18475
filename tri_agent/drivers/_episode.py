"""Drivers run one role episode; this module holds what they share.

An episode gets the role's charter, its task, its tool box (workspace and contract), and limits; it
ends with an ``EpisodeResult`` whose status is one of a closed taxonomy::

    ok                 a valid result
    blocked            the role validly refuses, with a reason
    spawn_failure      the agent could not be started            \\
    timeout            it ran past its time limit                  |
    runtime_failure    it crashed or its API failed                |  evaluation failures: never graded,
    oversized_output   its output was past the cap                 |  never counted as clean, always in
    malformed_output   its output could not be read                |  the denominator
    protocol_mismatch  it spoke another protocol version          /

Every attempt records the model, token usage, cost with its basis, latency and the driver's version.
Secrets are masked from anything a driver returns. The ``scripted`` driver replays recorded role
actions through the same tool box: it is a simulation and its results can never certify acceptance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from pydantic import ConfigDict, Field

from .._errors import InfrastructureFailure
from .._model import Record
from .._version import __version__
from ..isolation._contract import Charter
from ..isolation._tools import ToolBox

Status = Literal["ok", "blocked", "spawn_failure", "timeout", "runtime_failure", "oversized_output",
                 "malformed_output", "protocol_mismatch"]
STATUSES: dict[Status, bool] = {  # status -> is it a valid (gradable) outcome
    "ok": True, "blocked": True, "spawn_failure": False, "timeout": False, "runtime_failure": False,
    "oversized_output": False, "malformed_output": False, "protocol_mismatch": False,
}
PROTOCOL = "tri-agent-executor/1"


class Limits(Record):
    """What one episode may spend."""

    model_config = ConfigDict(frozen=True)

    turns: int = Field(default=40, ge=1, description="Model turns (tool-use round trips).")
    seconds: float = Field(default=900, gt=0, description="Wall time.")
    budget_usd: float = Field(default=2.0, ge=0, description="Cost cap; the episode stops when it is reached.")
    output_bytes: int = Field(default=1 << 20, ge=1024, description="Cap on what the agent returns.")
    write_bytes: int = Field(default=64 << 20, ge=1 << 16, description="Cap on the bytes an episode may write into "
                             "its workspace (apparent size of what it added or changed); past it, a breach.")


class Usage(Record):
    """Tokens spent, as the provider or the agent reported them."""

    input_tokens: int = Field(default=0, description="Input tokens; 0 when none were reported.")
    output_tokens: int = Field(default=0, description="Output tokens; 0 when none were reported.")
    cache_read_tokens: int = Field(default=0, description="Input tokens read from the provider's prompt cache; 0 "
                                                          "when none were reported.")
    cache_write_tokens: int = Field(default=0, description="Input tokens written to the provider's prompt cache; 0 "
                                                           "when none were reported.")

    def __add__(self, other: Usage) -> Usage:
        return Usage(**{k: getattr(self, k) + getattr(other, k) for k in Usage.model_fields})


class Attempt(Record):
    """One try at an episode."""

    driver: str = Field(description="Driver that made the attempt: scripted, command, anthropic, openai, "
                                    "openai-chat or in-session.")
    driver_version: str = Field(default=__version__, description="Version of tri-agent that ran the driver.")
    model: str | None = Field(description="Model identity as the provider reported it.")
    status: Status = Field(description="How the attempt ended: ok, blocked, or an evaluation failure.")
    usage: Usage = Field(default_factory=Usage, description="Tokens the attempt spent; zeros when none were reported.")
    cost_usd: float = Field(default=0.0, description="Cost in US dollars, computed as cost_basis says; 0 when unknown.")
    cost_basis: str = Field(description="How the cost was computed (price table, provider figure, or none).")
    seconds: float = Field(description="Wall time of the attempt in seconds (left out of round evidence).")
    error: str | None = Field(default=None, description="Why an evaluation failure happened, or the scripted "
                                                        "driver's refused calls; null when there is nothing to say.")


class EpisodeResult(Record):
    """What a driver returns for one role episode."""

    schema_version: Literal[1] = Field(default=1, description="Version of the episode result format.")
    role: str = Field(description="Role that played the episode.")
    status: Status = Field(description="ok, blocked, or an evaluation failure (never graded, never clean).")
    summary: str = Field(default="", description="The role's own account of what it did, secrets masked; empty "
                                                 "when it gave none.")
    reason: str | None = Field(default=None, description="Why the role blocked, or why the episode failed.")
    simulation: bool = Field(description="True for the scripted driver: such a result can never certify.")
    attempts: list[Attempt] = Field(description="Each try at the episode, in order (the drivers make one).")
    tool_calls: int = Field(default=0, description="Model turns for an API driver, recorded calls for the scripted "
                                                   "driver; 0 when the driver does not count them.")
    breach_attempts: list[str] = Field(default_factory=list, description="Refused tool calls that tried to escape.")
    isolation: list[str] = Field(default_factory=list, description="Isolation layers that were active, set by the "
                                 "orchestrator: physical-omission, write-audit, tool-confinement, bubblewrap.")

    @property
    def valid(self) -> bool:
        return STATUSES[self.status]


@dataclass(frozen=True)
class Episode:
    charter: Charter
    task: str
    tools: ToolBox
    limits: Limits


class Driver(Protocol):
    name: str

    def run(self, episode: Episode) -> EpisodeResult: ...


def mask(text: str, secrets: dict[str, str]) -> str:
    """``text`` with every secret value replaced by its name (short values are not secrets)."""
    for name, value in sorted(secrets.items(), key=lambda kv: -len(kv[1])):
        if len(value) >= 8:
            text = text.replace(value, f"[masked:{name}]")
    return text


class RunBudget:
    """The money a whole run may spend: each episode gets at most what is left, and none once it is gone."""

    def __init__(self, total_usd: float) -> None:
        self.total, self.spent = total_usd, 0.0

    def limits_for(self, limits: Limits) -> Limits:
        remaining = self.total - self.spent
        if remaining <= 0:
            raise InfrastructureFailure(f"the run's budget of ${self.total:g} is spent (${self.spent:.4f})",
                                        hint="raise the run budget, or resume with a new one")
        return limits.model_copy(update={"budget_usd": min(limits.budget_usd, remaining)})

    def charge(self, result: EpisodeResult) -> None:
        self.spent += sum(a.cost_usd for a in result.attempts)
