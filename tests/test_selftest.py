"""The self-test and the bundled example run end to end against the installed command.

The self-test is itself a gate, so it is also run against a fake ``tri-agent`` that accepts
everything: it must then fail loudly.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _env(**extra: str) -> dict[str, str]:
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", **extra)


def test_selftest_passes_against_the_installed_package() -> None:
    done = subprocess.run(["bash", str(ROOT / "selftest" / "run_selftest.sh")], capture_output=True, text=True,
                          env=_env(PYTHON=sys.executable), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    passed, failed = (int(part.split()[0]) for part in last.split(", "))
    assert failed == 0 and passed >= 30


def test_selftest_fails_against_a_tri_agent_that_accepts_everything(tmp_path: Path) -> None:
    fake = tmp_path / "tri-agent"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    done = subprocess.run([sys.executable, str(ROOT / "selftest" / "selftest.py")], capture_output=True, text=True,
                          env=_env(TRI_AGENT=str(fake)), timeout=600)
    assert done.returncode == 1
    assert done.stdout.strip().splitlines()[-1].startswith("0 passed")


def test_invoice_totals_example_runs_as_documented(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "invoice-totals" / "run_example.py")],
                          capture_output=True, text=True, env=_env(TRI_AGENT_EXAMPLE_OUT=str(tmp_path)), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 steps as expected, 0 surprises" in done.stdout
    assert "drift: total has 4 in-tolerance differences" in done.stdout


def test_toy_grades_walkthrough_runs_as_documented(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "toy-grades" / "run_example.py")],
                          capture_output=True, text=True, env=_env(TRI_AGENT_EXAMPLE_OUT=str(tmp_path)), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "8 steps as expected, 0 surprises" in done.stdout
    # one mutant of every class of the menu, all killed; the usage check no exam input reaches is proven equivalent
    import re

    figure = re.search(r"PASS (\d+)/(\d+) killed \(100%\); (\d+) ignored, 0 no coverage", done.stdout)
    assert figure and int(figure[2]) >= 7 and figure[1] == figure[2], done.stdout[-2000:]
