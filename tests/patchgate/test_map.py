"""The test map: one class per file, the unnamed ones diagnostic, and no scoring file that slips in unseen."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import GIT
from test_gatefile import GATE

from tri_agent import MalformedInput, PolicyViolation
from tri_agent.patchgate import GATE_FILE, classify, is_test_file, map_against, map_of, parse_gate

FILES = {
    "src/pricing.py": "RATE = 3\n",
    "tests/scoring/properties/test_totals.py": "def test_t():\n    assert True\n",
    "tests/scoring/fixtures/orders.json": "[]\n",
    "tests/scoring/flake_ledger.json": '{"version": 1, "entries": []}\n',
    "tests/diagnostic/test_ui.py": "def test_ui():\n    assert True\n",
    "tests/test_misc.py": "def test_misc():\n    assert True\n",
    "tests/conftest.py": "",
    "tests/held_out/test_hidden.py": "def test_h():\n    assert True\n",
    "README.md": "a repository\n",
}


def _repo(root: Path, files: dict[str, str] = FILES, gate: str = GATE) -> Path:
    for rel, text in {**files, GATE_FILE: gate}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*GIT, *args], cwd=root, check=True, capture_output=True)
    return root


def test_every_test_file_gets_one_class_and_a_file_no_glob_names_is_diagnostic(tmp_path: Path) -> None:
    found = map_of(_repo(tmp_path))
    classes = {e.path: (e.cls, e.glob, e.held_out) for e in found.entries}
    assert classes == {
        "tests/scoring/properties/test_totals.py": ("scoring_properties", "tests/scoring/properties/**/*.py", False),
        "tests/scoring/fixtures/orders.json": ("scoring_fixtures", "tests/scoring/fixtures/**", False),
        "tests/scoring/flake_ledger.json": ("ledger", None, False),
        "tests/diagnostic/test_ui.py": ("diagnostic", "tests/diagnostic/**/*.py", False),
        "tests/test_misc.py": ("diagnostic", None, False),  # unclassified: diagnostic, never scored
        "tests/conftest.py": ("diagnostic", None, False),
        "tests/held_out/test_hidden.py": ("diagnostic", None, True),
    }
    assert found.scoring() == {"tests/scoring/properties/test_totals.py", "tests/scoring/fixtures/orders.json"}
    assert found.revision == "working tree" and map_of(tmp_path, "HEAD").entries == found.entries


def test_a_file_two_classes_name_is_refused_with_both_globs(tmp_path: Path) -> None:
    gate = parse_gate(GATE.replace('diagnostic: ["tests/diagnostic/**/*.py"]',
                                   'diagnostic: ["tests/**/test_*.py"]'), GATE_FILE)
    with pytest.raises(MalformedInput) as err:
        classify(list(FILES), gate, "x")
    assert err.value.exit_code == 3
    assert ("tests/scoring/properties/test_totals.py is in two classes: diagnostic ('tests/**/test_*.py') and "
            "scoring_properties ('tests/scoring/properties/**/*.py')") in str(err.value)


def test_a_scoring_file_added_without_a_change_of_the_map_is_refused(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "tests/scoring/properties/test_more.py").write_text("def test_m():\n    assert True\n")
    (repo / "tests/diagnostic/test_more_ui.py").write_text("def test_u():\n    assert True\n")
    with pytest.raises(PolicyViolation) as err:
        map_against(repo, "HEAD")
    assert err.value.exit_code == 5 and err.value.message == (
        "tests/scoring/properties/test_more.py joined the scoring surface since HEAD without a change of "
        "tri-agent-gate.yaml")
    (repo / "tests/scoring/properties/test_more.py").unlink()
    assert "tests/diagnostic/test_more_ui.py" in {e.path for e in map_against(repo, "HEAD").entries}
    (repo / "tests/scoring/properties/test_more.py").write_text("def test_m():\n    assert True\n")
    (repo / GATE_FILE).write_text(GATE.replace("seed: 7", "seed: 8"))  # the map changed: a reviewer sees it
    assert "tests/scoring/properties/test_more.py" in map_against(repo, "HEAD").scoring()


@pytest.mark.parametrize(("path", "test"), [("tests/test_a.py", True), ("a_test.py", True), ("x/conftest.py", True),
                                            ("tests/helpers.py", False), ("test_a.txt", False)])
def test_test_files_are_named_as_pytest_names_them(path: str, test: bool) -> None:
    assert is_test_file(path) is test


def test_the_command_lists_the_map_and_writes_it(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    repo = _repo(tmp_path / "repo")
    code, out, _ = cli("gate", "map", repo, "--json", tmp_path / "map.json")
    assert code == 0 and "scoring_properties tests/scoring/properties/test_totals.py" in out
    assert "diagnostic         tests/test_misc.py  (unclassified)" in out
    assert "MAPPED 7 test files of working tree: " in out
    assert len(json.loads((tmp_path / "map.json").read_text())["entries"]) == 7
    code, _, err = cli("gate", "map", repo, "--rev", "no-such-rev")
    assert code == 2 and "no-such-rev" in err


def test_a_glob_that_names_no_file_is_refused_and_so_is_a_folder_inside_the_repository(tmp_path: Path) -> None:
    from tri_agent import UsageError

    repo = _repo(tmp_path, gate=GATE.replace('held_out: ["tests/held_out/**"]', 'held_out: ["tests/held_out"]'))
    with pytest.raises(MalformedInput, match="held_out glob 'tests/held_out' names no file") as err:
        map_of(repo, "HEAD")
    assert err.value.exit_code == 3 and "folder/**" in err.value.hint
    with pytest.raises(UsageError, match="not its top"):
        map_of(repo / "tests", "HEAD")
