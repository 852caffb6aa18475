"""One strictness rule for every format: each model derives from Written or Record, refuses unknown keys, and a
misspelled key in a file a person or a role writes is refused with the file, the line and the nearest name."""

from __future__ import annotations

import json
import shutil
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import TOY
from pydantic import BaseModel, ConfigDict

from tri_agent import MalformedInput
from tri_agent._formatdoc import DOCS
from tri_agent._model import Record, Written, known_keys, nearest
from tri_agent._schemas import FORMATS
from tri_agent._yamldoc import validate


def _nested(model: type[BaseModel], seen: set[type[BaseModel]]) -> set[type[BaseModel]]:
    if model not in seen:
        seen.add(model)
        for info in model.model_fields.values():
            for t in _types(info.annotation):
                if isinstance(t, type) and issubclass(t, BaseModel):
                    _nested(t, seen)
    return seen


def _types(t: Any) -> list[Any]:
    return [t, *(x for a in typing.get_args(t) for x in _types(a))]


def lax(models: list[type[BaseModel]]) -> list[str]:
    """The models (and the ones nested in them) that break the rule: no Written or Record base, or a config that
    lets unknown keys through."""
    every: set[type[BaseModel]] = set()
    for m in models:
        _nested(m, every)
    return sorted(m.__name__ for m in every
                  if not issubclass(m, (Written, Record)) or m.model_config.get("extra") != "forbid")


def test_every_registered_format_and_every_model_inside_it_keeps_the_rule() -> None:
    assert len(FORMATS) >= 40
    assert lax(list(FORMATS.values())) == []


def test_a_model_that_drops_unknown_keys_is_found() -> None:
    class Loose(Record):
        model_config = ConfigDict(extra="ignore")
        a: int = 0

    class Plain(BaseModel):
        b: int = 0

    class Holder(Written):
        inner: list[Plain] | None = None

    assert lax([Loose, Holder]) == ["Loose", "Plain"]


def _written() -> list[str]:
    return sorted(name for name, model in FORMATS.items() if issubclass(model, Written))


def test_the_files_people_and_roles_write_are_the_written_ones() -> None:
    assert set(_written()) >= {"caliber", "exam", "case", "pair", "target", "request-plan", "ui-plan",
                               "mutation-menu", "judge-mutants", "preset", "role-contract", "scripted-episodes",
                               "executor-response-v1", "acceptance"}
    assert {"build-record", "trail-entry", "mutation-summary", "score-report", "pin"}.isdisjoint(_written())


def _misspelt(key: str) -> str:
    return key[0] + key[2:] if len(key) > 4 else key + "s"


@pytest.mark.parametrize("name", _written())
def test_a_misspelt_key_in_any_written_format_names_the_file_the_line_and_the_nearest_key(name: str) -> None:
    doc, model = DOCS[name], FORMATS[name]
    data = yaml.safe_load(doc.example) if doc.syntax == "yaml" else json.loads(doc.example)
    key = max((k for k in data if k != "schema_version"), key=len)
    text = yaml.safe_dump(data, sort_keys=False) + f"{_misspelt(key)}: 1\n"
    with pytest.raises(MalformedInput) as caught:
        validate(text, f"{name}.yaml", model)
    line = caught.value.line()
    assert f"{name}.yaml:{len(text.splitlines())}" in line
    assert f"unknown key {_misspelt(key)!r} (did you mean {key!r}?)" in line
    assert caught.value.exit_code == 3


def test_a_nested_misspelt_key_gets_the_nearest_key_of_its_own_level(tmp_path: Path) -> None:
    text = (TOY / "target.yaml").read_text() + "service:\n  start: [x]\n  ready: {pth: /health}\n"
    with pytest.raises(MalformedInput) as caught:
        validate(text, "target.yaml", FORMATS["target"])
    assert "service.ready.pth: unknown key 'pth' (did you mean 'path'?)" in caught.value.line()
    assert f"target.yaml:{len(text.splitlines())}" in caught.value.line()


def test_the_nearest_key_walks_lists_dicts_and_unions() -> None:
    target = FORMATS["target"]
    assert nearest(target, (), "timout") == "timeout"
    assert nearest(target, ("service", "database"), "templat") == "template"  # a union: sqlite | postgresql
    assert "deadline" in known_keys(target, ("service", "ready"))
    assert nearest(FORMATS["caliber"], ("relations", 0), "feild") == "field"
    assert nearest(target, (), "zzzzzz") is None
    assert known_keys(target, ("no", "such")) == []


# --- each family's own reader --------------------------------------------------------------------------------------

def _refused(run: typing.Callable[[], object]) -> str:
    with pytest.raises(MalformedInput) as caught:
        run()
    return caught.value.line()


def test_the_target_file_reader(tmp_path: Path) -> None:
    from tri_agent.targets._target import Target

    shutil.copytree(TOY, tmp_path / "toy", ignore=shutil.ignore_patterns("out", "builds", "runs"))
    path = tmp_path / "toy" / "target.yaml"
    path.write_text(path.read_text().replace("timeout:", "timout:"))
    line = _refused(lambda: Target.load(path))
    assert "target.yaml:" in line and "did you mean 'timeout'?" in line


def test_the_acceptance_reader(tmp_path: Path) -> None:
    from tri_agent.acceptance._config import load_config

    text = (TOY / "acceptance.yaml").read_text()
    (tmp_path / "acceptance.yaml").write_text(text + "gate_m: 3\n")
    line = _refused(lambda: load_config(tmp_path))
    assert f"acceptance.yaml:{len(text.splitlines()) + 1}" in line and "did you mean 'gate_n'?" in line


def test_the_exam_reader(tmp_path: Path) -> None:
    from tri_agent.exam._formats import load_exam

    shutil.copytree(TOY / "exam", tmp_path / "exam")
    path = tmp_path / "exam" / "exam.yaml"
    path.write_text(path.read_text().replace("generator:", "generater:"))
    assert "did you mean 'generator'?" in _refused(lambda: load_exam(tmp_path / "exam"))


def test_the_cases_reader_names_the_line(tmp_path: Path) -> None:
    from tri_agent.exam._formats import read_cases

    path = tmp_path / "cases.jsonl"
    path.write_text('{"case": "c-0000aaaa", "inputs": "inputs/a"}\n{"case": "c-0000bbbb", "input": "inputs/b"}\n')
    line = _refused(lambda: read_cases(path))
    assert f"{path}:2" in line and "unknown key 'input' (did you mean 'inputs'?)" in line


def test_the_role_contract_reader_names_the_line_in_the_file(tmp_path: Path) -> None:
    from tri_agent.isolation._contract import _parse

    text = (Path(__file__).resolve().parents[1] / "roles" / "tester.md").read_text()
    path = tmp_path / "tester.md"
    path.write_text(text.replace("memory: fresh\n", "memory: fresh\nreadabel: []\n", 1))
    line = _refused(lambda: _parse(path))
    assert f"{path}:9" in line and "unknown key 'readabel' (did you mean 'readable'?)" in line


def test_an_agent_response_with_an_unknown_key_is_malformed_output_naming_it() -> None:
    from pydantic import ValidationError

    from tri_agent._yamldoc import explained
    from tri_agent.drivers._command import PROTOCOL, Response

    with pytest.raises(ValidationError) as caught:
        Response.model_validate({"protocol": PROTOCOL, "status": "ok", "sumary": "x"})
    line = explained(caught.value, Response, "the response on stdout").line()
    assert "unknown key 'sumary' (did you mean 'summary'?)" in line
