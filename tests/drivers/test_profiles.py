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

FAKE_CLAUDE = r'''
import json, os, sys
args = sys.argv[1:]
assert args[0] == "-p" and "--output-format" in args and args[args.index("--output-format") + 1] == "json"
assert args[args.index("--setting-sources") + 1] == "user", "project settings must not load"
assert "WebFetch" in args[args.index("--disallowedTools") + 1:]
settings = json.load(open(os.path.join(os.environ["CLAUDE_CONFIG_DIR"], "settings.json")))
assert "Read(//secret/project/**)" in settings["permissions"]["deny"] and settings["sandbox"]["enabled"]
mode = args[1]
open("exam/judge/notes.md", "w").write("ran\n")
result = {"ok": 'All cases ran.\n{"status": "ok", "summary": "ran 3 cases"}',
          "blocked": '{"status": "blocked", "summary": "", "reason": "no cases.jsonl"}',
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
                                         ("turns", "runtime_failure")])
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
    assert result.breach_attempts == ['Read {"file_path": "/secret/project/target/app.py"}']
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
    assert json.loads(json.dumps(claude_response("{}")))["status"] == "error"


FAKE_CODEX = r'''
import json, os, sys
args = sys.argv[1:]
assert args[:2] == ["exec", "--json"] and args[args.index("--sandbox") + 1] == "workspace-write"
assert "--ephemeral" in args and os.environ["CODEX_HOME"].endswith(".codex-home")
mode = args[-1].rsplit("\n", 1)[-1]
events = [{"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"}]
if mode == "fail":
    events.append({"type": "turn.failed", "error": {"message": "usage limit"}})
else:
    text = 'Done.\n{"status": "ok", "summary": "ran the cases"}' if mode == "ok" else "Done."
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
    if status == "ok":
        assert result.summary == "ran the cases" and result.attempts[0].usage.cache_read_tokens == 4
