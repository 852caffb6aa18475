"""The role-eval example end to end: the command its README shows runs, and prints what the README says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tri_agent._cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "role-eval"


def test_the_readme_command_runs_and_prints_what_it_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["eval-roles", str(EXAMPLE / "corpus"), "--role", "judge", "--driver", "fixture", "--fixtures",
                 str(EXAMPLE / "fixtures"), "--attempts", "2", "--out", str(tmp_path / "out")])
    printed = capsys.readouterr().out
    assert code == 0
    assert "| recall | 50.0% | 1 / 2 | 5.5% to 94.5% |" in printed and "**A simulation**" in printed
    assert "| unique_finding |" in printed  # every measure is printed
    readme = (EXAMPLE / "README.md").read_text()
    assert "tri-agent eval-roles examples/role-eval/corpus --role judge --driver fixture" in readme
    assert "from 5.5% to 94.5%" in readme
