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
