"""The wheel carries the package and its data folders (roles/, presets/)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import tri_agent

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_ships_package_roles_and_presets(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path), str(ROOT)], check=True, capture_output=True)
    [wheel] = tmp_path.glob("tri_agent-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "tri_agent/_cli.py" in names
    assert "tri_agent/_data/roles/README.md" in names and "tri_agent/_data/presets/README.md" in names
    assert {"tri_agent/_data/roles/tester.md", "tri_agent/_data/presets/warehouse.yaml", "tri_agent/_data/SKILL.md"} \
        <= set(names)
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)


def test_public_names_resolve() -> None:
    for name in tri_agent.__all__:
        assert getattr(tri_agent, name) is not None
