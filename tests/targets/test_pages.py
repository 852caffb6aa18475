"""UI plans and what the orchestrator makes of a pilot's lines: plan checks, canonical accessibility trees compared
whole, volatile parts replaced, hostile snapshots that only lose their read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from tri_agent.scoring._grading import ScoreInputs, score
from tri_agent.targets._target import TargetConfig
from tri_agent.targets.browser._pages import ACTIONS, UiPlan, UiStep, page_rows
from tri_agent.targets.browser._trees import TEXT_CAP, normal_tree, read_value
from tri_agent.targets.service._client import cleaner

SNAPSHOT = """- region "Booking":
  - heading "Booking 3" [level=2]
  - paragraph: "Name: Zoë"
  - textbox "Seats": "2"
  - checkbox "Lunch" [checked]
  - text: yes
  - link "Home":
    - /url: /home?sid=0123456789abcdef
"""
TREE = [{"role": "region", "name": "Booking", "children": [
    {"role": "heading", "name": "Booking 3", "level": "2"},
    {"role": "paragraph", "text": "Name: Zoë"},
    {"role": "textbox", "name": "Seats", "text": "2"},
    {"role": "checkbox", "name": "Lunch", "checked": "true"},
    {"role": "text", "text": "yes"},  # YAML's 'yes' stays the text it is, never a boolean
    {"role": "link", "name": "Home", "url": "/home?sid=0123456789abcdef"}]}]


def test_a_snapshot_becomes_canonical_nodes() -> None:
    assert normal_tree(SNAPSHOT) == TREE


def test_dropped_properties_and_volatile_parts_are_gone_before_anything_is_compared() -> None:
    clean = cleaner([{"pattern": "Booking [0-9]+", "as": "Booking <n>"},
                     {"pattern": "sid=[0-9a-f]+", "as": "sid=<sid>"}])
    tree = json.loads(read_value("tree:role:region:Booking", SNAPSHOT, frozenset({"url"}), clean) or "")
    assert tree[0]["children"][0]["name"] == "Booking <n>" and "url" not in tree[0]["children"][-1]
    assert read_value("url", "/b?sid=ab12", frozenset(), clean) == "/b?sid=<sid>"
    assert read_value("text:css:p", " a \n  b ", frozenset(), clean) == "a b"


def test_a_replacement_is_taken_literally() -> None:
    assert cleaner([{"pattern": "(a)", "as": "\\1<\\g<0>>"}])("bab") == "b\\1<\\g<0>>b"


def test_a_read_past_the_cap_is_unreadable_never_a_part_that_could_pass_as_the_whole() -> None:
    whole = SNAPSHOT + "  - paragraph: " + "x" * TEXT_CAP
    assert read_value("tree:css:main", whole, frozenset(), str) is None
    assert read_value("text:css:main", "y" * (TEXT_CAP + 1), frozenset(), str) is None


def test_the_orchestrator_keeps_the_pilots_cells_and_refuses_a_tree_that_is_not_json() -> None:
    plan = UiPlan.model_validate({"steps": [{"id": "s", "do": "pause", "read": {"t": "tree:css:main", "u": "url"}}]})
    rows = page_rows("c-1", plan, [{"step": "s", "n": 0, "reads": {"t": "[{\"role\": \"main\"", "u": 5}}])
    assert rows == [{"case": "c-1", "step": "s", "n": "0", "t": None, "u": None}]


@pytest.mark.parametrize("hostile", ["- [unclosed", "just: a mapping", "- &a x\n- *a", "- 'a': 1\n  'b': 2",
                                     "- role \"x\" junk", "x" * (TEXT_CAP + 1)])
def test_a_snapshot_that_is_not_one_loses_its_read_and_nothing_else(hostile: str) -> None:
    assert normal_tree(hostile) is None


@given(st.text(max_size=200))
def test_no_text_makes_the_tree_reader_raise(text: str) -> None:
    result = normal_tree(text)
    assert result is None or isinstance(result, list)


def _score(tmp: Path, expected: Any, actual: str) -> Any:
    (tmp / "caliber.yaml").write_text("schema_version: 1\nkey: [case, step, n]\nfields:\n  t: json\n")
    (tmp / "answers.jsonl").write_text(json.dumps({"case": "c-1", "step": "s", "n": "0", "t": expected}) + "\n")
    (tmp / "actual.jsonl").write_text(json.dumps({"case": "c-1", "step": "s", "n": "0", "t": actual}) + "\n")
    return score(ScoreInputs(tmp / "caliber.yaml", tmp / "answers.jsonl", tmp / "actual.jsonl", actual_text=True))


def test_a_golden_tree_is_compared_whole_so_a_subset_of_the_page_fails(tmp_path: Path) -> None:
    actual = json.dumps(normal_tree(SNAPSHOT), ensure_ascii=False)
    assert _score(tmp_path, TREE, actual).verdict == "pass"
    subset = [{**TREE[0], "children": TREE[0]["children"][:2]}]  # what a partial matcher would accept
    report = _score(tmp_path, subset, actual)
    assert report.verdict == "fail" and report.answers.failures[0].field == "t"


@pytest.mark.parametrize(("step", "problem"), [
    ({"do": "fill", "target": "label:Name"}, "fill needs value"),
    ({"do": "back", "target": "label:Name"}, "back takes no target"),
    ({"do": "click", "target": "xpath://a"}, "locator 'xpath://a'"),
    ({"do": "click", "target": "role:Button"}, "role:<aria role>"),
    ({"do": "goto", "path": "/", "replay": 1}, "replay belongs to click steps"),
    ({"do": "goto", "path": "/", "select": {"a": "$.a"}}, "belong to request steps"),
    ({"do": "upload", "target": "label:F", "file": "../../sealed/answers.jsonl"}, "inside the case's inputs"),
    ({"do": "upload", "target": "label:F", "file": "."}, "inside the case's inputs"),
    ({"do": "upload", "target": "label:F", "file": ""}, "inside the case's inputs"),
    ({"do": "request", "path": "/a", "select": {"x": "$.x"}, "read": {"x": "url"}}, "both read and selected"),
    ({"do": "pause", "read": {"x": "tree"}}, "read 'tree'"),
    ({"do": "pause", "read": {"step": "url"}}, "every row already has"),
    ({"do": "request", "path": "/a", "select": {"status": "$.s"}}, "every row already has"),
])
def test_a_step_that_does_not_fit_its_action_is_refused_by_name(step: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem.replace("(", r"\(").replace("[", r"\[")):
        UiStep.model_validate({"id": "s", **step})


def test_every_action_of_the_table_has_a_valid_step() -> None:
    values = {"target": "label:X", "value": "v", "key": "Enter", "path": "/", "file": "f.txt"}
    for action, needed in ACTIONS.items():
        assert UiStep.model_validate({"id": "s", "do": action, **{f: values[f] for f in needed}}).do == action


def test_a_browser_target_needs_its_service_block() -> None:
    with pytest.raises(ValidationError, match="a browser target needs 'service'"):
        TargetConfig.model_validate({"kind": "browser", "baseline": "t", "browser": {}})
    with pytest.raises(ValidationError, match="no 'browser'"):
        TargetConfig.model_validate({"kind": "service", "baseline": "t", "service": {"start": ["x"]},
                                     "browser": {}})
    config = TargetConfig.model_validate({"kind": "browser", "baseline": "t", "service": {"start": ["x"]}})
    assert [r.behavior for r in config.rules()] == ["timeout", "completed", "unready", "stuck", "crashed"]


def test_the_plan_the_pilot_and_the_table_know_the_same_actions() -> None:
    from typing import get_args

    from tri_agent.targets.browser._pilot import ACTS

    assert set(ACTS) == set(ACTIONS) == set(get_args(UiStep.model_fields["do"].annotation))
