"""Profiles: adapters that let a CLI agent speak the executor protocol.

Run as ``python -m tri_agent.drivers._profiles claude`` (the command driver's argv); it reads the executor
request on stdin, runs the agent, and prints the executor response. The Claude Code profile:

- runs ``claude -p`` with ``--output-format stream-json``, the charter appended to the system prompt, the
  request's turn limit, and no web tools;
- gives it the engine's tools over MCP: the episode's own ``--mcp-config`` (the request's bridge command)
  with ``--strict-mcp-config`` (no user or project server), and ``--allowedTools`` naming exactly the
  granted ``mcp__tri__<tool>`` tools; the stream's init message says which tools it really received, and
  any difference from the granted ones fails the episode closed;
- gives it its own config folder (``CLAUDE_CONFIG_DIR`` in the role's HOME) holding generated user
  settings, and loads no project or local settings (``--setting-sources user``), so nothing in a
  workspace can steer it;
- denies its file tools every absolute path named in ``TRI_AGENT_DENY`` (colon-separated: the project
  and the evidence store), and turns its own sandbox on;
- judges the run by the JSON it prints, not by its exit code: ``is_error`` is a runtime failure, each
  ``permission_denials`` entry is reported as a breach attempt, and the role's verdict is the last JSON
  object of its final message (``{"status": "ok" | "blocked", "summary": ..., "reason": ...}``).

The Codex profile runs ``codex exec --json`` with the workspace-write sandbox, no approvals (an MCP call
waiting for one would be cancelled), no persisted session, its own ``CODEX_HOME`` whose ``config.toml``
names the engine's MCP server with ``enabled_tools`` set to exactly the granted tools (the server's own
record of ``tools/list`` is what the driver checks); it reads the JSONL event stream: usage from every
``turn.completed``, a ``turn.failed`` or ``error`` event is a runtime failure, and the verdict is the
last JSON line of the last ``agent_message``.

The agents' own permission rules and sandboxes are a courtesy layer: the write audit and bubblewrap are
what enforce the contract.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._command import Request
from ._episode import PROTOCOL

VERDICT_INSTRUCTIONS = ("\n\nWhen you are done, end your final message with one line holding only a JSON object: "
                        '{"status": "ok" or "blocked", "summary": "what you did", "reason": "why, if blocked"}.')
_JSON_LINE = re.compile(r"\{.*\}")


def claude_settings(deny: list[str]) -> dict[str, Any]:
    rules = [f"{tool}(/{path.rstrip('/')}/**)" for path in deny for tool in ("Read", "Edit")]
    return {"permissions": {"deny": [*rules, "WebFetch", "WebSearch"], "defaultMode": "acceptEdits"},
            "sandbox": {"enabled": True, "filesystem": {"denyRead": deny, "denyWrite": deny}}}


def claude_argv(binary: str, request: Request, mcp_config: Path | None = None) -> list[str]:
    argv = [binary, "-p", request.task, "--output-format", "stream-json", "--verbose", "--append-system-prompt",
            request.charter + VERDICT_INSTRUCTIONS, "--max-turns", str(request.limits.get("turns", 40)),
            "--setting-sources", "user", "--disallowedTools", "WebFetch", "WebSearch"]
    if request.mcp is not None and mcp_config is not None:
        # only this episode's server (--strict-mcp-config: no user or project servers), its tools allowed
        argv += ["--mcp-config", str(mcp_config), "--strict-mcp-config",
                 "--allowedTools", *mcp_tool_names(request)]
    model = os.environ.get("TRI_AGENT_MODEL")
    return [*argv, "--model", model] if model else argv


def mcp_tool_names(request: Request) -> list[str]:
    """How Claude Code names the engine's tools: mcp__<server>__<tool>."""
    return [f"mcp__{request.mcp.server}__{tool}" for tool in request.mcp.tools] if request.mcp else []


def claude_mcp_config(request: Request) -> dict[str, Any]:
    assert request.mcp is not None
    command = request.mcp.command
    return {"mcpServers": {request.mcp.server: {"type": "stdio", "command": command[0], "args": command[1:]}}}


def claude_response(stdout: str, wanted: list[str] | None = None) -> dict[str, Any]:
    """The executor response for Claude Code's ``--output-format stream-json`` output: the init message says
    which tools the agent really received (checked against ``wanted``, the engine's MCP tools), the result
    message how it ended."""
    events = [e for e in (_json(line) for line in stdout.splitlines()) if isinstance(e, dict)]
    init = next((e for e in events if e.get("type") == "system" and e.get("subtype") == "init"), None)
    out = next((e for e in reversed(events) if e.get("type") == "result"), None)
    if out is None:
        return {"protocol": PROTOCOL, "status": "malformed", "reason": "claude printed no result"}
    base = _claude_base(out)
    miswired = _miswired(init, wanted) if wanted is not None else None
    if miswired:
        return {**base, "status": "error", "reason": f"MCP wiring: {miswired}"}
    if out.get("is_error") or out.get("subtype") != "success":
        return {**base, "status": "error", "reason": f"claude ended with {out.get('subtype')}"}
    verdict = _last_json(str(out.get("result", "")))
    if verdict is None or verdict.get("status") not in ("ok", "blocked"):
        return {**base, "status": "malformed", "reason": "the final message holds no verdict line"}
    return {**base, "status": verdict["status"], "summary": str(verdict.get("summary", "")),
            "reason": verdict.get("reason")}


def _claude_base(out: dict[str, Any]) -> dict[str, Any]:
    usage = out.get("usage") or {}
    return {
        "protocol": PROTOCOL, "model": next(iter(out.get("modelUsage") or {}), None),
        "usage": {"input_tokens": usage.get("input_tokens", 0), "output_tokens": usage.get("output_tokens", 0),
                  "cache_read_tokens": usage.get("cache_read_input_tokens", 0),
                  "cache_write_tokens": usage.get("cache_creation_input_tokens", 0)},
        "cost_usd": out.get("total_cost_usd", 0.0),
        "denials": [f"{d.get('tool_name')} {json.dumps(d.get('tool_input'), sort_keys=True)}"
                    for d in out.get("permission_denials") or []],
    }


def _miswired(init: dict[str, Any] | None, wanted: list[str]) -> str | None:
    """Why the tools the agent received are not exactly the engine's granted ones (None: they are)."""
    if init is None:
        return "no init message: the tools the agent received are unknown"
    got = {t for t in init.get("tools") or [] if isinstance(t, str) and t.startswith("mcp__")}
    missing, extra = sorted(set(wanted) - got), sorted(got - set(wanted))
    if missing or extra:
        return f"missing {missing or '-'}, not granted {extra or '-'}"
    return None


def _json(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def _last_json(text: str) -> dict[str, Any] | None:
    for line in reversed(text.strip().splitlines()):
        if _JSON_LINE.fullmatch(line.strip()):
            try:
                value = json.loads(line)
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


def codex_argv(binary: str, request: Request) -> list[str]:
    argv = [binary, "exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check", "--ephemeral",
            "-C", request.workspace, "-c", 'approval_policy="never"']
    model = os.environ.get("TRI_AGENT_MODEL")
    return [*argv, *(["-m", model] if model else []), request.charter + VERDICT_INSTRUCTIONS + "\n\n" + request.task]


def codex_events(stdout: str) -> tuple[dict[str, int], str, str | None]:
    """The usage, the last agent message and the failure (None: none) of ``codex exec --json``'s events."""
    usage = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0}
    last_message, failure = "", None
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # progress noise
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "turn.completed":
            u = event.get("usage") or {}
            usage["input_tokens"] += u.get("input_tokens", 0)
            usage["output_tokens"] += u.get("output_tokens", 0)
            usage["cache_read_tokens"] += u.get("cached_input_tokens", 0)
        elif kind == "item.completed" and (event.get("item") or {}).get("type") == "agent_message":
            last_message = str(event["item"].get("text", ""))
        elif kind in ("turn.failed", "error"):
            failure = (event.get("error") or {}).get("message") or event.get("message") or kind
    return usage, last_message, failure


def codex_response(stdout: str) -> dict[str, Any]:
    """The executor response for the JSONL events of ``codex exec --json``."""
    usage, last_message, failure = codex_events(stdout)
    base = {"protocol": PROTOCOL, "model": os.environ.get("TRI_AGENT_MODEL"), "usage": usage, "cost_usd": 0.0}
    if failure:
        return {**base, "status": "error", "reason": f"codex: {failure}"}
    verdict = _last_json(last_message)
    if verdict is None or verdict.get("status") not in ("ok", "blocked"):
        return {**base, "status": "malformed", "reason": "the final message holds no verdict line"}
    return {**base, "status": verdict["status"], "summary": str(verdict.get("summary", "")),
            "reason": verdict.get("reason")}


def codex_config(request: Request) -> str:
    """``config.toml`` for the episode's own ``CODEX_HOME``: no approvals (an MCP call waiting for one would
    be cancelled), and the engine's server with exactly the granted tools enabled."""
    lines = ['approval_policy = "never"', ""]
    if request.mcp is not None:
        lines += [f"[mcp_servers.{request.mcp.server}]", f"command = {json.dumps(request.mcp.command[0])}",
                  f"args = {json.dumps(request.mcp.command[1:])}",
                  f"enabled_tools = {json.dumps(request.mcp.tools)}", ""]
    return "\n".join(lines)


def run_codex(request: Request, binary: str = "codex") -> dict[str, Any]:
    home = _private_dir(".codex-home")
    (home / "config.toml").write_text(codex_config(request), encoding="utf-8")
    return _run_agent(codex_argv(binary, request), {"CODEX_HOME": str(home)}, request, codex_response)


def run_claude(request: Request, binary: str = "claude") -> dict[str, Any]:
    config = _private_dir(".claude-config")
    deny = [p for p in os.environ.get("TRI_AGENT_DENY", "").split(":") if p]
    (config / "settings.json").write_text(json.dumps(claude_settings(deny), indent=1))
    mcp_config = config / "mcp.json"
    if request.mcp is not None:
        mcp_config.write_text(json.dumps(claude_mcp_config(request), indent=1))
    wanted = mcp_tool_names(request) if request.mcp is not None else None
    return _run_agent(claude_argv(binary, request, mcp_config), {"CLAUDE_CONFIG_DIR": str(config)}, request,
                      lambda out: claude_response(out, wanted))


def _private_dir(name: str) -> Path:
    # the agent's own configuration lives in the role's HOME, never in the project or the user's home
    folder = Path(os.environ.get("HOME", ".")) / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _run_agent(argv: list[str], env: dict[str, str], request: Request,
               parse: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, **env}, cwd=request.workspace,
                          check=False)
    response = parse(done.stdout)
    if response["status"] == "malformed" and done.returncode != 0:  # it died before it could answer
        return {**response, "status": "error", "reason": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return response


PROFILES = {"claude": run_claude, "codex": run_codex}


class AgentFailed(RuntimeError):
    """A CLI agent asked a plain question gave no answer (its run failed, timed out, or printed none)."""


def ask_argv(profile: str, binary: str, system: str, model: str | None, folder: Path) -> list[str]:
    """How a CLI agent is asked one plain question, read from stdin: no tools at all (built-in or MCP), no
    project settings, one turn, in an empty folder."""
    if profile == "claude":
        return [binary, "-p", "--output-format", "json", "--tools", "", "--strict-mcp-config", "--setting-sources",
                "user", "--max-turns", "1", "--append-system-prompt", system, *(["--model", model] if model else [])]
    return [binary, "exec", "--json", "--sandbox", "read-only", "--skip-git-repo-check", "--ephemeral", "-C",
            str(folder), "-c", 'approval_policy="never"', "-c", "mcp_servers={}",
            *(["-m", model] if model else []), "-"]


def ask_agent(profile: str, question: str, system: str, *, binary: str | None = None, model: str | None = None,
              timeout: float = 600.0) -> tuple[str, dict[str, int]]:
    """Ask the ``profile`` CLI agent (claude or codex) ``question``; its answer's text and the tokens it reported.
    For codex, ``system`` leads the question (it has no separate system prompt)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tri-ask-") as folder:
        argv = ask_argv(profile, binary or profile, system, model, Path(folder))
        stdin = question if profile == "claude" else f"{system}\n\n{question}"
        try:
            done = subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=folder, timeout=timeout,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise AgentFailed(f"{profile}: {exc}") from None
    text, usage, failure = _claude_answer(done.stdout) if profile == "claude" else _codex_answer(done.stdout)
    if failure or not text:
        tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise AgentFailed(f"{profile}: {failure or 'no answer'} ({tail[:200]})")
    return text, usage


def _claude_answer(stdout: str) -> tuple[str, dict[str, int], str | None]:
    out = _last_json(stdout) or {}
    u = out.get("usage") or {}
    usage = {"input_tokens": u.get("input_tokens", 0), "output_tokens": u.get("output_tokens", 0),
             "cache_read_tokens": u.get("cache_read_input_tokens", 0),
             "cache_write_tokens": u.get("cache_creation_input_tokens", 0)}
    failure = str(out.get("subtype") or "an error") if out.get("is_error") else None
    return str(out.get("result") or ""), usage, failure


def _codex_answer(stdout: str) -> tuple[str, dict[str, int], str | None]:
    usage, text, failure = codex_events(stdout)
    return text, usage, failure


def main(argv: list[str]) -> int:
    profile = PROFILES.get(argv[0]) if argv else None
    if profile is None:
        print(json.dumps({"protocol": PROTOCOL, "status": "error", "reason": f"unknown profile {argv[:1]}"}))
        return 2
    request = Request.model_validate_json(sys.stdin.read())
    print(json.dumps(profile(request, argv[1]) if len(argv) > 1 else profile(request)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
