"""A small repository with a test suite, built fresh for each test: the code, its tests, and git history. Named
signals_repo, not conftest: a second conftest module would shadow tests/conftest.py for every file that imports
from it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgsign=false"]
CALC = "def add(a, b):\n    return a + b\n"
TESTS = ("from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
         "def test_zero():\n    assert add(0, 0) == 0\n")


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, rel: str, text: str) -> None:
        (self.path / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.path / rel).write_text(text, encoding="utf-8")

    def git(self, *args: str) -> str:
        return subprocess.run([*GIT, *args], cwd=self.path, check=True, capture_output=True, text=True).stdout.strip()

    def commit(self, message: str = "change") -> str:
        self.git("add", "-A")
        self.git("commit", "-qm", message, "--allow-empty")
        return self.git("rev-parse", "HEAD")

    def pytest(self, *args: str, spool: bool = True) -> subprocess.CompletedProcess[str]:
        """The repository's own suite, as a user runs it (the plugin on, unless ``spool`` is False)."""
        env = {k: v for k, v in os.environ.items() if k not in ("TRI_AGENT_SPOOL", "PYTEST_ADDOPTS")}
        off = [] if spool else ["-p", "no:tri_agent"]
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *off, *args],
                              cwd=self.path, env=env, capture_output=True, text=True)

    def spool(self) -> list[Path]:
        return sorted((self.path / ".git" / "tri-agent" / "spool").glob("*.json"))


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    r = Repo(tmp_path / "repo")
    r.path.mkdir()
    r.git("init", "-q")
    r.write("calc.py", CALC)
    r.write("tests/test_calc.py", TESTS)
    r.write("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["."]\n')
    r.write(".gitignore", "__pycache__/\n")
    r.commit("base")
    return r
