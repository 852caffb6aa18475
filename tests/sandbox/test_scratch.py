"""A command's scratch folders are gone however it ends: SIGTERM unwinds it (interrupted, exit 7), and what a
SIGKILL left is swept by the next command's start; a forged registry entry removes nothing it does not own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import alive

from tri_agent.sandbox import _scratch

SLOW = "import time, sys\ntime.sleep(60)\n"


def _target(tmp: Path, marker: str) -> Path:
    (tmp / "t").mkdir()
    (tmp / "t" / f"{marker}.py").write_text(SLOW)
    path = tmp / "target.yaml"
    path.write_text(f"""schema_version: 1
baseline: t
run: [python3, "{{target}}/{marker}.py", "{{input}}", "{{output}}"]
timeout: 120
jobs: 1
extract: {{file: out.csv, format: csv}}
""")
    return path


def _start(toy_build: Path, tmp: Path, marker: str) -> tuple[subprocess.Popen[str], Path]:
    top = tmp / "tmp"
    top.mkdir()
    env = {**os.environ, "TMPDIR": str(top)}
    proc = subprocess.Popen([sys.executable, "-m", "tri_agent", "exam", "run", str(toy_build), "--target",
                             str(_target(tmp, marker)), "--out", str(tmp / "run")], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not alive(marker):  # a case is running: its folders are in the scratch root
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    return proc, top


def _roots(top: Path) -> list[Path]:
    return [p for p in top.iterdir() if p.name != _scratch.REGISTRY]


def test_sigterm_unwinds_the_command_and_removes_its_scratch(toy_build: Path, tmp_path: Path) -> None:
    marker = f"slowcase{os.getpid()}t"
    proc, top = _start(toy_build, tmp_path, marker)
    [root] = _roots(top)
    assert any(root.rglob(f"{marker}.py"))
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err.strip().splitlines()[-1]) == (7, "tri-agent: interrupted")
    assert _roots(top) == [] and list((top / _scratch.REGISTRY).iterdir()) == []
    assert not alive(marker)  # the case's whole jail died with it


def test_what_a_sigkill_left_is_swept_by_the_next_command(toy_build: Path, tmp_path: Path) -> None:
    marker = f"slowcase{os.getpid()}k"
    proc, top = _start(toy_build, tmp_path, marker)
    proc.kill()
    proc.wait(timeout=30)
    [root] = _roots(top)  # nothing of a killed process runs: its root stays ...
    assert root.is_dir()
    done = subprocess.run([sys.executable, "-m", "tri_agent", "presets"], env={**os.environ, "TMPDIR": str(top)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert _roots(top) == []  # ... until the next command starts


def test_a_live_commands_root_and_a_forged_entry_are_left_alone(tmp_path: Path) -> None:
    top, outside = tmp_path / "tmp", tmp_path / "precious"
    top.mkdir()
    outside.mkdir()
    live = top / "tmplive"
    live.mkdir()
    registry = top / _scratch.REGISTRY
    registry.mkdir()
    (registry / _scratch.identity(os.getpid())).write_text(str(live))
    (registry / "999999999-1").write_text(str(outside))  # a dead pid's entry pointing outside the temporary folder
    (registry / "999999998-1").write_text(str(top))  # ... at the temporary folder itself
    assert _scratch.sweep(top) == []
    assert live.is_dir() and outside.is_dir() and top.is_dir()
    assert sorted(p.name for p in registry.iterdir()) == [_scratch.identity(os.getpid())]


def test_the_session_restores_the_temporary_folder_and_the_signal_handler(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = signal.getsignal(signal.SIGTERM)
    with _scratch.session() as root:
        assert tempfile.mkdtemp().startswith(str(root) + "/")
        assert signal.getsignal(signal.SIGTERM) is not before
    assert tempfile.tempdir == str(tmp_path) and not root.exists() and signal.getsignal(signal.SIGTERM) is before


def test_inside_a_command_a_jail_still_refuses_the_whole_temporary_folder(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The session moves tempfile's folder into the command's root: another command's scratch folder beside it must
    stay out of every jail, as it was before the session."""
    import tempfile

    import tri_agent.sandbox._jail as jail

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    sibling = tmp_path / "tmpother"
    sibling.mkdir()
    assert jail.refused(sibling) is not None
    with _scratch.session():
        assert jail.refused(sibling) == f"it would show a folder inside {tmp_path.resolve()}, which no run may see"


def test_a_registry_another_user_could_write_is_never_read(tmp_path: Path) -> None:
    top = tmp_path / "tmp"
    top.mkdir()
    victim = top / "tmpvictim"
    victim.mkdir()
    registry = top / _scratch.REGISTRY
    registry.mkdir()
    (registry / "999999999-1").write_text(str(victim))
    registry.chmod(0o777)  # world-writable: anyone could have planted the entry
    assert _scratch.sweep(top) == [] and victim.is_dir()
    registry.chmod(0o700)
    (registry / "²-1").write_text(str(victim))  # a digit Python knows, not a pid
    (registry / "999999998-1").symlink_to(victim)  # not a plain file
    assert _scratch.sweep(top) == [victim] and not victim.exists()
