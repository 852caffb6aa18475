"""Recorded runs through each real SDK (Anthropic Messages, OpenAI Responses and Chat Completions) against the
loopback fake: the fake model lists and reads its workspace like a reviewer would, and its replies between them
reach every grade of the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.roleeval.corpus_files import write_corpus
from tri_agent.drivers._fakes import FakeModelServer, Move
from tri_agent.drivers._llm import anthropic_driver, openai_driver
from tri_agent.roleeval._corpus import load_corpus
from tri_agent.roleeval._grading import GRADES
from tri_agent.roleeval._run import driver_executor, evaluate

T = "after/tests/test_total.py"
FIRST = [  # the first attempt at the planted case: one finding of each kind but paraphrase
    {"location": f"{T}:2", "text": "the assertion removed here leaves the sum unchecked"},      # match
    {"location": f"{T}:1", "text": "it no longer checks what total returns"},                   # duplicate
    {"location": T, "text": "an assertion removed somewhere in this file"},                     # partial
    {"location": f"{T}:2", "text": "this line looks suspicious to me"},                         # ambiguous
    {"location": f"{T}:1", "text": "the test name is vague"},                                   # accepted
    {"location": "src/total.py:3", "text": "the loop is slow"},                                 # unexpected
]
SECOND = [{"location": f"{T}:2", "text": "removes the assertions on the result"}]               # paraphrase


def _player() -> object:
    planted = [0]

    def player(results: list[str]) -> Move:
        turn = results.count("\x00turn")
        said = [r for r in results if r != "\x00turn"]
        if turn == 0:
            return Move(calls=[("list", {})])
        if "test_grades.py" in said[0]:
            return Move(calls=[("submit", {"summary": "", "blocked": True, "reason": "the test file is cut off"})])
        if turn == 1:
            return Move(calls=[("read", {"path": T})])
        if "assert" in said[-1]:
            return Move(calls=[("submit", {"summary": json.dumps({"findings": []})})])
        findings = FIRST if planted[0] == 0 else SECOND
        planted[0] += 1
        return Move(calls=[("submit", {"summary": json.dumps({"findings": findings})})])

    return player


@pytest.mark.parametrize("sdk", ["anthropic", "openai-responses", "openai-chat"])
def test_a_recorded_run_through_each_sdk_reaches_every_grade(tmp_path: Path, sdk: str) -> None:
    corpus = load_corpus(write_corpus(tmp_path / "c"))
    with FakeModelServer(_player()) as server:  # type: ignore[arg-type]
        driver = anthropic_driver("fake-model-1", api_key="k", base_url=server.base_url) if sdk == "anthropic" else \
            openai_driver("fake-model-1", api_key="k", base_url=server.base_url + "/v1",
                          api="chat" if sdk == "openai-chat" else "responses")
        report = evaluate(corpus, driver_executor(driver, "judge"), attempts=2, driver=sdk, simulated=False,
                          out=tmp_path / "out")
    records = [json.loads(line) for line in (tmp_path / "out" / "attempts.jsonl").read_text().splitlines()]
    assert {f["grade"] for r in records for f in r["findings"]} == set(GRADES)
    assert report.models == ["fake-model-1"] and report.usage.input_tokens > 0
    assert [c.attempts for c in report.cases] == [["wrong", "right"], ["right", "right"], ["right", "right"]]
    assert [p.text for p in report.pending] == ["this line looks suspicious to me"]
    assert (report.metrics["false_positive"].k, report.metrics["false_positive"].n) == (1, 7)
