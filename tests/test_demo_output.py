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


def test_the_invoice_walk_through_runs_again_over_its_own_reports(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A second `python3 dev.py demo` found the first one's reports and every score step refused to overwrite
    them; the walk-through now replaces its own four reports, and nothing else in the folder."""
    import sys

    monkeypatch.setenv("TRI_AGENT_EXAMPLE_OUT", str(tmp_path))
    monkeypatch.setenv("TRI_AGENT", str(Path(sys.executable).with_name("tri-agent")))
    script = SCRIPT.parents[1] / "invoice-totals" / "run_example.py"
    (tmp_path / "mine.txt").write_text("keep me")
    assert load_script(script, "invoice_walk_1").main() == 0
    assert load_script(script, "invoice_walk_2").main() == 0
    assert (tmp_path / "mine.txt").read_text() == "keep me" and (tmp_path / "good.json").is_file()
