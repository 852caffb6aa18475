"""The patch-gate example end to end: every agent patch of examples/patch-gate ends with the exit code its README
documents, for the reason it gives, and the honest one passes the verdict in the OS sandbox."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tri_agent._errors import ExitCode

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "patch-gate"


def _maker() -> Any:
    spec = importlib.util.spec_from_file_location("patch_gate_example", EXAMPLE / "make_repo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("patch-gate") / "invoicing"
    _maker().make(dest)
    return dest


SCENARIOS = [s.name for s in _maker().SCENARIOS]


def test_the_readme_documents_every_scenario_with_its_exit_code() -> None:
    readme = (EXAMPLE / "README.md").read_text()
    for s in _maker().SCENARIOS:
        assert f"| `patch/{s.name}` | {s.exit_code} |" in readme, s.name


@pytest.mark.parametrize("name", SCENARIOS)
def test_each_patch_ends_with_its_documented_exit_code(repo: Path, name: str, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    row = next(r for r in json.loads((repo / "scenarios.json").read_text()) if r["name"] == name)
    code, out, err = cli("gate", "check", row["base"], row["head"], "--repo", repo, "--json", tmp_path / "r.json",
                         "--junit", tmp_path / "r.xml")
    assert code == row["exit_code"], (out, err)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["exit_code"] == code and "<testsuites" in (tmp_path / "r.xml").read_text()
    if code == ExitCode.PASS:
        assert report["verdict"]["failures"] == [] and report["verdict"]["layers"]
        assert len(report["verdict"]["improvements"]) >= 3  # the capped rate: fixed where the base failed
    elif code == ExitCode.FAIL:
        assert report["policy"]["findings"] == [] and report["verdict"]["failures"]
    else:
        assert report["verdict"] is None and report["policy"]["findings"][0].startswith(f"{code}: ")


def test_a_patch_file_is_judged_as_its_commits_are(repo: Path, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    from conftest import GIT

    for name, want in (("honest-fix", ExitCode.PASS), ("code-skips-itself", ExitCode.GATE_MARKS)):
        patch = subprocess.run([*GIT, "diff", "--binary", "main", f"patch/{name}"], cwd=repo, capture_output=True,
                               check=True).stdout
        (tmp_path / f"{name}.patch").write_bytes(patch)
        code, out, err = cli("gate", "check", "main", "--patch", tmp_path / f"{name}.patch", "--repo", repo)
        assert code == want, (out, err)
