"""The self-test and the bundled example run end to end against the installed command.

The self-test is itself a gate, so it is also run against a fake ``tri-agent`` that accepts
everything: it must then fail loudly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _env(**extra: str) -> dict[str, str]:
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", **extra)


def _bare(argv: list[str]) -> list[str]:
    """``argv`` as on a freshly made machine without bubblewrap: where it is installed, a private mount namespace
    lays /dev/null over it (so it is no program at all), and nothing else of the machine changes."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return argv  # this machine is bare already
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("hiding bubblewrap needs root and unshare (util-linux)")
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", f'mount --bind /dev/null {bwrap} && exec "$@"',
            "sh", *argv]


def _layer() -> str:
    probe = "from tri_agent.sandbox._jail import strongest; print(strongest() or 'none')"
    return subprocess.run(_bare([sys.executable, "-c", probe]), capture_output=True, text=True).stdout.strip()


# what a passing simulation that could not certify says of its sandbox, by the layer it had instead
WHY_NOT = {"landlock": "role-written code ran under Landlock only", "none": "ran outside the OS sandbox"}


def test_on_a_machine_without_bubblewrap_the_self_test_passes() -> None:
    """The demo's self-test as a fresh machine runs it: no bubblewrap, every check still passing (its runs under
    Landlock, or unsandboxed where the machine has no sandbox at all, as dev.py demo then asks), and no fixed
    wall-clock limit that a slow run trips."""
    layer = _layer()
    extra = ["--allow-unsandboxed"] if layer == "none" else []
    done = subprocess.run(_bare(["bash", str(ROOT / "selftest" / "run_selftest.sh"), *extra]), capture_output=True,
                          text=True, env=_env(PYTHON=sys.executable))
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    passed, failed = (int(part.split()[0]) for part in last.split(", "))
    assert failed == 0 and passed >= 30


def test_on_a_machine_without_bubblewrap_the_toy_acceptance_passes_and_cannot_certify(tmp_path: Path) -> None:
    layer = _layer()
    assert layer in WHY_NOT, f"bubblewrap was not hidden: {layer}"
    extra = ["--allow-unsandboxed"] if layer == "none" else []
    done = subprocess.run(_bare([sys.executable, str(ROOT / "examples" / "toy-grades" / "run_acceptance.py"), *extra]),
                          capture_output=True, text=True, env=_env(TRI_AGENT_EXAMPLE_OUT=str(tmp_path)))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]  # accept ended 9, verify-trail 0
    assert "PASSED, NOT CERTIFIED after 5 rounds" in done.stdout + done.stderr
    board = (tmp_path / "toy-grades" / "SCOREBOARD.md").read_text()
    assert WHY_NOT[layer] in board and "a simulation" in board


def test_selftest_fails_against_a_tri_agent_that_accepts_everything(tmp_path: Path) -> None:
    fake = tmp_path / "tri-agent"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    done = subprocess.run([sys.executable, str(ROOT / "selftest" / "selftest.py")], capture_output=True, text=True,
                          env=_env(TRI_AGENT=str(fake)))
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


def test_a_check_past_the_scaled_limit_is_reported_as_a_limit_exit_7_never_as_a_failed_check(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from conftest import load_script

    selftest = load_script(ROOT / "selftest" / "selftest.py", "tri_selftest")
    seen: list[float] = []

    def run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        if "calibration" in cmd:  # the calibration run: an exam build that took 0.5 s
            return subprocess.CompletedProcess(cmd, 0, "", "")
        seen.append(float(kw["timeout"]))  # type: ignore[arg-type]
        raise subprocess.TimeoutExpired(cmd, float(kw["timeout"]))  # type: ignore[arg-type]

    clock = iter([0.0, 0.5, *range(10, 10000)])
    monkeypatch.setattr(selftest.time, "monotonic", lambda: float(next(clock)))
    monkeypatch.setattr(selftest.subprocess, "run", run)
    monkeypatch.setattr(selftest.shutil, "which", lambda name: "/usr/bin/tri-agent")
    monkeypatch.setattr(selftest, "CHECKS", [("one", lambda d: selftest.tri("--version", expect=0))])
    assert selftest.main([]) == 7
    out = capsys.readouterr()
    assert seen == [150.0]  # 300 calibration runs' worth: scaled, not a fixed number
    assert "LIMIT one: `tri-agent --version` ran past 150 s (300 times the 0.50 s calibration run" in out.out
    assert "0 passed, 0 failed, 1 hit the limit" in out.out and "not a failed check" in out.err
