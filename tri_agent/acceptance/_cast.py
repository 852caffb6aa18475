"""The cast: which driver plays each role, and one episode of a role in its own audited workspace.

An episode assembles the role's workspace from its contract (physical omission), snapshots it, lets the
driver play, snapshots again and harvests the allowed changes back into the project (write audit). A
breach quarantines the workspace and stops the run. The builder may instead be the agent session itself
(``in-session``): then a round that has builder tickets waits until the session has committed a fix.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable
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
from ..isolation._workspace import assemble, harvest, quarantine, snapshot
from ._config import AcceptanceConfig

RunCase = Callable[[str], dict[str, Any]]


def play(project: Path, config: AcceptanceConfig, role: str, k: int, run_case: RunCase | None = None) -> EpisodeResult:
    """Round ``k``'s episode of ``role``, its allowed changes harvested into the project."""
    charter = load_charter(role)
    with tempfile.TemporaryDirectory(prefix=f"tri-{role}-") as tmp:
        ws = Path(tmp) / "ws"
        assemble(charter.contract, project, ws)
        before = snapshot(ws)
        driver = driver_for(config, role, project, k)
        task = f"Round {k}. Play your role as your charter says, then submit."
        result = driver.run(Episode(charter, task, ToolBox(charter.contract, ws, run_case=run_case), Limits()))
        result = result.model_copy(update={"isolation": isolation(driver)})
        after = snapshot(ws)
        try:
            harvest(charter.contract, before, after, ws, project)
        except PolicyViolation:
            quarantine(ws, project / "quarantine", f"{role}-round-{k:04d}")
            raise
    return result


def isolation(driver: Driver) -> list[str]:
    """The layers that really applied: a command agent acts on files itself, the others only through tools."""
    layers = ["physical-omission", "write-audit"]
    if isinstance(driver, CommandDriver):
        return [*layers, "bubblewrap"] if driver.sandbox else layers
    return [*layers, "tool-confinement"]


def in_session_builder(project: Path, store: EvidenceStore, k: int) -> EpisodeResult:
    """The agent session is the builder: a round after builder tickets waits until it committed a fix."""
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
    return EpisodeResult(role="builder", status="ok", summary=summary, simulation=False, attempts=[attempt],
                         isolation=["none: the agent session is the builder, bound by the charter and the audit of "
                                    "what it commits"])


def git_head(project: Path) -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=project, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise UsageError("an in-session builder needs a git work tree with commits", hint="commit the target")
    return done.stdout.strip()


def ruling_asker(config: AcceptanceConfig, project: Path, k: int) -> LLMDriver | None:
    """The judge's model, for rulings, when a model plays the judge (scripted and command judges rule nothing)."""
    if config.drivers.get("judge") not in ("anthropic", "openai"):
        return None
    driver = driver_for(config, "judge", project, k)
    return driver if isinstance(driver, LLMDriver) else None


def driver_for(config: AcceptanceConfig, role: str, project: Path, k: int) -> Driver:
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
        return _api_driver(config, role, name, project)
    raise UsageError(f"driver {name!r} cannot play the {role}", hint="in-session is for the builder only")


def _api_driver(config: AcceptanceConfig, role: str, name: str, project: Path) -> Driver:
    spec = config.models.get(role)
    if spec is None:
        raise UsageError(f"the {role} uses {name} but acceptance.yaml has no models.{role}")
    env = spec.api_key_env or ("ANTHROPIC_API_KEY" if name == "anthropic" else "OPENAI_API_KEY")
    key = os.environ.get(env)
    if not key:
        raise UsageError(f"the {role}'s {name} driver needs {env}", hint=f"export {env}")
    transcripts = project / "transcripts"
    if name == "anthropic":
        return anthropic_driver(spec.model, api_key=key, base_url=spec.base_url, temperature=spec.temperature,
                                transcripts=transcripts)
    return openai_driver(spec.model, api_key=key, base_url=spec.base_url, api=spec.api,
                         temperature=spec.temperature, transcripts=transcripts)
