"""``tri-agent doctor``: what this machine offers a run, checked, never the value of a secret."""

from __future__ import annotations

import importlib.metadata
import os
import shutil

from ._errors import TriAgentError
from .drivers._mcp import self_check
from .isolation._contract import ROLES, load_charter, violations
from .sandbox._bubblewrap import probe
from .sandbox._confine import landlock_abi
from .sandbox._jail import BUBBLEWRAP, LANDLOCK, strongest
from .sandbox._limits import enforcement

CREDENTIALS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")
CLI_AGENTS = {"claude": "Claude Code CLI", "codex": "Codex CLI"}
SDKS = {"anthropic": "anthropic driver (Messages API)", "openai": "openai driver (Responses, Chat Completions)",
        "mcp": "the engine's tools for CLI agents (Model Context Protocol)", "mutmut": "syntactic mutants"}


def diagnose() -> list[str]:
    """One line per fact: isolation layers, charters, drivers, SDKs and which credentials are set."""
    sandbox = probe()
    os_sandbox = f"bubblewrap {sandbox.bubblewrap}" if sandbox.bubblewrap else f"no: {sandbox.reason}"
    abi = landlock_abi()
    code = strongest()
    code_layer = {BUBBLEWRAP: "bubblewrap (own pid, net, ipc and uts namespaces; only its own folders)",
                  LANDLOCK: f"Landlock ABI {abi} (reads and writes confined, its own network namespace, a "
                            "subreaper; named Unix sockets of the host stay reachable by path)"}.get(
        code or "", "none: accept refuses to start unless --allow-unsandboxed, and then never certifies")
    egress = "its own loopback; the model's API through the allow-list proxy"
    command = {BUBBLEWRAP: f"bubblewrap {sandbox.bubblewrap} ({egress})",
               LANDLOCK: f"Landlock ABI {abi} (reads and writes confined; {egress})"}.get(
        code or "", "no OS sandbox: such a run never certifies")
    lines = ["isolation layers:",
             "  1 physical omission   yes (always)",
             "  2 write audit         yes (always)",
             f"  3 OS sandbox          {os_sandbox}",
             f"    landlock            {f'yes (ABI {abi})' if abi else 'no'}",
             "what each kind of run gets here:",
             "  API-driven roles      physical omission, write audit, the engine's tool set (no OS access at all)",
             f"  command roles         physical omission, write audit, {command}",
             f"  target runs           {code_layer}",
             f"  generator, oracle     {code_layer}",
             "resource limits of every jailed run (target file and exam.yaml: limits:):"]
    lines += [f"  {what:<20}{how}" for what, how in enforcement().items()]
    lines.append("role charters:")
    lines += [f"  {role:<10}{_charter_state(role)}" for role in ROLES]
    lines.append("drivers:")
    lines.append("  scripted   yes (replays recorded role actions; a simulation that can never certify)")
    lines.append("  command    yes (executor protocol v1; any CLI agent that speaks it)")
    lines.append("agent CLIs (run through `python -m tri_agent.drivers._profiles claude|codex` as command agents)"
                 " and SDKs:")
    for cmd, what in CLI_AGENTS.items():
        found = shutil.which(cmd)
        lines.append(f"  {cmd:<10} {'found at ' + found if found else 'not installed'} ({what})")
    for dist, what in SDKS.items():
        lines.append(f"  {dist:<10} {_version(dist)} ({what})")
    lines.append(f"MCP bridge for CLI agents: {self_check()}")
    lines.append("credentials (presence only):")
    lines += [f"  {name:<18} {'set' if os.environ.get(name) else 'not set'}" for name in CREDENTIALS]
    return lines


def _charter_state(role: str) -> str:
    try:
        charter = load_charter(role, unsafe=True)
    except TriAgentError as exc:
        return f"INVALID: {exc.line()}"
    broken = violations(charter.contract)
    return f"breaks {len(broken)} iron rule(s): {broken[0]}" if broken else f"ok ({charter.path})"


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"
