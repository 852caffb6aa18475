"""The Claude Code profile, against a fake ``claude`` that checks how it was started and answers in
Claude Code's ``--output-format json`` shape (the real CLI is not installed here)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tri_agent.drivers._command import CommandDriver
from tri_agent.drivers._episode import Episode, Limits
from tri_agent.drivers._profiles import claude_response, claude_settings
from tri_agent.isolation._contract import load_charter
from tri_agent.isolation._tools import ToolBox

MCP_CLIENT = r'''
import asyncio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def use_tools(command, calls):
    """An MCP client, as a CLI agent is: start the configured server command, list, then call."""
    async def session():
        server = StdioServerParameters(command=command[0], args=command[1:])
        async with stdio_client(server) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            names = [t.name for t in (await s.list_tools()).tools]
            results = []
            for tool, args in calls:
                res = await s.call_tool(tool, args)
                results.append((res.is_error, res.content[0].text))
            return names, results
    return asyncio.run(session())
'''

FAKE_CLAUDE = MCP_CLIENT + r'''
import json, os, sys
args = sys.argv[1:]
assert args[0] == "-p" and args[args.index("--output-format") + 1] == "stream-json" and "--verbose" in args
assert args[args.index("--setting-sources") + 1] == "user", "project settings must not load"
assert "WebFetch" in args[args.index("--disallowedTools") + 1:]
assert "--strict-mcp-config" in args, "only the episode's own MCP server"
settings = json.load(open(os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "settings.json")))
assert "Read(//secret/project/**)" in settings["permissions"]["deny"] and settings["sandbox"]["enabled"]
allowed = [a for a in args[args.index("--allowedTools") + 1:] if a.startswith("mcp__")]
server = json.load(open(args[args.index("--mcp-config") + 1]))["mcpServers"]["tri"]
mode = args[1]
names, results = use_tools([server["command"], *server["args"]], [("write", {"path": "target/app.py", "content": "x"})])
assert sorted(f"mcp__tri__{n}" for n in names) == sorted(allowed)
tools = ["Bash", "Read", "Edit", *(f"mcp__tri__{n}" for n in names)]
if mode == "miswired":
    tools.append("mcp__other__exfiltrate")
open("exam/judge/notes.md", "w").write("ran\n")
print(json.dumps({"type": "system", "subtype": "init", "tools": tools,
                  "mcp_servers": [{"name": "tri", "status": "connected"}]}))
result = {"ok": 'All cases ran.\n{"status": "ok", "summary": "ran 3 cases"}',
          "blocked": '{"status": "blocked", "summary": "", "reason": "no cases.jsonl"}',
          "miswired": '{"status": "ok", "summary": "ran 3 cases"}',
          "chatty": "I did my best."}.get(mode, "")
print(json.dumps({"type": "result", "subtype": "error_max_turns" if mode == "turns" else "success",
                  "is_error": mode == "turns", "result": result, "total_cost_usd": 0.0123, "num_turns": 4,
                  "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 2,
                            "cache_creation_input_tokens": 1},
                  "modelUsage": {"claude-test-1": {}},
                  "permission_denials": [{"tool_name": "Read", "tool_use_id": "t1",
                                          "tool_input": {"file_path": "/secret/project/target/app.py"}}]}))
'''


@pytest.mark.parametrize("mode,status", [("ok", "ok"), ("blocked", "blocked"), ("chatty", "malformed_output"),
                                         ("turns", "runtime_failure"), ("miswired", "runtime_failure")])
def test_claude_profile(tmp_path: Path, mode: str, status: str) -> None:
    (tmp_path / "claude").write_text(FAKE_CLAUDE)
    charter = load_charter("tester")
    ws = tmp_path / "ws"
    (ws / "exam" / "judge").mkdir(parents=True)
    episode = Episode(charter, mode, ToolBox(charter.contract, ws), Limits(seconds=60))
    launcher = tmp_path / "claude-bin"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'claude'} \"$@\"\n")
    launcher.chmod(0o755)
    driver = CommandDriver([sys.executable, "-m", "tri_agent.drivers._profiles", "claude", str(launcher)],
                           credentials={"TRI_AGENT_DENY": "/secret/project:/secret/evidence"}, sandbox=False)
    result = driver.run(episode)
    assert result.status == status, result.reason
    assert result.breach_attempts[0] == 'Read {"file_path": "/secret/project/target/app.py"}'
    if mode == "miswired":  # a tool the contract does not grant reached the agent: fail closed
        assert "MCP wiring" in (result.reason or "") and "mcp__other__exfiltrate" in (result.reason or "")
    if status == "ok":
        assert result.summary == "ran 3 cases" and result.attempts[0].model == "claude-test-1"
        assert result.attempts[0].usage.cache_write_tokens == 1 and result.attempts[0].cost_usd == 0.0123
        assert (ws / "exam" / "judge" / "notes.md").read_text() == "ran\n"


def test_settings_deny_absolute_paths_and_turn_the_sandbox_on() -> None:
    s = claude_settings(["/p", "/e/"])
    assert s["permissions"]["deny"][:4] == ["Read(//p/**)", "Edit(//p/**)", "Read(//e/**)", "Edit(//e/**)"]
    assert s["sandbox"]["enabled"] is True


def test_unreadable_output_is_malformed() -> None:
    assert claude_response("not json")["status"] == "malformed"
    assert json.loads(json.dumps(claude_response('{"type": "result"}')))["status"] == "error"
    no_init = claude_response('{"type": "result", "subtype": "success", "result": "{}"}', ["mcp__tri__run_case"])
    assert no_init["status"] == "error" and "no init message" in no_init["reason"]


FAKE_CODEX = MCP_CLIENT + r'''
import json, os, sys, tomllib
args = sys.argv[1:]
assert args[:2] == ["exec", "--json"] and args[args.index("--sandbox") + 1] == "workspace-write"
assert "--ephemeral" in args and os.environ["CODEX_HOME"].endswith(".codex-home")
config = tomllib.load(open(os.path.join(os.environ["CODEX_HOME"], "config.toml"), "rb"))
assert config["approval_policy"] == "never", "an MCP call waiting for an approval would be cancelled"
server = config["mcp_servers"]["tri"]
mode = args[-1].rsplit("\n", 1)[-1]
names, results = use_tools([server["command"], *server["args"]], [("run_case", {"case": "c-1"})])
assert names == server["enabled_tools"]
events = [{"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"}]
if mode == "fail":
    events.append({"type": "turn.failed", "error": {"message": "usage limit"}})
else:
    refused = "refused" if results[0][0] else "ran"
    text = f'Done.\n{{"status": "ok", "summary": "run_case {refused}"}}' if mode == "ok" else "Done."
    events += [{"type": "item.completed", "item": {"type": "agent_message", "text": text}},
               {"type": "turn.completed", "usage": {"input_tokens": 9, "cached_input_tokens": 4, "output_tokens": 2}}]
print("\n".join(json.dumps(e) for e in events))
'''


@pytest.mark.parametrize("mode,status", [("ok", "ok"), ("fail", "runtime_failure"), ("quiet", "malformed_output")])
def test_codex_profile(tmp_path: Path, mode: str, status: str) -> None:
    (tmp_path / "codex.py").write_text(FAKE_CODEX)
    launcher = tmp_path / "codex-bin"
    launcher.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'codex.py'} \"$@\"\n")
    launcher.chmod(0o755)
    charter = load_charter("builder")
    ws = tmp_path / "ws"
    ws.mkdir()
    episode = Episode(charter, mode, ToolBox(charter.contract, ws), Limits(seconds=60))
    driver = CommandDriver([sys.executable, "-m", "tri_agent.drivers._profiles", "codex", str(launcher)], sandbox=False)
    result = driver.run(episode)
    assert result.status == status, result.reason
    if status == "ok":  # the builder asked for run_case over MCP: not in its contract, so not even listed
        assert result.summary == "run_case refused" and result.attempts[0].usage.cache_read_tokens == 4
        assert any("run_case" in a for a in result.breach_attempts) or result.tool_calls == 1
