"""Profiles: adapters that let a CLI agent speak the executor protocol.

Run as ``python -m tri_agent.drivers._profiles claude`` (the command driver's argv); it reads the executor
request on stdin, runs the agent, and prints the executor response. The Claude Code profile:

- runs ``claude -p`` with ``--output-format json``, the charter appended to the system prompt, the
  request's turn limit, and no web tools;
- gives it its own config folder (``CLAUDE_CONFIG_DIR`` in the role's HOME) holding generated user
  settings, and loads no project or local settings (``--setting-sources user``), so nothing in a
  workspace can steer it;
- denies its file tools every absolute path named in ``TRI_AGENT_DENY`` (colon-separated: the project
  and the evidence store), and turns its own sandbox on;
- judges the run by the JSON it prints, not by its exit code: ``is_error`` is a runtime failure, each
  ``permission_denials`` entry is reported as a breach attempt, and the role's verdict is the last JSON
  object of its final message (``{"status": "ok" | "blocked", "summary": ..., "reason": ...}``).

The Codex profile runs ``codex exec --json`` with the workspace-write sandbox, no approvals, no
persisted session, its own ``CODEX_HOME``; it reads the JSONL event stream: usage from every
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


def claude_argv(binary: str, request: Request) -> list[str]:
    argv = [binary, "-p", request.task, "--output-format", "json", "--append-system-prompt",
            request.charter + VERDICT_INSTRUCTIONS, "--max-turns", str(request.limits.get("turns", 40)),
            "--setting-sources", "user", "--disallowedTools", "WebFetch", "WebSearch"]
    model = os.environ.get("TRI_AGENT_MODEL")
    return [*argv, "--model", model] if model else argv


def claude_response(stdout: str) -> dict[str, Any]:
    """The executor response for Claude Code's ``--output-format json`` output."""
    try:
        out = json.loads(stdout)
    except ValueError:
        return {"protocol": PROTOCOL, "status": "malformed", "reason": "claude printed no JSON result"}
    usage = out.get("usage") or {}
    base = {
        "protocol": PROTOCOL, "model": next(iter(out.get("modelUsage") or {}), None),
        "usage": {"input_tokens": usage.get("input_tokens", 0), "output_tokens": usage.get("output_tokens", 0),
                  "cache_read_tokens": usage.get("cache_read_input_tokens", 0),
                  "cache_write_tokens": usage.get("cache_creation_input_tokens", 0)},
        "cost_usd": out.get("total_cost_usd", 0.0),
        "denials": [f"{d.get('tool_name')} {json.dumps(d.get('tool_input'), sort_keys=True)}"
                    for d in out.get("permission_denials") or []],
    }
    if out.get("is_error") or out.get("subtype") != "success":
        return {**base, "status": "error", "reason": f"claude ended with {out.get('subtype')}"}
    verdict = _last_json(str(out.get("result", "")))
    if verdict is None or verdict.get("status") not in ("ok", "blocked"):
        return {**base, "status": "malformed", "reason": "the final message holds no verdict line"}
    return {**base, "status": verdict["status"], "summary": str(verdict.get("summary", "")),
            "reason": verdict.get("reason")}


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


def codex_response(stdout: str) -> dict[str, Any]:
    """The executor response for the JSONL events of ``codex exec --json``."""
    usage = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0}
    last_message, failure = "", None
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # progress noise
        kind = event.get("type")
        if kind == "turn.completed":
            u = event.get("usage") or {}
            usage["input_tokens"] += u.get("input_tokens", 0)
            usage["output_tokens"] += u.get("output_tokens", 0)
            usage["cache_read_tokens"] += u.get("cached_input_tokens", 0)
        elif kind == "item.completed" and (event.get("item") or {}).get("type") == "agent_message":
            last_message = str(event["item"].get("text", ""))
        elif kind in ("turn.failed", "error"):
            failure = (event.get("error") or {}).get("message") or event.get("message") or kind
    base = {"protocol": PROTOCOL, "model": os.environ.get("TRI_AGENT_MODEL"), "usage": usage, "cost_usd": 0.0}
    if failure:
        return {**base, "status": "error", "reason": f"codex: {failure}"}
    verdict = _last_json(last_message)
    if verdict is None or verdict.get("status") not in ("ok", "blocked"):
        return {**base, "status": "malformed", "reason": "the final message holds no verdict line"}
    return {**base, "status": verdict["status"], "summary": str(verdict.get("summary", "")),
            "reason": verdict.get("reason")}


def run_codex(request: Request, binary: str = "codex") -> dict[str, Any]:
    home = _private_dir(".codex-home")
    return _run_agent(codex_argv(binary, request), {"CODEX_HOME": str(home)}, request, codex_response)


def run_claude(request: Request, binary: str = "claude") -> dict[str, Any]:
    config = _private_dir(".claude-config")
    deny = [p for p in os.environ.get("TRI_AGENT_DENY", "").split(":") if p]
    (config / "settings.json").write_text(json.dumps(claude_settings(deny), indent=1))
    return _run_agent(claude_argv(binary, request), {"CLAUDE_CONFIG_DIR": str(config)}, request, claude_response)


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
