"""LLM rulings: only flags, K samples with an agreement floor, fail closed, citations must resolve."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tri_agent.drivers._rulings import Ruling, rule

CATEGORIES = {"weakened-assertion", "skipped-test"}


def _replies(*replies: object) -> Callable[[str], str]:
    it = iter(replies)
    return lambda _q: r if isinstance(r := next(it), str) else json.dumps(r)


@pytest.fixture
def evidence(tmp_path: Path) -> Path:
    (tmp_path / "test_x.py").write_text("def test_a():\n    assert True\n")
    return tmp_path


def flag(location: str = "test_x.py:2", category: str = "weakened-assertion") -> dict[str, object]:
    return {"flags": [{"category": category, "location": location, "reason": "asserts nothing"}]}


def test_agreeing_samples_raise_a_flag(evidence: Path) -> None:
    r = rule(_replies(flag(), flag(), {"flags": []}), "weakened?", categories=CATEGORIES, evidence=evidence)
    assert r.verdict == "flagged" and [c.location for c in r.flags] == ["test_x.py:2"]


def test_a_minority_flag_is_not_reported(evidence: Path) -> None:
    r = rule(_replies(flag(), {"flags": []}, {"flags": []}), "weakened?", categories=CATEGORIES, evidence=evidence)
    assert r.verdict == "nothing_flagged" and r.flags == []


@pytest.mark.parametrize("replies", [
    ("", "", ""),
    ("sure, looks fine", "{}", '{"flags": [], "clean": true}'),
    (json.dumps(flag()), "not json", ""),
])
def test_unreadable_samples_fail_closed(evidence: Path, replies: tuple[str, ...]) -> None:
    r = rule(_replies(*replies), "weakened?", categories=CATEGORIES, evidence=evidence)
    assert r.verdict == "inconclusive" and r.dropped


@pytest.mark.parametrize("bad", [flag("test_x.py:99"), flag("nope.py:1"), flag("../x.py:1"),
                                 flag(category="vibes")])
def test_claims_must_cite_real_evidence(evidence: Path, bad: dict[str, object]) -> None:
    r = rule(_replies(bad, bad, bad), "weakened?", categories=CATEGORIES, evidence=evidence)
    assert r.flags == [] and len(r.dropped) == 3 and r.verdict == "inconclusive"


def test_the_schema_cannot_certify() -> None:
    assert "clean" not in Ruling.model_fields and "certified" not in str(Ruling.model_json_schema())


def test_a_reply_in_a_code_fence_is_the_same_reply(evidence: Path) -> None:
    fenced = "```json\n" + json.dumps(flag()) + "\n```"
    r = rule(_replies(fenced, fenced, fenced), "weakened?", categories=CATEGORIES, evidence=evidence)
    assert r.verdict == "flagged" and r.readable_samples == 3
