"""The API drivers through the real SDKs, against loopback servers speaking each wire format."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tri_agent.drivers._episode import Episode, Limits
from tri_agent.drivers._fakes import FakeModelServer, Move, play_script
from tri_agent.drivers._llm import LLMDriver, anthropic_driver, openai_driver
from tri_agent.isolation._contract import load_charter
from tri_agent.isolation._tools import ToolBox

KEY = "sk-test-key-0123456789abcdef"
TESTER_MOVES = [
    Move(calls=[("list", {})]),
    Move(calls=[("read", {"path": "../outside.txt"}), ("write", {"path": "exam/judge/notes.md", "content": "ok\n"})]),
    Move(calls=[("submit", {"summary": f"done; my key is {KEY}"})]),
]
Make = Callable[[str], LLMDriver]
DRIVERS: dict[str, Make] = {
    "anthropic": lambda url: anthropic_driver("fake-model-1", api_key=KEY, base_url=url,
                                              prices={"fake-model": (3.0, 15.0, 0.3, 3.75)}),
    "openai-responses": lambda url: openai_driver("fake-model-1", api_key=KEY, base_url=url + "/v1"),
    "openai-chat": lambda url: openai_driver("fake-model-1", api_key=KEY, base_url=url + "/v1", api="chat"),
}


def test_transcripts_are_kept_with_secrets_masked(tmp_path: Path) -> None:
    with FakeModelServer(play_script(TESTER_MOVES)) as server:
        driver = anthropic_driver("fake-model-1", api_key=KEY, base_url=server.base_url,
                                  transcripts=tmp_path / "transcripts")
        driver.run(_episode(tmp_path))
    text = (tmp_path / "transcripts" / "tester-001.jsonl").read_text()
    assert "Run every case." in text and "leaves your workspace" in text
    assert KEY not in text and "[masked:ANTHROPIC_API_KEY]" in text
PATHS = {"anthropic": "/v1/messages", "openai-responses": "/v1/responses", "openai-chat": "/v1/chat/completions"}


def _episode(tmp: Path, turns: int = 10) -> Episode:
    charter = load_charter("tester")
    ws = tmp / "ws"
    (ws / "builds" / "r1" / "visible").mkdir(parents=True)
    (ws / "builds" / "r1" / "visible" / "cases.jsonl").write_text('{"case": "c-00000001"}\n')
    (tmp / "outside.txt").write_text("not yours\n")
    return Episode(charter, "Run every case.", ToolBox(charter.contract, ws), Limits(turns=turns))


@pytest.mark.parametrize("kind", list(DRIVERS))
def test_tool_loop_through_the_real_sdk(tmp_path: Path, kind: str) -> None:
    with FakeModelServer(play_script(TESTER_MOVES)) as server:
        result = DRIVERS[kind](server.base_url).run(_episode(tmp_path))
    assert result.status == "ok", result.reason
    assert result.summary == "done; my key is [masked:" + ("ANTHROPIC" if kind == "anthropic" else "OPENAI") + \
        "_API_KEY]"
    assert (tmp_path / "ws" / "exam" / "judge" / "notes.md").read_text() == "ok\n"
    assert result.breach_attempts == ["path '../outside.txt' leaves your workspace"]
    attempt = result.attempts[0]
    assert attempt.model == "fake-model-1"
    assert attempt.usage.input_tokens == 300 and attempt.usage.cache_read_tokens == 150
    assert {r["path"] for r in server.requests} == {PATHS[kind]} and len(server.requests) == 3
    # the refused read went back to the model as an error, and the charter is the system prompt
    last = str(server.requests[-1]["body"])
    assert "leaves your workspace" in last and "fresh eyes" in str(server.requests[0]["body"])
    if kind == "anthropic":
        assert attempt.cost_usd == pytest.approx((300 * 3.0 + 60 * 15.0 + 150 * 0.3) / 1e6)
    else:
        assert attempt.cost_usd == 0 and attempt.cost_basis.startswith("none: no price known")


@pytest.mark.parametrize("kind", list(DRIVERS))
def test_failures_map_to_the_taxonomy(tmp_path: Path, kind: str) -> None:
    with FakeModelServer(play_script([Move(text="I am done.")])) as server:
        assert DRIVERS[kind](server.base_url).run(_episode(tmp_path / "a")).status == "malformed_output"
    with FakeModelServer(play_script([Move(calls=[("list", {})])])) as server:
        result = DRIVERS[kind](server.base_url).run(_episode(tmp_path / "b", turns=3))
        assert result.status == "timeout" and len(server.requests) == 3
    with FakeModelServer(play_script([Move(calls=[("list", {})])]), status=500) as server:
        failed = DRIVERS[kind](server.base_url).run(_episode(tmp_path / "c"))
        assert failed.status == "runtime_failure" and KEY not in (failed.reason or "")
    blocked = [Move(calls=[("submit", {"summary": "no", "blocked": True, "reason": "the spec is contradictory"})])]
    with FakeModelServer(play_script(blocked)) as server:
        result = DRIVERS[kind](server.base_url).run(_episode(tmp_path / "d"))
        assert result.status == "blocked" and result.reason == "the spec is contradictory"


def test_budget_cap_stops_an_episode(tmp_path: Path) -> None:
    with FakeModelServer(play_script([Move(calls=[("list", {})])])) as server:
        driver = anthropic_driver("fake-model-1", api_key=KEY, base_url=server.base_url,
                                  prices={"fake-model": (1e6, 0, 0, 0)})
        episode = _episode(tmp_path)
        episode = Episode(episode.charter, episode.task, episode.tools, Limits(budget_usd=150.0))
        result = driver.run(episode)
    assert result.status == "runtime_failure" and "budget" in (result.reason or "") and len(server.requests) == 2
