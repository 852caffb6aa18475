"""No input crashes the scorer: every outcome is a report or one of our errors."""

from __future__ import annotations

import pytest
from conftest import CALIBER
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tri_agent import ScoreInputs, TriAgentError, score

_cell = st.one_of(st.text(max_size=8), st.sampled_from(["1.5", "-0", "1e3", "", " ", "[1]", "{}", "null", '"']))
_jsonl_line = st.one_of(
    st.fixed_dictionaries({"case": _cell, "group": _cell}, optional={"avg": _cell, "share": _cell, "n": _cell,
                                                                     "state": _cell, "label": _cell}).map(
        lambda d: __import__("json").dumps(d)),
    st.text(max_size=20),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answers=st.lists(_jsonl_line, max_size=5), actual=st.binary(max_size=200), caliber=st.sampled_from(
    [CALIBER, CALIBER + "relations: [{name: r, kind: idempotent}]\n", "key: [", "{}", CALIBER.replace("text", "json")]),
    fmt=st.sampled_from(["csv", "jsonl"]))
def test_scorer_never_crashes(tmp_path_factory: pytest.TempPathFactory, answers: list[str], actual: bytes,
                              caliber: str, fmt: str) -> None:
    d = tmp_path_factory.mktemp("fuzz")
    (d / "c.yaml").write_text(caliber)
    (d / "a.jsonl").write_text("\n".join(answers) + "\n")
    (d / f"x.{fmt}").write_bytes(actual)
    try:
        report = score(ScoreInputs(d / "c.yaml", d / "a.jsonl", d / f"x.{fmt}"))
    except TriAgentError as exc:
        assert exc.line() and "\n" not in exc.line()
    else:
        assert report.verdict in ("pass", "fail")
