"""dev.py installs the system packages the suite needs (bubblewrap, chromium, postgresql) when they are missing."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from conftest import load_script

SCRIPT = Path(__file__).resolve().parents[1] / "dev.py"


def _dev() -> ModuleType:
    return load_script(SCRIPT, "tri_dev")


def _installs(monkeypatch: pytest.MonkeyPatch, present: set[str], uid: int = 0) -> list[list[str]]:
    dev = _dev()
    ran: list[list[str]] = []
    monkeypatch.setattr(dev.shutil, "which", lambda name: f"/usr/bin/{name}" if name in present else None)
    monkeypatch.setattr(dev.os, "geteuid", lambda: uid)
    monkeypatch.setattr(dev.subprocess, "run", lambda cmd, **_kw: ran.append(cmd) or _Done())
    dev.ensure_system_packages()
    return ran


class _Done:
    returncode = 0


@pytest.mark.parametrize(("present", "wanted"), [({"apt-get", "bwrap", "pg_ctlcluster"}, ["chromium"]),
                                                 ({"apt-get", "chromium", "pg_ctlcluster"}, ["bubblewrap"]),
                                                 ({"apt-get", "bwrap", "chromium"}, ["postgresql"]),
                                                 ({"apt-get"}, ["bubblewrap", "chromium", "postgresql"])])
def test_missing_system_packages_are_installed_with_apt_as_root(monkeypatch: pytest.MonkeyPatch, present: set[str],
                                                                wanted: list[str]) -> None:
    assert _installs(monkeypatch, present) == [["apt-get", "update", "-qq"],
                                               ["apt-get", "install", "-y", "-qq", *wanted]]


@pytest.mark.parametrize(("present", "uid"), [({"apt-get", "bwrap", "chromium", "pg_ctlcluster"}, 0), ({"bwrap"}, 0),
                                              ({"apt-get"}, 1000)])
def test_nothing_is_installed_when_nothing_is_missing_or_apt_cannot_run(monkeypatch: pytest.MonkeyPatch,
                                                                        present: set[str], uid: int) -> None:
    assert _installs(monkeypatch, present, uid) == []


def _demo(monkeypatch: pytest.MonkeyPatch, present: set[str], uid: int, layer: str,
          capsys: pytest.CaptureFixture[str]) -> tuple[list[list[str]], str]:
    """What `dev.py demo` runs and says on a machine with ``present`` commands, as user ``uid``, whose strongest
    sandbox layer is ``layer`` (installing the packages changes nothing here: the fake apt installs nothing)."""
    dev = _dev()
    ran: list[list[str]] = []
    monkeypatch.setattr(dev, "ensure_env", lambda extras: {})
    monkeypatch.setattr(dev.shutil, "which", lambda name: f"/usr/bin/{name}" if name in present else None)
    monkeypatch.setattr(dev.os, "geteuid", lambda: uid)
    monkeypatch.setattr(dev.subprocess, "run", lambda cmd, **_kw: ran.append(cmd) or _Done())
    monkeypatch.setattr(dev, "sandbox_layer", lambda env: layer)
    monkeypatch.setattr(dev, "_run", lambda cmd, env=None: ran.append(cmd) or 0)
    monkeypatch.setattr(dev, "memory_temp", lambda: None)
    assert dev.demo() == 0
    return ran, capsys.readouterr().out


def test_the_demo_installs_bubblewrap_as_root_and_only_bubblewrap(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    ran, out = _demo(monkeypatch, {"apt-get"}, 0, "bubblewrap", capsys)
    assert ["apt-get", "install", "-y", "-qq", "bubblewrap"] in ran
    assert "role-written code runs under: bubblewrap" in out and "missing" not in out
    assert not any("--allow-unsandboxed" in cmd for cmd in ran)


@pytest.mark.parametrize(("layer", "unsandboxed"), [("landlock", False), ("none", True)])
def test_without_bubblewrap_the_demo_says_what_is_missing_what_it_costs_and_runs_anyway(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], layer: str, unsandboxed: bool) -> None:
    ran, out = _demo(monkeypatch, {"apt-get"}, 1000, layer, capsys)  # not root: nothing can be installed
    assert not any(cmd[:1] == ["apt-get"] for cmd in ran)
    [missing] = [line for line in out.splitlines() if "bubblewrap is missing" in line]
    assert "cannot certify" in missing and "apt-get install bubblewrap" in missing and "runs anyway" in missing
    assert f"role-written code runs under: {layer}" in out
    acceptance = next(cmd for cmd in ran if any("run_acceptance.py" in part for part in cmd))
    selftest = next(cmd for cmd in ran if any("run_selftest.sh" in part for part in cmd))
    assert ("--allow-unsandboxed" in acceptance) is unsandboxed and ("--allow-unsandboxed" in selftest) is unsandboxed


def _mounts(tmp_path: Path, where: Path, kind: str) -> Path:
    mounts = tmp_path / "mounts"
    mounts.write_text(f"/dev/vda / ext4 rw 0 0\n{kind} {where} {kind} rw,relatime 0 0\n")
    return mounts


def test_the_suites_temporary_files_go_to_a_memory_file_system_with_room(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    dev, where = _dev(), tmp_path / "shm"
    where.mkdir()
    made = dev.memory_temp(where, _mounts(tmp_path, where, "tmpfs"))
    assert made is not None and made.parent == where and made.is_dir() and made.stat().st_mode & 0o777 == 0o711
    assert "tri" not in made.name  # a case's path names nothing of the engine
    assert dev.memory_temp(where, _mounts(tmp_path, where, "ext4")) is None  # a disk: the default folder
    assert dev.memory_temp(where, tmp_path / "no-such-mounts") is None

    class Small:
        f_bavail, f_frsize = 1000, 4096

    monkeypatch.setattr(dev.os, "statvfs", lambda path: Small())
    assert dev.memory_temp(where, _mounts(tmp_path, where, "tmpfs")) is None  # too little room: the disk


@pytest.mark.parametrize("code", [0, 1])
def test_the_suite_runs_in_the_memory_folder_which_is_removed_unless_a_test_failed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], code: int) -> None:
    dev, memory = _dev(), tmp_path / "memory"
    memory.mkdir()
    ran: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(dev, "ensure_env", lambda extras: {"PATH": "/usr/bin"})
    monkeypatch.setattr(dev, "ensure_system_packages", lambda *a: [])
    monkeypatch.setattr(dev, "memory_temp", lambda: memory)
    monkeypatch.setattr(dev, "_run", lambda cmd, env=None: ran.append((cmd, env or {})) or (code if "pytest" in cmd
                                                                                           else 0))
    assert dev.test([]) == code
    cmd, env = ran[-1]
    assert f"--basetemp={memory / 'base'}" in cmd and env["TMPDIR"] == str(memory / "tmp")
    assert "tmp_path_retention_policy=failed" in cmd  # a passing test's folder goes at once
    assert memory.exists() is bool(code)
    assert (str(memory) in capsys.readouterr().err) is bool(code)


def test_the_demo_runs_its_acceptances_with_their_scratch_in_memory_and_removes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dev, memory = _dev(), tmp_path / "memory"
    memory.mkdir()
    envs: list[dict[str, str]] = []
    monkeypatch.setattr(dev, "ensure_env", lambda extras: {"PATH": "/usr/bin"})
    monkeypatch.setattr(dev, "ensure_system_packages", lambda *a: [])
    monkeypatch.setattr(dev, "sandbox_layer", lambda env: "bubblewrap")
    monkeypatch.setattr(dev, "memory_temp", lambda: memory)
    monkeypatch.setattr(dev, "_run", lambda cmd, env=None: envs.append(env or {}) or 0)
    assert dev.demo() == 0
    assert len(envs) == 4 and all(env["TMPDIR"] == str(memory) for env in envs[:2])  # the acceptance, the self-test
    assert all("TMPDIR" not in env for env in envs[2:])  # the walkthroughs name their work folders: kept on disk
    assert not memory.exists()
