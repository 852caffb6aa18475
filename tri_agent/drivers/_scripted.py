"""The scripted driver: replays recorded role actions through the real tool box.

A script is a list of recorded episodes per role; the last episode recorded for a role at or before the
current round is the one replayed, so one recording can serve every later round. Its results are labelled
a simulation: a scripted run can never certify acceptance or become a baseline.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from .. import _yamldoc
from .._errors import MalformedInput
from .._model import Written
from ..isolation._tools import ToolError
from ._episode import Attempt, Episode, EpisodeResult


class ScriptedCall(Written):
    """One recorded tool call. ``each_case`` repeats it for every case of the visible build (as
    ``args.case``), since case ids change with every seed; ``content_file`` (beside the script) supplies
    a write's content."""

    model_config = ConfigDict(frozen=True)

    tool: str = Field(description="Name of the tool called.")
    args: dict[str, Any] = Field(default_factory=dict, description="The call's arguments.")
    each_case: bool = Field(default=False, description="Repeat the call for every case of the last visible build in "
                                                       "the workspace, its id as args.case.")
    content_file: str | None = Field(default=None, description="File beside the script whose text becomes "
                                                               "args.content; null: the args as written.")


class ScriptedEpisode(Written):
    """One recorded episode: the tool calls a role made and how it ended."""

    model_config = ConfigDict(frozen=True)

    role: str = Field(description="Role the episode was recorded for.")
    round: int = Field(ge=1, description="First round this episode plays; it replays until a later one takes over.")
    calls: list[ScriptedCall] = Field(default_factory=list, description="Tool calls in replay order, submit "
                                                                        "excluded.")
    submit: dict[str, Any] = Field(description="The submit call's arguments (summary, blocked, reason).")


class Script(Written):
    """A script file: the recorded episodes the scripted driver replays."""

    model_config = ConfigDict(frozen=True)

    schema_version: Literal[1] = Field(default=1, description="Version of the script format.")
    episodes: list[ScriptedEpisode] = Field(description="Recorded episodes; per role, the one with the latest round "
                                                        "at or before the current round plays.")


class ScriptedDriver:
    """Replays a script through the real tool box; labelled a simulation."""

    name = "scripted"

    def __init__(self, script: Path, round_number: int = 1) -> None:
        self.script = _yamldoc.load(script, Script)
        self.path = script
        self.round = round_number

    def run(self, episode: Episode) -> EpisodeResult:
        start = time.monotonic()
        role = episode.charter.contract.role
        candidates = [e for e in self.script.episodes if e.role == role and e.round <= self.round]
        if not candidates:
            raise MalformedInput(f"no scripted episode for {role} up to round {self.round}", where=str(self.path))
        recorded = max(candidates, key=lambda e: e.round)
        errors = []
        for tool, args in self._expand(recorded.calls, episode)[: episode.limits.turns * 50]:
            try:
                episode.tools.call(tool, args)
            except ToolError as exc:  # a refused call is evidence, as it would be for a live agent
                errors.append(f"{tool}: {exc}")
        episode.tools.call("submit", recorded.submit) if "submit" in episode.tools.contract.tools else None
        blocked = bool(recorded.submit.get("blocked"))
        attempt = Attempt(driver=self.name, model=None, status="blocked" if blocked else "ok",
                          cost_basis="none: a simulation", seconds=round(time.monotonic() - start, 3),
                          error="; ".join(errors) or None)
        return EpisodeResult(role=role, status=attempt.status, summary=str(recorded.submit.get("summary", "")),
                             reason=recorded.submit.get("reason"), simulation=True, attempts=[attempt],
                             tool_calls=len(recorded.calls), breach_attempts=list(episode.tools.attempts))


    def _expand(self, calls: list[ScriptedCall], episode: Episode) -> list[tuple[str, dict[str, Any]]]:
        out: list[tuple[str, dict[str, Any]]] = []
        for call in calls:
            args = dict(call.args)
            if call.content_file is not None:
                args["content"] = (self.path.parent / call.content_file).read_text(encoding="utf-8")
            if call.each_case:
                out += [(call.tool, {**args, "case": case}) for case in _visible_cases(episode)]
            else:
                out.append((call.tool, args))
        return out


def _visible_cases(episode: Episode) -> list[str]:
    found = sorted(episode.tools.workspace.glob("builds/*/visible/cases.jsonl"))
    if not found:
        return []
    return [json.loads(line)["case"] for line in found[-1].read_text(encoding="utf-8").splitlines() if line.strip()]
