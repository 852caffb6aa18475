"""The demo keeps its results in one predictable folder, and clears only a folder it made itself."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from conftest import load_script

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "toy-grades" / "run_acceptance.py"


def _demo() -> ModuleType:
    return load_script(SCRIPT, "toy_demo")


def test_the_demo_folder_is_cleared_only_when_the_demo_made_it(tmp_path: Path) -> None:
    demo = _demo()
    out = demo.fresh(tmp_path / "acceptance")
    (out / "toy-grades").mkdir()
    assert demo.fresh(out) == out and [p.name for p in out.iterdir()] == [demo.MARK]
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("keep me")
    with pytest.raises(SystemExit) as stop:
        demo.fresh(foreign)
    assert "holds files this demo did not write" in str(stop.value)
    assert (foreign / "thesis.tex").read_text() == "keep me"


def test_the_default_folder_is_ignored_by_git() -> None:
    root = SCRIPT.parents[2]
    probe = SCRIPT.parent / "out" / "acceptance" / "toy-grades" / "SCOREBOARD.md"
    done = subprocess.run(["git", "check-ignore", "-q", str(probe.relative_to(root))], cwd=root)
    assert done.returncode == 0
