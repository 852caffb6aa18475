"""The command driver: any CLI agent as a subprocess speaking the executor protocol, version 1.

A fresh process per attempt gets one JSON request on stdin::

    {"protocol": "tri-agent-executor/1", "role": "tester", "charter": "...", "task": "...",
     "workspace": "/tmp/tri-tester-x/ws", "tools": ["list", ...], "limits": {"turns": 40, "seconds": 900, ...}}

and must print one JSON response on stdout::

    {"protocol": "tri-agent-executor/1", "status": "ok" | "blocked", "summary": "...", "reason": null,
     "model": "...", "usage": {"input_tokens": 0, ...}, "cost_usd": 0.0}

It works in its workspace directly (the write audit judges what it changed), inside the same jail as all
role-written code (bubblewrap; Landlock where bubblewrap cannot start; with neither, nothing runs unless
unsandboxed runs were allowed), keeping only the network its model's API needs, with a scrubbed
environment holding only the credentials given to this driver. A timeout kills its whole process tree;
output past the cap, unreadable output and another protocol version are evaluation failures, each with
its own status.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError

from .._errors import UsageError
from .._model import Record, Written
from .._yamldoc import explained
from ..sandbox._jail import Jail, written
from ..sandbox._process import Completed, base_env, run
from ._egress import Egress
from ._episode import PROTOCOL, Attempt, Episode, EpisodeResult, Status, Usage, mask
from ._mcp import SERVER, ToolServer


class McpAccess(Record):
    """How the agent reaches the engine's tools: an MCP server it starts as a stdio command."""

    server: str = Field(description="Server name; the tools appear to the agent as mcp__<server>__<tool>.")
    command: list[str] = Field(description="argv of the stdio bridge to the engine's tool server (valid inside the "
                                           "agent's sandbox); put it in the agent's MCP configuration.")
    tools: list[str] = Field(description="The tools the role's contract grants: exactly what the server lists.")


class Request(Record):
    """What the agent receives on stdin."""

    protocol: str = Field(default=PROTOCOL, description="Executor protocol version: " + PROTOCOL + ".")
    role: str = Field(description="Role the agent plays.")
    charter: str = Field(description="The role's charter prompt (the body of its charter file).")
    task: str = Field(description="This episode's task.")
    workspace: str = Field(description="Absolute path of the workspace the agent works in (the same inside "
                                       "its sandbox, where nothing else of the machine's files exists).")
    tools: list[str] = Field(description="Tools the role's contract names.")
    limits: dict[str, Any] = Field(description="What the episode may spend: turns, seconds, budget_usd, "
                                               "output_bytes, write_bytes.")
    mcp: McpAccess | None = Field(default=None, description="The engine's tools over MCP; null for a driver "
                                                           "without them.")


class Response(Written):
    """What the agent must print on stdout."""


    protocol: str = Field(description="Must be " + PROTOCOL + "; any other value is a protocol_mismatch.")
    status: str = Field(description="ok or blocked; error reports that the agent failed (runtime_failure); "
                                    "anything else is malformed_output.")
    summary: str = Field(default="", description="What the agent did, in its own words.")
    reason: str | None = Field(default=None, description="Why it blocked or failed; null when there is none.")
    model: str | None = Field(default=None, description="Model identity the agent reports; null when unknown.")
    usage: Usage = Field(default=Usage(), description="Tokens the agent reports spending.")
    cost_usd: float = Field(default=0.0, description="Cost in US dollars the agent reports; 0 when it reports none.")
    denials: list[str] = Field(default=[], description="Tool uses the agent's own permission layer refused; "
                                                       "recorded as breach attempts.")
    simulation: bool = Field(default=False, description="The agent replayed or faked its work (a recording, a "
                                                        "stub model): the episode is a simulation and never "
                                                        "certifies.")


ENGINE_TOOLS = frozenset({"run_case", "exam_build", "score", "rerun", "file_ticket"})


def _wired(result: EpisodeResult, server: ToolServer, episode: Episode) -> EpisodeResult:
    """Fail closed when a role that needs the engine's tools never reached them over MCP: a tester that could
    not run a case would otherwise look like a tester that chose not to."""
    result = result.model_copy(update={"tool_calls": result.tool_calls + len(server.calls),
                                       "breach_attempts": [*result.breach_attempts, *episode.tools.attempts]})
    needs = ENGINE_TOOLS & set(server.granted)
    if result.status != "ok" or not needs:  # a refusal (blocked) needs no tool; a failure is already one
        return result
    if not server.listed:
        return result.model_copy(update={"status": "protocol_mismatch", "reason": "the agent never listed the "
                                         f"engine's tools over MCP (it needs {', '.join(sorted(needs))})"})
    if any(sorted(names) != server.granted for names in server.listed):
        return result.model_copy(update={"status": "protocol_mismatch",
                                         "reason": "the tools listed over MCP differ from the contract's"})
    return result


class CommandDriver:
    name = "command"

    def __init__(self, argv: list[str], *, credentials: dict[str, str] | None = None, sandbox: bool = True) -> None:
        if not argv:
            raise UsageError("the command driver needs a command")
        self.argv = argv
        self.credentials = credentials or {}
        self.sandbox = sandbox  # False only in tests of the protocol itself: never from acceptance.yaml
        self.layers: list[str] = []

    def run(self, episode: Episode) -> EpisodeResult:
        workspace = episode.tools.workspace.resolve()
        with tempfile.TemporaryDirectory(prefix="tri-agent-home-") as home_dir, \
                ToolServer(episode.tools, Path(home_dir)) as server, \
                Egress(Path(home_dir), {**os.environ, **self.credentials}) as egress:
            home = Path(home_dir)
            env = base_env(home, {**self.credentials, **(egress.env() if self.sandbox else {})})
            access = McpAccess(server=SERVER, command=server.relay(), tools=server.granted)
            request = Request(role=episode.charter.contract.role, charter=episode.charter.body, task=episode.task,
                              workspace=str(workspace), tools=episode.charter.contract.tools,
                              limits=episode.limits.model_dump(), mcp=access)
            stdin, limits = request.model_dump_json().encode(), episode.limits
            try:
                if self.sandbox:  # the jail of role-written code: its own loopback, the model's API through egress
                    # a CLI agent is a JavaScript or Python runtime: never bounded by its address space
                    done, self.layers = Jail(writable=(workspace, home), reserves=True).run(
                        egress.wrap(self.argv, sys.executable), cwd=workspace, env=env, timeout=limits.seconds,
                        cap=limits.output_bytes, stdin=stdin, kill_at_cap=True, file_cap=limits.write_bytes)
                else:
                    done = run(self.argv, cwd=workspace, env=env, timeout=limits.seconds, cap=limits.output_bytes,
                               stdin=stdin, kill_at_cap=True)
            except UsageError as exc:
                return self._result(episode, "spawn_failure", None, 0.0, exc.line())
            # the workspace is audited at harvest; what the agent left in its HOME is counted here
            in_home = written([home]) - server.relay_path.stat().st_size - egress.relay_path.stat().st_size
        if in_home > limits.write_bytes:
            return self._result(episode, "oversized_output", None, done.seconds,
                                f"wrote {in_home} bytes into its home folder, past the {limits.write_bytes}-byte cap")
        result = self._judge(episode, done)
        return _wired(result, server, episode)

    def _judge(self, episode: Episode, done: Completed) -> EpisodeResult:
        if done.timed_out:
            return self._result(episode, "timeout", None, done.seconds, f"killed after {done.seconds:.0f}s")
        if done.truncated:
            return self._result(episode, "oversized_output", None, done.seconds,
                                f"output past the {episode.limits.output_bytes}-byte cap")
        try:
            raw = json.loads(done.stdout.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            stderr = mask(done.stderr.decode("utf-8", "replace"), self.credentials).strip().splitlines()[-1:]
            status: Status = "runtime_failure" if done.exit_code else "malformed_output"
            return self._result(episode, status, None, done.seconds,
                                f"exit {done.exit_code}; " + (stderr[0] if stderr else "no readable JSON on stdout"))
        spoken = raw.get("protocol") if isinstance(raw, dict) else None
        if isinstance(spoken, str) and spoken != PROTOCOL:  # before the fields: another version has other keys
            return self._result(episode, "protocol_mismatch", None, done.seconds,
                                f"the agent speaks {spoken!r}, not {PROTOCOL!r}")
        try:
            response = Response.model_validate(raw)
        except ValidationError as exc:
            why = explained(exc, Response, "the response on stdout").line()
            return self._result(episode, "runtime_failure" if done.exit_code else "malformed_output", None,
                                done.seconds, f"exit {done.exit_code}; {mask(why, self.credentials)}")
        if response.status == "error":  # a profile reporting that its agent failed
            return self._result(episode, "runtime_failure", response, done.seconds, response.reason)
        if response.status not in ("ok", "blocked"):
            return self._result(episode, "malformed_output", response, done.seconds,
                                response.reason or f"status {response.status!r} is not ok or blocked")
        status = "blocked" if response.status == "blocked" else "ok"
        return self._result(episode, status, response, done.seconds, response.reason)

    def _result(self, episode: Episode, status: Status, response: Response | None, seconds: float,
                reason: str | None) -> EpisodeResult:
        attempt = Attempt(driver=self.name, model=response.model if response else None, status=status,
                          usage=response.usage if response else Usage(), cost_usd=response.cost_usd if response else 0,
                          cost_basis="reported by the agent" if response else "none", seconds=round(seconds, 3),
                          error=None if status in ("ok", "blocked") else reason)
        secrets = self.credentials
        return EpisodeResult(role=episode.charter.contract.role, status=status,
                             summary=mask(response.summary, secrets) if response else "",
                             reason=mask(reason, secrets) if reason else None,
                             simulation=bool(response and response.simulation), attempts=[attempt],
                             breach_attempts=[mask(d, secrets) for d in response.denials] if response else [])
