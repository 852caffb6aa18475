"""The weakened signal: K samples, a floor, citations that must resolve, retries, masking, and no pass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from signals_repo import Repo, repo  # noqa: F401  (repo: the fixture)

from tri_agent.testsignals import evidence, junit, lines
from tri_agent.testsignals._weakened import Judge, Weakened, judged, masked

BEFORE = "def test_total():\n    assert total([1, 2]) == 3\n"
AFTER = "def test_total():\n    assert True\n"
FLAG = json.dumps({"flags": [{"category": "weakened", "location": "after/tests/test_t.py:2",
                              "reason": "assert True cannot fail"}]})
SILENT = json.dumps({"flags": []})


def replies(*texts: str) -> Callable[[str], str]:
    it: Iterator[str] = iter(texts)
    return lambda question: next(it)


def ruled(*texts: str, **kw: object) -> Weakened:
    return judged(Judge("recorded", replies(*texts)), [("tests/test_t.py", BEFORE, AFTER)], **kw)  # type: ignore[arg-type]


def test_four_of_five_agreeing_flag_and_three_do_not() -> None:
    flagged = ruled(FLAG, FLAG, FLAG, FLAG, SILENT)
    assert flagged.state == "flagged" and flagged.flags[0].location == "after/tests/test_t.py:2"
    assert flagged.samples == 5 and flagged.k == 5
    assert ruled(FLAG, FLAG, FLAG, SILENT, SILENT).state == "silent"
    assert ruled(FLAG, FLAG, FLAG, SILENT, SILENT, k=5, floor=0.6).state == "flagged"  # the floor is a setting


def test_a_citation_that_does_not_resolve_drops_its_sample() -> None:
    nowhere = FLAG.replace("test_t.py:2", "test_t.py:99")
    found = ruled(nowhere, nowhere, FLAG, FLAG, FLAG)
    assert found.state == "inconclusive" and found.samples == 3  # 3 of 5 readable: below the floor
    assert any("past the end" in d for d in found.dropped)


def test_a_failing_transport_is_asked_again() -> None:
    calls = []

    def flaky(question: str) -> str:
        calls.append(question)
        if len(calls) % 2:
            raise ConnectionError("reset")
        return FLAG
    assert judged(Judge("flaky", flaky), [("tests/test_t.py", BEFORE, AFTER)]).state == "flagged"
    assert len(calls) == 10


def test_no_field_of_the_reply_can_say_pass() -> None:
    passed = json.dumps({"flags": [], "verdict": "pass", "ok": True})
    found = ruled(*[passed] * 5)
    assert found.state == "inconclusive" and found.samples == 0  # an unknown field makes the reply unreadable


def test_secrets_are_masked_before_anything_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAYMENTS_API_KEY", "s3cr3t-value-123")
    asked: list[str] = []
    text = f"KEY = 's3cr3t-value-123'\ntoken = 'ghp_{'a' * 30}'\n"
    judged(Judge("j", lambda q: asked.append(q) or SILENT), [("tests/test_t.py", text, text)], k=1, floor=1.0)
    assert "s3cr3t-value-123" not in asked[0] and "ghp_" not in asked[0]
    assert "[masked:PAYMENTS_API_KEY]" in masked("x s3cr3t-value-123 y")


def test_silence_is_never_shown_as_a_pass(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert True\n\n\n"
                                     "def test_zero():\n    assert add(0, 0) == 0\n")
    repo.pytest()
    report = evidence(repo.path, base, judge=Judge("recorded", replies(*[SILENT] * 5)))
    assert report.weakened.state == "silent" and report.exit_code == 0
    assert "✓" not in lines(report)[2] and "<skipped" in junit(report).split('name="weakened"')[1]
    flag = FLAG.replace("tests/test_t.py:2", "tests/test_calc.py:5")
    report = evidence(repo.path, base, judge=Judge("recorded", replies(*[flag] * 5)))
    assert (report.weakened.state, report.exit_code) == ("flagged", 18)
    assert "<failure" in junit(report).split('name="weakened"')[1]


@pytest.mark.parametrize("after", [
    "def test_add():\n    pass\n",  # body emptied
    "def test_add():\n    return\n    assert add(1, 2) == 3\n",  # early return
    "def test_add():\n    add(1, 2)\n",  # assertion deleted
])
def test_a_weakened_test_reaches_the_judge_with_its_before_and_after(repo: Repo, after: str) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write("tests/test_calc.py", "from calc import add\n\n\n" + after)
    asked: list[str] = []
    evidence(repo.path, base, judge=Judge("j", lambda q: asked.append(q) or SILENT), k=1, floor=1.0)
    assert "=== before/tests/test_calc.py ===" in asked[0] and "=== after/tests/test_calc.py ===" in asked[0]
    assert after.splitlines()[1].strip() in asked[0]


def test_the_cli_reports_not_judged_with_null_samples(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write("tests/test_calc.py", "def test_add():\n    assert True\n")
    repo.pytest()
    done = subprocess.run([sys.executable, "-m", "tri_agent", "evidence", base, "--repo", str(repo.path)],
                          capture_output=True, text=True)
    assert "weakened  - not judged" in done.stdout and "✓" not in done.stdout.splitlines()[2]


@pytest.mark.parametrize("provider,api", [("anthropic", None), ("openai", "chat")])
def test_a_model_judges_through_the_real_sdk_and_its_usage_is_recorded(provider: str, api: str | None, repo: Repo,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from tri_agent.drivers._fakes import FakeModelServer, Move
    from tri_agent.testsignals import api_judge

    base = repo.git("rev-parse", "HEAD")
    repo.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert True\n\n\n"
                                     "def test_zero():\n    assert add(0, 0) == 0\n")
    flag = FLAG.replace("tests/test_t.py:2", "tests/test_calc.py:5")
    monkeypatch.setenv("JUDGE_KEY", "sk-fake-judge-0123456789")
    with FakeModelServer(lambda _results: Move(text=flag)) as server:
        url = server.base_url if provider == "anthropic" else server.base_url + "/v1"
        judge = api_judge(provider, "fake-model-1", base_url=url, key_env="JUDGE_KEY")
        report = evidence(repo.path, base, judge=judge)
        sent = json.dumps(server.requests[-1]["body"])
    assert (report.weakened.state, report.weakened.samples, report.exit_code) == ("flagged", 5, 18)
    assert report.weakened.judge == f"{provider}:fake-model-1" and report.weakened.usage is not None
    assert report.weakened.usage.input_tokens > 0 and "sk-fake-judge-0123456789" not in sent


def test_a_judge_without_its_key_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from tri_agent._errors import UsageError
    from tri_agent.testsignals import api_judge

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UsageError, match="needs ANTHROPIC_API_KEY"):
        api_judge("anthropic", "m")
    with pytest.raises(UsageError, match="not a judge"):
        api_judge("gemini", "m")


def test_the_cli_judges_with_a_model_and_its_settings(repo: Repo) -> None:
    from tri_agent.drivers._fakes import FakeModelServer, Move

    base = repo.git("rev-parse", "HEAD")
    repo.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert True\n\n\n"
                                     "def test_zero():\n    assert add(0, 0) == 0\n")
    repo.pytest()
    flag = FLAG.replace("tests/test_t.py:2", "tests/test_calc.py:5")
    with FakeModelServer(lambda _results: Move(text=flag)) as server:
        done = subprocess.run([sys.executable, "-m", "tri_agent", "evidence", base, "--repo", str(repo.path),
                               "--judge", "openai", "--model", "fake-model-1", "--base-url", server.base_url + "/v1",
                               "--key-env", "JUDGE_KEY", "--samples", "3", "--floor", "1", "--json", "-"],
                              capture_output=True, text=True, env={**__import__("os").environ, "JUDGE_KEY": "sk-x"})
        asked = len(server.requests)
    report = json.loads(done.stdout)
    assert done.returncode == 18 and report["weakened"]["k"] == 3 and report["weakened"]["samples"] == 3
    assert asked == 3 and "flagged" in done.stderr


# A CLI agent asked one plain question: it refuses to answer unless started with no tools, no MCP server and no
# project settings, reads the question on stdin, and answers in its own output format (FLAG_FILE: the reply).
FAKE_AGENT = r'''
import json, os, sys
args, question = sys.argv[1:], sys.stdin.read()
assert "=== after/tests/test_calc.py ===" in question and os.listdir(".") == [], "the question, in an empty folder"
reply = open(os.environ["FLAG_FILE"]).read()
if args[0] == "-p":
    assert args[args.index("--tools") + 1] == "" and "--strict-mcp-config" in args, "no tools at all"
    assert args[args.index("--setting-sources") + 1] == "user" and args[args.index("--max-turns") + 1] == "1"
    assert "never certify" in args[args.index("--append-system-prompt") + 1]
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": reply,
                      "usage": {"input_tokens": 40, "output_tokens": 7, "cache_read_input_tokens": 3}}))
else:
    assert args[:2] == ["exec", "--json"] and args[args.index("--sandbox") + 1] == "read-only" and args[-1] == "-"
    assert "mcp_servers={}" in args and "never certify" in question
    events = [{"type": "item.completed", "item": {"type": "agent_message", "text": reply}},
              {"type": "turn.completed", "usage": {"input_tokens": 30, "cached_input_tokens": 2, "output_tokens": 5}}]
    print("\n".join(json.dumps(e) for e in events))
'''


@pytest.mark.parametrize("profile", ["claude", "codex"])
def test_a_cli_agent_judges_through_its_profile(profile: str, repo: Repo, tmp_path: Path) -> None:
    base = repo.git("rev-parse", "HEAD")
    repo.write("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert True\n\n\n"
                                     "def test_zero():\n    assert add(0, 0) == 0\n")
    (tmp_path / "agent.py").write_text(FAKE_AGENT)
    (tmp_path / "flag.json").write_text(FLAG.replace("tests/test_t.py:2", "tests/test_calc.py:5"))
    agent = tmp_path / profile
    agent.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'agent.py'} \"$@\"\n")
    agent.chmod(0o755)
    repo.pytest()
    out = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "tri_agent", "evidence", base, "--repo", str(repo.path), "--judge",
                           profile, "--agent-bin", str(agent), "--json", str(out)], capture_output=True, text=True,
                          env={**os.environ, "FLAG_FILE": str(tmp_path / "flag.json")})
    report = json.loads(out.read_text())
    assert done.returncode == 18, done.stderr
    weak = report["weakened"]
    assert (weak["state"], weak["samples"], weak["judge"]) == ("flagged", 5, f"{profile}-cli:default")
    assert weak["usage"]["input_tokens"] == 5 * (40 if profile == "claude" else 30)


def test_a_cli_agent_that_answers_nothing_is_an_unreadable_sample(repo: Repo, tmp_path: Path) -> None:
    from tri_agent.testsignals import agent_judge

    base = repo.git("rev-parse", "HEAD")
    repo.write("tests/test_calc.py", "def test_add():\n    assert True\n")
    agent = tmp_path / "claude"
    agent.write_text("#!/bin/sh\necho 'not logged in' >&2\nexit 1\n")
    agent.chmod(0o755)
    report = evidence(repo.path, base, judge=agent_judge("claude", binary=str(agent)))
    assert report.weakened.state == "inconclusive" and report.weakened.samples == 0
    assert all("AgentFailed" in d for d in report.weakened.dropped)
