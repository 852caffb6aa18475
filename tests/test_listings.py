"""Every list of target kinds, presets, skeletons and exit codes that the help, the survey and the documents show
is the code's own table: none can drift from it again."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tri_agent._errors import MEANING, ExitCode
from tri_agent.acceptance._config import QUESTIONS
from tri_agent.acceptance._scaffold import available, skeletons_dir
from tri_agent.targets._presets import load_presets, preset_names
from tri_agent.targets._specs import KINDS

ROOT = Path(__file__).resolve().parents[1]
PRESETS = sorted(load_presets())


def _help(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "tri_agent", *args, "--help"], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "COLUMNS": "400"})
    assert done.returncode == 0, done.stderr
    return " ".join(done.stdout.split())


def _listed(text: str) -> list[str]:
    """The names in a comma-separated list ("api, document, gui, warehouse")."""
    return [n.strip(" `") for n in text.split(",")]


def test_the_tables_agree_with_each_other() -> None:
    assert set(MEANING) == set(ExitCode)
    assert preset_names() == PRESETS
    assert available(load_presets(), skeletons_dir()) == PRESETS  # every preset has a skeleton
    assert {p.target_kind for p in load_presets().values()} == set(KINDS)  # every kind has a preset


def test_the_top_level_help_lists_every_exit_code() -> None:
    epilog = _help().split("exit codes: ", 1)[1]
    assert epilog == ", ".join(f"{int(code)} {word}" for code, word in MEANING.items())


def test_the_readme_table_lists_every_exit_code_in_order() -> None:
    rows = re.findall(r"^\| (\d+) \|", (ROOT / "README.md").read_text(encoding="utf-8"), flags=re.M)
    assert [int(r) for r in rows] == [int(c) for c in ExitCode]


@pytest.mark.parametrize(("command", "option", "names"), [
    (("init",), "--target-kind TARGET_KIND preset: ", PRESETS),
    (("new",), "--preset PRESET a preset with a skeleton: ", PRESETS),
])
def test_a_help_text_lists_every_preset(command: tuple[str, ...], option: str, names: list[str]) -> None:
    text = _help(*command)
    assert _listed(text.split(option, 1)[1].split(" --", 1)[0]) == names


def test_the_survey_asks_with_every_preset() -> None:
    [question] = [q for name, q, _ in QUESTIONS if name == "target_kind"]
    asked = question.format(presets=", ".join(preset_names()))
    assert _listed(asked.split("a preset: ", 1)[1].rstrip(")?")) == PRESETS


@pytest.mark.parametrize("marker", ["tri-agent presets [NAME]", "tri-agent new PROJECT --preset P"])
def test_the_command_reference_lists_every_preset(marker: str) -> None:
    line = next(x for x in (ROOT / "docs" / "commands.md").read_text(encoding="utf-8").splitlines()
                if x.startswith(marker))
    assert _listed(line.split("# ", 1)[1].split(":", 1)[0]) == PRESETS


def test_the_command_reference_names_every_preset_new_writes() -> None:
    text = " ".join((ROOT / "docs" / "commands.md").read_text(encoding="utf-8").split())
    said = text.split("`new` writes a complete, working project for a preset (", 1)[1].split(":", 1)[0]
    assert _listed(said) == PRESETS


def test_the_target_file_docstring_names_every_kind() -> None:
    from tri_agent.targets import _target

    said = re.findall(r"``(\w+)`` \(", (_target.__doc__ or "").split("A command target file", 1)[0])
    assert said == list(KINDS)
