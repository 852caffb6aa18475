"""Every YAML format the project reads is bounded: an alias bomb, a recursive alias, deep nesting, a huge
number or value is malformed input with file:line, at once, in every loader."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import deadline
from hypothesis import given, settings
from hypothesis import strategies as st

from tri_agent import MalformedInput, TriAgentError
from tri_agent._yamldoc import LIMITS, data
from tri_agent.acceptance._config import load_config
from tri_agent.drivers._scripted import ScriptedDriver
from tri_agent.exam._formats import load_exam
from tri_agent.mutation._menu import load_concrete, load_menu
from tri_agent.scoring._caliber import load_caliber
from tri_agent.targets._presets import load_presets
from tri_agent.targets._target import Target


def _bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 9)}]" for k in range(1, levels)]
    return "\n".join(lines) + "\n"


HOSTILE = {
    "alias bomb": (_bomb(), "alias bomb"),
    "recursive alias": ("a: &a [1, *a]\n", "refers to itself"),
    "deep nesting": ("a: " + "[" * 200 + "]" * 200 + "\n", "deeper than"),
    "5000-digit integer": ("schema_version: " + "9" * 5000 + "\n", "number literal"),
    "huge value": ("a: '" + "x" * (LIMITS.scalar_chars + 1) + "'\n", "characters"),
    "huge document": ("# " + "x" * LIMITS.document_bytes + "\n", "larger than"),
}
# where each format lives, and how the project reads it
LOADERS: dict[str, tuple[str, Callable[[Path], object]]] = {
    "caliber": ("caliber.yaml", lambda p: load_caliber(p / "caliber.yaml")),
    "exam": ("exam.yaml", lambda p: _exam(p)),
    "target": ("target.yaml", lambda p: Target.load(p / "target.yaml")),
    "menu": ("mutations.yaml", lambda p: load_menu(p / "mutations.yaml")),
    "judge's mutants": ("mutants.yaml", lambda p: load_concrete(p / "mutants.yaml")),
    "acceptance": ("acceptance.yaml", lambda p: load_config(p)),
    "scripted episodes": ("script.yaml", lambda p: ScriptedDriver(p / "script.yaml")),
    "preset": ("warehouse.yaml", lambda p: load_presets(p)),
}


def _exam(folder: Path) -> object:
    for other in ("SPEC.md", "TESTPLAN.md", "caliber.yaml"):  # the exam's other files, so exam.yaml is read
        (folder / other).write_text("key: [k]\n" if other.endswith("yaml") else "# x\n")
    return load_exam(folder)


@pytest.mark.parametrize("attack", sorted(HOSTILE))
@pytest.mark.parametrize("fmt", sorted(LOADERS))
def test_hostile_yaml_is_one_line_of_malformed_input_in_every_format(tmp_path: Path, fmt: str, attack: str) -> None:
    name, load = LOADERS[fmt]
    text, said = HOSTILE[attack]
    (tmp_path / name).write_text(text)
    with deadline(20), pytest.raises(MalformedInput) as caught:
        load(tmp_path)
    line = caught.value.line()
    assert said in line and "\n" not in line and name in line and caught.value.exit_code == 3
    if attack not in ("huge document",):
        assert f"{name}:" in line  # file:line


def test_aliases_within_bounds_still_work_and_the_bomb_is_refused_fast() -> None:
    assert data("d: &d {e: 1}\nf: *d\ng: [*d, *d]\n", "ok.yaml") == {"d": {"e": 1}, "f": {"e": 1},
                                                                       "g": [{"e": 1}, {"e": 1}]}
    start = time.monotonic()
    with pytest.raises(MalformedInput):
        data(_bomb(12), "bomb.yaml")  # 9**12 nodes expanded: refused from its shape alone
    assert time.monotonic() - start < 5


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_data_or_one_line_of_our_error(text: str) -> None:
    try:
        data(text, "fuzz.yaml")
    except TriAgentError as exc:
        assert exc.exit_code == 3 and "\n" not in exc.line()
