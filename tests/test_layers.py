"""The package's layering (import-linter's contract in pyproject.toml) holds, and the check bites."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(project: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(project))
    return subprocess.run([str(LINT), "--no-cache", "--no-logo", str(project / "pyproject.toml")], cwd=project,
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "tri_agent", tmp_path / "tri_agent", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_package_keeps_its_layers() -> None:
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 kept, 0 broken" in done.stdout


@pytest.mark.parametrize(("module", "planted"), [
    ("evidence/_seal.py", "from ..acceptance import _gate"),        # the bottom reaching the top
    ("scoring/_tables.py", "from ..evidence import _manifest"),     # two independent siblings
    ("targets/_gateway.py", "from ..mutation import _gate"),        # one layer up
    ("_errors.py", "from . import _yamldoc"),                       # the root of the exception tree
])
def test_a_planted_upward_import_breaks_the_contract(copy: Path, module: str, planted: str) -> None:
    path = copy / "tri_agent" / module
    path.write_text(path.read_text() + f"\n{planted}  # planted\n")
    done = _lint(copy)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0 kept, 1 broken" in done.stdout
    importer = "tri_agent." + module.removesuffix(".py").replace("/", ".")
    assert importer in done.stdout


def test_a_new_module_outside_every_layer_breaks_the_contract(copy: Path) -> None:
    (copy / "tri_agent" / "_stray.py").write_text('"""Belongs to no layer."""\n')
    done = _lint(copy)
    assert done.returncode == 1
    assert "tri_agent._stray" in done.stdout
