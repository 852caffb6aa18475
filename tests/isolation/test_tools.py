"""The role tool set never ends a run: every odd call is a tool error returned to the role, with the reason,
and names no user's file system could hold are refused at the call, not found later by the write audit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tri_agent import MalformedInput
from tri_agent.isolation._contract import load_charter
from tri_agent.isolation._tools import ToolBox, ToolError
from tri_agent.isolation._workspace import audit, snapshot


def _box(tmp: Path, **engine: Any) -> ToolBox:
    ws = tmp / "ws"
    (ws / "exam" / "judge").mkdir(parents=True)
    (ws / "exam" / "judge" / "notes.md").write_text("notes\n")
    return ToolBox(load_charter("tester").contract, ws, engine=engine)


@pytest.mark.parametrize("call,said", [
    (("read", {"path": "exam"}), "is a folder"),
    (("read", {"path": ""}), "is a folder"),
    (("read", {}), "argument 'path' is missing"),
    (("read", {"path": "exam/judge/" + "n" * 300}), "over 255 bytes"),
    (("write", {"path": "exam/judge/notes.md/below.md", "content": "x"}), "is a file, so nothing"),
    (("write", {"path": "exam/judge/lone.md", "content": "\ud800"}), "unpaired surrogate"),
    (("write", {"path": "exam/judge/\ud800.md", "content": "x"}), "unpaired surrogate"),
    (("write", {"path": "exam/judge/bell\x07.md", "content": "x"}), "control character"),
    (("write", {"path": "exam/judge/new\nline.md", "content": "x"}), "control character"),
    (("write", {"path": "exam/judge/CON.txt", "content": "x"}), "reserved device name"),
    (("write", {"path": "exam/judge", "content": "x"}), "may not write"),
    (("list", {"path": "exam/judge/notes.md"}), "is not a folder"),
    (("search", {"pattern": "("}), "bad regular expression"),
    (("read", []), "arguments must be an object"),
])
def test_an_odd_call_is_a_tool_error_with_the_reason(tmp_path: Path, call: tuple[str, Any], said: str) -> None:
    box = _box(tmp_path)
    before = snapshot(box.workspace)
    with pytest.raises(ToolError, match=said):
        box.call(*call)
    assert audit(box.contract, before, snapshot(box.workspace)) == []  # nothing was written


def test_an_engine_tool_given_bad_input_answers_the_role() -> None:
    def build(_args: dict[str, Any]) -> str:
        raise MalformedInput("exam.yaml: generator is missing", where="exam/exam.yaml:1")

    box = ToolBox(load_charter("judge").contract, Path("/nonexistent"), engine={"score": build})
    with pytest.raises(ToolError, match="generator is missing"):
        box.call("score", {})


_name = st.text(st.characters(codec="utf-8", exclude_categories=()), max_size=12) | st.sampled_from(
    ["", ".", "..", "exam", "exam/judge", "exam/judge/notes.md", "/etc", "a" * 300, "exam/judge/x.md"])
_args = st.dictionaries(st.sampled_from(["path", "content", "pattern", "case", "x"]),
                        st.one_of(_name, st.integers(), st.none(), st.lists(st.integers(), max_size=2)), max_size=3)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["list", "read", "search", "write", "run_case", "submit", "nope"]), args=_args)
def test_no_tool_call_raises_anything_but_a_tool_error(tmp_path_factory: pytest.TempPathFactory, name: str,
                                                        args: dict[str, Any]) -> None:
    box = _box(tmp_path_factory.mktemp("tools"))
    try:
        box.call(name, args)
    except ToolError as exc:
        assert str(exc) and "Traceback" not in str(exc)
    assert not (box.workspace.parent / "escape").exists()
