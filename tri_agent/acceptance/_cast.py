"""The cast: which driver plays each role, and one episode of a role in its own audited workspace.

An episode assembles the role's workspace from its contract and the run's layout (physical omission),
audits everything the role is about to receive against every sealed key (exit 6 before launch), snapshots
it, lets the driver play, scans the reply, snapshots again and harvests the allowed changes back to where
the layout says they belong (write audit). A breach quarantines the workspace and stops the run. The
builder may instead be the agent session itself (``in-session``): then a round that has builder tickets
waits until the session has committed a fix.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import BuilderTurn, PolicyViolation, UsageError
from ..drivers._command import CommandDriver
from ..drivers._episode import Attempt, Driver, Episode, EpisodeResult, Limits
from ..drivers._llm import LLMDriver, anthropic_driver, openai_driver
from ..drivers._scripted import ScriptedDriver
from ..evidence._trail import EvidenceStore
from ..isolation._contract import load_charter
from ..isolation._tools import ToolBox
from ..isolation._workspace import View, assemble, harvest, quarantine, snapshot
from ._audit import Exposure, before_launch, reply
from ._config import AcceptanceConfig

RunCase = Callable[[str], dict[str, Any]]


@dataclass(frozen=True)
class Stage:
    """What an episode plays on: the role's layout, the keys the audit checks, where a breach goes."""

    view: View
    keys: list[Path]
    quarantine: Path
    transcripts: Path
    exposure: Exposure = field(default_factory=Exposure)


def play(project: Path, config: AcceptanceConfig, role: str, k: int, stage: Stage,
         run_case: RunCase | None = None) -> tuple[EpisodeResult, list[str]]:
    """Round ``k``'s episode of ``role``: audited before launch, its reply scanned, its allowed changes
    harvested to where the layout says they belong; returns the result and the layout paths it changed."""
    charter = load_charter(role)
    with tempfile.TemporaryDirectory(prefix=f"tri-{role}-") as tmp:
        ws = Path(tmp) / "ws"
        assemble(charter.contract, stage.view, ws)
        task = f"Round {k}. Play your role as your charter says, then submit."
        before_launch(charter.contract, ws, {"charter": charter.body, "task": task}, stage.keys, stage.exposure)
        before = snapshot(ws)
        driver = driver_for(config, role, project, k, stage.transcripts)
        limits = config.limits.get(role, Limits())  # type: ignore[call-overload]
        result = driver.run(Episode(charter, task, ToolBox(charter.contract, ws, run_case=run_case), limits))
        result = reply(result.model_copy(update={"isolation": isolation(driver)}), charter.contract, stage.keys,
                       stage.exposure)
        after = snapshot(ws)
        try:
            changed = harvest(charter.contract, before, after, ws, stage.view, limits.write_bytes)
        except PolicyViolation:
            quarantine(ws, stage.quarantine, f"{role}-round-{k:04d}")
            raise
    return result, changed


def isolation(driver: Driver) -> list[str]:
    """The layers that really applied: a command agent acts on files itself, the others only through tools."""
    layers = ["physical-omission", "write-audit"]
    if isinstance(driver, CommandDriver):
        return [*layers, *driver.layers]  # bubblewrap, or Landlock where bubblewrap cannot start
    return [*layers, "tool-confinement"]


def in_session_builder(project: Path, store: EvidenceStore, k: int, fence: list[str]) -> EpisodeResult:
    """The agent session is the builder: a round after builder tickets waits until it committed a fix.
    ``fence`` names the agent-client settings that are missing (empty: the session is fenced in)."""
    head = git_head(project)
    rounds = [e for e in store.entries() if e.kind == "round"]
    last = store.root / "records" / rounds[-1].name if rounds else None
    tickets = sorted((last / "tickets").glob("builder-*.md")) if last else []
    if tickets and last is not None and json.loads((last / "session.json").read_text())["head"] == head:
        raise BuilderTurn(f"round {k} waits for the builder: {len(tickets)} ticket(s) in exam/tickets/builder",
                          hint="fix them in target/, commit, then run: tri-agent accept --resume")
    summary = f"the session committed {head[:12]}" if tickets else f"the target as committed ({head[:12]})"
    attempt = Attempt(driver="in-session", model=None, status="ok", cost_basis="none: the agent session",
                      seconds=0.0)
    layers = [FENCE] if not fence else [f"none: agent settings missing: {'; '.join(fence)}"]
    return EpisodeResult(role="builder", status="ok", summary=summary, simulation=False, attempts=[attempt],
                         isolation=layers)


FENCE = "agent-client-sandbox"


def git_head(project: Path) -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise UsageError("an in-session builder needs a git work tree with commits", hint="commit the target")
    return done.stdout.strip()


def ruling_asker(config: AcceptanceConfig, project: Path, k: int, transcripts: Path) -> LLMDriver | None:
    """The judge's model, for rulings, when a model plays the judge (scripted and command judges rule nothing)."""
    if config.drivers.get("judge") not in ("anthropic", "openai"):
        return None
    driver = driver_for(config, "judge", project, k, transcripts)
    return driver if isinstance(driver, LLMDriver) else None


def driver_for(config: AcceptanceConfig, role: str, project: Path, k: int, transcripts: Path) -> Driver:
    name = config.drivers.get(role, "scripted")
    if name == "scripted":
        if config.script is None:
            raise UsageError(f"the {role} is scripted but acceptance.yaml names no script")
        return ScriptedDriver(project / config.script, k)
    if name == "command":
        if role not in config.commands:
            raise UsageError(f"the {role} runs as a command but acceptance.yaml has no commands.{role}")
        return CommandDriver(config.commands[role])
    if name in ("anthropic", "openai"):
        return _api_driver(config, role, name, transcripts)
    raise UsageError(f"driver {name!r} cannot play the {role}", hint="in-session is for the builder only")


def _api_driver(config: AcceptanceConfig, role: str, name: str, transcripts: Path) -> Driver:
    spec = config.models.get(role)
    if spec is None:
        raise UsageError(f"the {role} uses {name} but acceptance.yaml has no models.{role}")
    env = spec.api_key_env or ("ANTHROPIC_API_KEY" if name == "anthropic" else "OPENAI_API_KEY")
    key = os.environ.get(env)
    if not key:
        raise UsageError(f"the {role}'s {name} driver needs {env}", hint=f"export {env}")
    if name == "anthropic":
        return anthropic_driver(spec.model, api_key=key, base_url=spec.base_url, temperature=spec.temperature,
                                transcripts=transcripts)
    return openai_driver(spec.model, api_key=key, base_url=spec.base_url, api=spec.api,
                         temperature=spec.temperature, transcripts=transcripts)
