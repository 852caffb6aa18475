"""gate check's policy: each rule refuses what it names with its own exit code, and an honest patch passes it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import GIT
from test_map import FILES, _repo

from tri_agent._errors import ExitCode
from tri_agent.patchgate import GATE_FILE, Ledger, check_policy, parse_ledger
from tri_agent.patchgate._policy import Finding, ledger_growth

EVIDENCE = "sha256:" + "ab" * 32
ENTRY = {"test_id": "tests/diagnostic/test_ui.py::test_ui", "flake_class": "timing", "evidence": EVIDENCE}
WINDOW = {"runs": 20, "command": ["-q", "-p", "no:xdist", "tests/scoring"], "surface_sha256": "cd" * 32,
          "log": "sha256:" + "ef" * 32}
LEDGER = json.dumps({"schema_version": 1, "entries": [ENTRY]}) + "\n"


def _commit(repo: Path, changes: dict[str, str | None], author: str = "dev@people.example.com") -> None:
    for rel, text in changes.items():
        if text is None:
            (repo / rel).unlink()
        else:
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text)
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True, capture_output=True)
    subprocess.run(["git", "-c", "user.name=someone", "-c", f"user.email={author}", "commit", "-qm", "patch"],
                   cwd=repo, check=True, capture_output=True)


def _patched(tmp: Path, changes: dict[str, str | None], author: str = "agent-7@agents.example.com") -> list[Finding]:
    repo = _repo(tmp, {**FILES, "tests/scoring/flake_ledger.json": LEDGER})
    subprocess.run([*GIT, "tag", "base"], cwd=repo, check=True)
    _commit(repo, changes, author)
    return check_policy(repo, "base", "HEAD")[1]


def test_an_honest_patch_breaks_no_rule(tmp_path: Path) -> None:
    found = _patched(tmp_path, {"src/pricing.py": "RATE = 4\n", "tests/diagnostic/test_new.py": "def test_n(): pass\n"})
    assert found == []


@pytest.mark.parametrize(("changes", "codes", "named"), [
    ({"tests/scoring/properties/test_totals.py": "def test_t():\n    pass\n"}, [10, 11], "test_totals.py"),
    ({"tests/scoring/fixtures/orders.json": '[{"total": 1}]\n'}, [10, 11], "orders.json"),
    ({"tests/held_out/test_guess.py": "def test_g(): pass\n"}, [10, 11], "never holds it"),
    ({GATE_FILE: (Path(__file__).parent / "test_gatefile.py").read_text().split('GATE = """')[1].split('"""')[0]
      .replace("seed: 7", "seed: 8")}, [10, 11], GATE_FILE),
    ({"tests/scoring/flake_ledger.json": json.dumps({"schema_version": 1, "entries": []})}, [10, 11, 13],
     "removed without a 'removed' record"),
])
def test_each_rule_refuses_with_its_own_code(tmp_path: Path, changes: dict[str, str], codes: list[int],
                                             named: str) -> None:
    found = _patched(tmp_path, changes)
    assert sorted({int(f.code) for f in found}) == codes and any(named in f.line for f in found)


HOOK = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n")


@pytest.mark.parametrize(("changes", "named"), [
    ({"tests/conftest.py": HOOK}, "tests/conftest.py"),  # above the scoring tree: a hook that turns red green
    ({"conftest.py": HOOK}, "conftest.py"),
    ({"tests/pytest.ini": "[pytest]\naddopts = --deselect=tests/scoring/properties/test_totals.py::test_t\n"},
     "tests/pytest.ini"),
    ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-p no:cacheprovider'\n"}, "pyproject.toml"),
    ({"tests/scoring/properties/conftest.py": HOOK}, "tests/scoring/properties/conftest.py"),
    ({"tests/scoring/properties/helpers.py": "RATE = 3\n"}, "tests/scoring/properties/helpers.py"),
    ({"tests/__init__.py": "import builtins\n"}, "tests/__init__.py"),
    ({"src/evil.pth": "import os\n"}, "src/evil.pth"),
])
def test_what_steers_the_scoring_run_is_frozen_with_the_surface(tmp_path: Path, changes: dict[str, str],
                                                                named: str) -> None:
    found = _patched(tmp_path, changes)
    assert ExitCode.GATE_SURFACE in {f.code for f in found}
    assert any(f.line.startswith(f"{named}: the scoring surface") for f in found)


def test_a_path_that_differs_only_in_case_is_still_forbidden(tmp_path: Path) -> None:
    found = _patched(tmp_path, {"tests/HELD_OUT/conftest.py": HOOK})
    assert found[0].code == ExitCode.GATE_FORBIDDEN and "never holds it" in found[0].line


def test_a_symlink_into_the_scoring_tree_is_a_change_of_the_surface(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {**FILES, "tests/scoring/flake_ledger.json": LEDGER, "agent/test_mine.py": "x = 1\n"})
    subprocess.run([*GIT, "tag", "base"], cwd=repo, check=True)
    (repo / "tests/scoring/properties/more").symlink_to("../../../agent")
    _commit(repo, {})
    found = check_policy(repo, "base", "HEAD")[1]
    assert any(f.code == ExitCode.GATE_SURFACE and f.line.startswith("tests/scoring/properties/more:") for f in found)


def test_a_head_that_does_not_descend_from_the_base_is_refused(tmp_path: Path) -> None:
    from tri_agent import UsageError

    repo = _repo(tmp_path, {**FILES, "tests/scoring/flake_ledger.json": LEDGER})
    subprocess.run([*GIT, "tag", "base"], cwd=repo, check=True)
    subprocess.run([*GIT, "checkout", "-q", "--orphan", "other"], cwd=repo, check=True)
    _commit(repo, {"src/pricing.py": "RATE = 9\n"})
    with pytest.raises(UsageError, match="does not descend from"):
        check_policy(repo, "base", "HEAD")


def test_a_forbidden_glob_is_named(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {**FILES, "tests/scoring/flake_ledger.json": LEDGER})
    gate = (repo / GATE_FILE).read_text() + 'forbidden: ["ci/**"]\n'
    _commit(repo, {GATE_FILE: gate, "ci/run.sh": "pytest\n"})
    subprocess.run([*GIT, "tag", "base"], cwd=repo, check=True)
    _commit(repo, {"ci/run.sh": "pytest || true\n"}, "agent@agents.example.com")
    [finding] = check_policy(repo, "base", "HEAD")[1]
    assert finding.code == ExitCode.GATE_FORBIDDEN and finding.line == (
        "ci/run.sh: the patch touched a path forbidden to it ('ci/**')")


def test_a_ledger_last_written_by_an_agent_is_refused_even_when_the_patch_leaves_it_alone(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {**FILES, "tests/scoring/flake_ledger.json": LEDGER})
    grown = json.dumps({"schema_version": 1, "entries": [ENTRY, {**ENTRY, "test_id": "tests/test_misc.py::t"}]})
    _commit(repo, {"tests/scoring/flake_ledger.json": grown}, "bot@AGENTS.example.com")  # merged before
    subprocess.run([*GIT, "tag", "base"], cwd=repo, check=True)
    _commit(repo, {"src/pricing.py": "RATE = 5\n"})
    [finding] = check_policy(repo, "base", "HEAD")[1]
    assert finding.code == ExitCode.GATE_LEDGER and "last written by bot@AGENTS.example.com, an agent" in finding.line


@pytest.mark.parametrize(("entry", "message"), [
    ({**ENTRY, "flake_class": "weather"}, "flake_class"),
    ({**ENTRY, "evidence": "md5:abc"}, "evidence"),
    ({**ENTRY, "expires": "2027-01-01"}, "unknown key 'expires'"),
])
def test_a_ledger_entry_outside_the_closed_rules_is_refused_naming_the_field(entry: dict[str, str],
                                                                            message: str) -> None:
    found = parse_ledger(json.dumps({"schema_version": 1, "entries": [entry]}), "ledger.json")
    assert isinstance(found, Finding) and found.code == ExitCode.GATE_LEDGER and message in found.line
    assert isinstance(parse_ledger("{", "ledger.json"), Finding)


def test_the_ledger_only_grows_and_a_removal_keeps_the_evidence() -> None:
    before = Ledger.model_validate({"entries": [ENTRY]})
    assert ledger_growth(before, Ledger(), "l.json")[0].line.startswith("l.json: entry 'tests/diagnostic/")
    removed = {"test_id": ENTRY["test_id"], "evidence": EVIDENCE, "reason": "stable again", "stability": WINDOW}
    assert ledger_growth(before, Ledger.model_validate({"removed": [removed]}), "l.json") == []
    other = {**removed, "evidence": "sha256:" + "cd" * 32}  # the old evidence must be kept, not replaced
    assert len(ledger_growth(before, Ledger.model_validate({"removed": [other]}), "l.json")) == 1


def test_the_command_exits_with_the_first_rules_code_or_runs_the_verdict(tmp_path: Path,
                                                                            cli) -> None:  # type: ignore[no-untyped-def]
    repo = _repo(tmp_path / "r", {**FILES, "tests/scoring/flake_ledger.json": LEDGER})
    subprocess.run([*GIT, "tag", "base"], cwd=repo, check=True)
    _commit(repo, {"src/pricing.py": "RATE = 6\n"})
    code, out, _ = cli("gate", "check", "base", "HEAD", "--repo", repo)
    assert code == ExitCode.PASS and "PASSED" in out and "policy held; tests 1/1" in out
    _commit(repo, {"tests/scoring/fixtures/orders.json": "[1]\n"})
    code, out, err = cli("gate", "check", "base", "HEAD", "--repo", repo, "--json", tmp_path / "p.json")
    assert code == ExitCode.GATE_FORBIDDEN and "refused 11: tests/scoring/fixtures/orders.json" in out
    assert "broke 2 rule(s) of the gate" in err
    report = json.loads((tmp_path / "p.json").read_text())
    assert len(report["policy"]["findings"]) == 2 and report["verdict"] is None and report["exit_code"] == 10


SCHEMA = '{"type": "array", "items": {"type": "object", "required": ["total"]}}\n'


def _locked(tmp: Path, fixture: str, lock: str | None = None) -> list[Finding]:
    import hashlib

    gate = (Path(__file__).parent / "test_gatefile.py").read_text().split('GATE = """')[1].split('"""')[0]
    gate += "fixtures: {schema: tests/scoring/fixtures.schema.json, lock: tests/scoring/fixtures.lock}\n"
    files = {**FILES, "tests/scoring/flake_ledger.json": LEDGER, "tests/scoring/fixtures/orders.json": fixture,
             "tests/scoring/fixtures.schema.json": SCHEMA,
             "tests/scoring/fixtures.lock": lock or "sha256:" + hashlib.sha256(SCHEMA.encode()).hexdigest() + "\n"}
    repo = _repo(tmp, files, gate)
    return check_policy(repo, "HEAD", "HEAD")[1]


@pytest.mark.parametrize(("fixture", "lock", "message"), [
    ('[{"total": 1}]\n', None, None),
    ('[{"sum": 1}]\n', None, "tests/scoring/fixtures/orders.json: 0: 'total' is a required property"),
    ("[{total: 1}]\n", None, "tests/scoring/fixtures/orders.json: not JSON"),
    ('[{"total": 1}]\n', "sha256:" + "0" * 64, "tests/scoring/fixtures.lock: does not hold the SHA-256"),
])
def test_the_fixture_lock_pins_the_schema_and_every_fixture_is_valid_under_it(
        tmp_path: Path, fixture: str, lock: str | None, message: str | None) -> None:
    found = _locked(tmp_path, fixture, lock)
    if message is None:
        assert found == []
    else:
        assert [f.code for f in found] == [ExitCode.GATE_FIXTURES] and found[0].line.startswith(message)


def test_a_file_name_that_is_not_utf8_or_holds_a_newline_is_refused_without_forging_a_line(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {**FILES, "tests/scoring/flake_ledger.json": LEDGER})
    subprocess.run([*GIT, "tag", "base"], cwd=repo, check=True)
    import os

    names = [os.fsdecode(b"tests/scoring/fixtures/x\xff.json"), "tests/scoring/fixtures/a\nPOLICY OK: forged.json"]
    for name in names:
        (repo / name).write_text("[]\n")
    _commit(repo, {".gitattributes": "tests/scoring/properties/*.py text eol=crlf\n"})
    report, found = check_policy(repo, "base", "HEAD")
    assert {f.code for f in found} == {ExitCode.GATE_FORBIDDEN, ExitCode.GATE_SURFACE}
    assert all("\n" not in line for line in report.findings) and report.model_dump_json()  # serialisable
    assert any(line.startswith("11: .gitattributes: the scoring surface gained it") for line in report.findings)
