"""The judge's weakened-test ruling: asked only when the builder touched tests, K samples, flag-only,
fail closed; and the one-shot ask of every API driver, through the real SDKs against the loopback fake."""

from __future__ import annotations

import json

import pytest

from tri_agent.acceptance._judging import weakened_ruling, weakened_tickets
from tri_agent.acceptance._smells import Change

OLD = "def test_total():\n    assert total([1, 2]) == 3\n    assert total([]) == 0\n"
NEW = "def test_total():\n    assert total([1, 2]) >= 0\n    assert total([]) == 0\n"
LOOSENED = Change(path="target/tests/test_total.py", old=OLD, new=NEW)


def _flag(location: str = "after/target/tests/test_total.py:2") -> str:
    return json.dumps({"flags": [{"category": "weakened", "location": location,
                                  "reason": "the equality became a bound that always holds"}]})


def test_no_test_file_changed_means_no_question() -> None:
    asked: list[str] = []
    source = Change(path="target/grades.py", old="x = 1\n", new="x = 2\n")
    assert weakened_ruling(lambda q: asked.append(q) or _flag(), [source]) is None and asked == []


def test_agreeing_samples_flag_and_the_builder_gets_a_blocker_ticket() -> None:
    questions: list[str] = []
    ruling = weakened_ruling(lambda q: questions.append(q) or _flag(), [LOOSENED])
    assert ruling is not None and ruling.verdict == "flagged" and ruling.samples == 3
    assert "   2  |     assert total([1, 2]) >= 0" in questions[0]
    assert "before/target/tests/test_total.py" in questions[0]
    [ticket] = weakened_tickets(ruling)
    assert ticket.route == "builder" and ticket.signature == "builder:smell:weakened"
    assert "after/target/tests/test_total.py:2" in ticket.body


def test_nothing_flagged_files_no_ticket() -> None:
    ruling = weakened_ruling(lambda q: '{"flags": []}', [LOOSENED])
    assert ruling is not None and ruling.verdict == "nothing_flagged" and weakened_tickets(ruling) == []


@pytest.mark.parametrize("reply", ["not json", _flag("after/target/tests/test_total.py:99"), _flag("../etc/passwd:1")])
def test_unreadable_or_uncited_rulings_fail_closed(reply: str) -> None:
    ruling = weakened_ruling(lambda q: reply, [LOOSENED])
    assert ruling is not None and ruling.verdict == "inconclusive"
    [ticket] = weakened_tickets(ruling)
    assert "inconclusive" in ticket.title


@pytest.mark.parametrize("provider,api", [("anthropic", None), ("openai", "responses"), ("openai", "chat")])
def test_one_shot_ask_through_the_real_sdks(provider: str, api: str | None) -> None:
    from tri_agent.drivers._fakes import FakeModelServer, Move
    from tri_agent.drivers._llm import anthropic_driver, openai_driver

    with FakeModelServer(lambda _results: Move(text='{"flags": []}')) as server:
        if provider == "anthropic":
            driver = anthropic_driver("fake-model-1", api_key="sk-ant-fake-0123456789", base_url=server.base_url)
        else:
            driver = openai_driver("fake-model-1", api_key="sk-oai-fake-0123456789", base_url=server.base_url + "/v1",
                                   api=str(api))
        assert driver.ask_text("rule on tests", "is this weakened?") == '{"flags": []}'
        body = server.requests[-1]["body"]
        assert "tools" not in body or not body["tools"]
        assert "is this weakened?" in json.dumps(body) and driver.spent.input_tokens > 0


def test_a_judge_without_temperature_sends_none() -> None:
    from tri_agent.drivers._fakes import FakeModelServer, Move
    from tri_agent.drivers._llm import openai_driver

    with FakeModelServer(lambda _results: Move(text='{"flags": []}')) as server:
        for api in ("responses", "chat"):
            driver = openai_driver("o-reasoning", api_key="sk-oai-fake-0123456789", base_url=server.base_url + "/v1",
                                   api=api, temperature=None)
            driver.ask_text("rule", "weakened?")
            assert "temperature" not in server.requests[-1]["body"]
        pinned = openai_driver("m", api_key="sk-oai-fake-0123456789", base_url=server.base_url + "/v1", api="chat")
        pinned.ask_text("rule", "weakened?")
        assert server.requests[-1]["body"]["temperature"] == 0.0
