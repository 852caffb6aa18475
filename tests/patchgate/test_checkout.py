"""gate workspace: the agent's checkout holds nothing that scores it, in no file and in no git object."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import GIT
from test_gatefile import GATE
from test_map import FILES, _repo

from tri_agent import UsageError
from tri_agent.patchgate import GATE_FILE, checkout

SECRET = "a held-out expectation: total == 1234.56"
MORE = {**FILES, "tests/held_out/test_hidden.py": f"# {SECRET}\n", "tests/scoring/corpus/totals/case-1.json": "{}\n",
        "tests/scoring/fixtures.schema.json": "{}\n", "tests/scoring/fixtures.lock": "sha256:0\n", "run.sh": "echo\n"}
GATED = GATE + "fixtures: {schema: tests/scoring/fixtures.schema.json, lock: tests/scoring/fixtures.lock}\n" \
               "corpus: tests/scoring/corpus\n"


def test_the_checkout_omits_everything_that_scores_and_keeps_no_history(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", MORE, GATED)
    os.chmod(repo / "run.sh", 0o755)
    (repo / "link").symlink_to("tests/held_out/test_hidden.py")
    for args in (["add", "-A"], ["commit", "-qm", "an executable and a link"]):
        subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True)
    made = checkout(repo, "HEAD", tmp_path / "ws")
    ws = tmp_path / "ws"
    kept = sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if p.is_file() and ".git" not in p.parts)
    assert kept == ["README.md", "run.sh", "src/pricing.py", "tests/conftest.py", "tests/diagnostic/test_ui.py",
                    "tests/test_misc.py"]
    assert made.files == 6 and made.omitted == 8 and made.not_written == ["link"]
    assert os.access(ws / "run.sh", os.X_OK) and not (ws / GATE_FILE).exists()
    log = subprocess.run(["git", "-C", str(ws), "rev-list", "--all", "--objects"], capture_output=True, text=True,
                         check=True).stdout
    assert len(subprocess.run(["git", "-C", str(ws), "rev-list", "--all"], capture_output=True, text=True,
                              check=True).stdout.split()) == 1  # one commit: no history holds what was left out
    assert "held_out" not in log and "scoring" not in log and "flake_ledger" not in log
    objects = subprocess.run(["git", "-C", str(ws), "cat-file", "--batch-all-objects", "--batch"], capture_output=True,
                             check=True).stdout
    assert SECRET.encode() not in objects and b"1234.56" not in objects
    again = checkout(repo, "HEAD", tmp_path / "ws2")
    assert again.commit == made.commit  # the same base, the same checkout
    assert "tests/held_out" not in json.dumps(made.model_dump())  # the record names nothing it left out


def test_a_checkout_never_writes_over_files(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("mine\n")
    with pytest.raises(UsageError, match="already holds files") as err:
        checkout(repo, "HEAD", tmp_path / "busy")
    assert err.value.exit_code == 2 and (tmp_path / "busy" / "x").read_text() == "mine\n"
    with pytest.raises(UsageError, match="no-such-rev"):
        checkout(repo, "no-such-rev", tmp_path / "new")


def test_the_command_writes_the_checkout_and_its_record(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    repo = _repo(tmp_path / "repo")
    code, out, _ = cli("gate", "workspace", "HEAD", tmp_path / "ws", "--repo", repo, "--json", tmp_path / "c.json")
    assert code == 0 and out.startswith("WROTE 5 files of ") and "left out" in out
    assert json.loads((tmp_path / "c.json").read_text())["files"] == 5


def test_the_callers_git_environment_never_points_the_checkout_elsewhere(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path / "repo")
    before = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))  # every git command would act on the source repository
    made = checkout(repo, "HEAD", tmp_path / "ws")
    monkeypatch.delenv("GIT_DIR")
    after = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert before == after and made.files == 5 and (tmp_path / "ws" / ".git").is_dir()
