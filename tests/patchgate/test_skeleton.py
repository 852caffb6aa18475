"""skeletons/patch-gate: the gate file, ledger, CI workflow and pre-push hook a repository copies, in working order."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml
from conftest import GIT

from tri_agent._errors import ExitCode
from tri_agent.patchgate import GATE_FILE, load_gate

SKELETON = Path(__file__).resolve().parents[2] / "skeletons" / "patch-gate"


def _adopted(tmp: Path) -> Path:
    shutil.copytree(SKELETON, tmp, dirs_exist_ok=True)
    for rel, text in {"SPEC.md": "rates are capped\n", "src/m.py": "X = 1\n",
                      "tests/scoring/properties/test_p.py": "def test_p():\n    assert True\n",
                      "tests/scoring/fixtures/f.json": "[]\n", "tests/diagnostic/test_d.py": "def test_d(): pass\n",
                      "tests/held_out/test_h.py": "def test_h():\n    assert True\n"}.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "adopt the gate"], ["tag", "base"]):
        subprocess.run([*GIT, *args], cwd=tmp, check=True, capture_output=True)
    return tmp


def test_a_repository_that_adopts_the_skeleton_is_gated(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    repo = _adopted(tmp_path)
    assert load_gate(repo).corpus == "tests/scoring/corpus"
    (repo / "src/m.py").write_text("X = 2\n")
    subprocess.run([*GIT, "commit", "-qam", "patch"], cwd=repo, check=True, capture_output=True)
    code, out, _ = cli("gate", "check", "base", "HEAD", "--repo", repo, "--policy-only")
    assert code == ExitCode.NOT_CERTIFIED and "POLICY HELD" in out  # the hook's exit 9: half a gate passes nothing
    code, out, _ = cli("gate", "check", "base", "HEAD", "--repo", repo)
    assert code == ExitCode.PASS and "tests 2/2" in out
    (repo / ".github/workflows/gate.yml").write_text("name: gone\n")
    subprocess.run([*GIT, "commit", "-qam", "drop the gate job"], cwd=repo, check=True, capture_output=True)
    code, _, _ = cli("gate", "check", "base", "HEAD", "--repo", repo, "--policy-only")
    assert code == ExitCode.GATE_FORBIDDEN  # the workflow is forbidden to a patch


def test_the_workflow_and_the_hook_run_gate_check() -> None:
    workflow = yaml.safe_load((SKELETON / ".github/workflows/gate.yml").read_text())
    steps = " ".join(str(s.get("run", "")) for s in workflow["jobs"]["gate"]["steps"])
    assert "tri-agent gate check" in steps and "--junit gate.xml" in steps and "bubblewrap" in steps
    hook = yaml.safe_load((SKELETON / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"][0]
    assert "--policy-only; test $? -eq 9" in hook["entry"] and hook["stages"] == ["pre-push"]
    assert (SKELETON / GATE_FILE).is_file()
