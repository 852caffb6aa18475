"""A project is checked whole before a run writes anything: every problem at once, with the first one's code."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TOY, commit, run_state, toy_project

from tri_agent import ExitCode
from tri_agent.acceptance._check import check_project


def _break(project: Path) -> None:
    config = project / "acceptance.yaml"
    text = config.read_text().replace("target: target.yaml", "target: nothere.yaml")
    config.write_text(text.replace("drivers: {examiner: scripted,", "drivers: {examiner: command,"))
    (project / "exam" / "caliber.yaml").write_text("key: [\n")
    (project / "scripted" / "roles.yaml").write_text((project / "scripted" / "roles.yaml").read_text()
                                                      .replace("content_file: ", "content_file: gone-", 1))
    commit(project, "broken in four places")


def test_a_ready_project_checks_out(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    project = toy_project(tmp_path / "toy")
    assert check_project(project) == []
    code, out, _ = cli("check", project)
    assert code == 0 and out.startswith("READY")


def test_every_problem_is_reported_and_accept_writes_no_evidence(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    project = toy_project(tmp_path / "toy")
    _break(project)
    found = [p.line() for p in check_project(project)]
    assert any("nothere.yaml does not exist" in f for f in found)
    assert any("caliber.yaml:2" in f and "not valid YAML" in f for f in found)
    assert any("gone-" in f and "does not exist" in f for f in found)
    assert any("examiner is a command driver but commands: names no command" in f for f in found)
    code, _, err = cli("check", project)
    assert code == ExitCode.USAGE and err.count("tri-agent: error:") == len(found) >= 4
    code, _, err = cli("accept", project)
    assert code == ExitCode.USAGE and err.count("tri-agent: error:") == len(found)
    state = run_state(project)
    assert not state.store.trail.exists() and not (state.root / "records").exists()


def _configure(project: Path, old: str, new: str) -> None:
    config = project / "acceptance.yaml"
    config.write_text(config.read_text().replace(old, new))


def _lines(project: Path) -> list[str]:
    commit(project, "changed")  # an uncommitted change is a problem of its own (tested with preflight)
    return [p.line() for p in check_project(project)]


SCRIPTED = "drivers: {examiner: scripted, builder: scripted, tester: scripted, judge: scripted}"


def test_each_driver_is_checked_for_what_it_needs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    project = toy_project(tmp_path / "toy")
    _configure(project, SCRIPTED, "drivers: {examiner: command, builder: command, tester: anthropic, judge: openai}\n"
                                  "commands: {builder: [no-such-agent-xyz, --flag]}")
    assert _lines(project) == [
        "builder's command 'no-such-agent-xyz' is not installed or not found; install it, or give its path",
        "examiner is a command driver but commands: names no command for it; "
        "add commands: {examiner: [PROGRAM, ARGS...]}",
        "judge is driven by openai, but OPENAI_API_KEY or OPENAI_BASE_URL is not set; "
        "export the credential (tri-agent doctor shows which are set)",
        "tester is driven by anthropic, but ANTHROPIC_API_KEY is not set; "
        "export the credential (tri-agent doctor shows which are set)"]
    (project / "agent.sh").write_text("#!/bin/sh\n")
    _configure(project, "commands: {builder: [no-such-agent-xyz, --flag]}",
               "commands: {builder: [agent.sh], examiner: [python3, -c, pass]}")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert _lines(project) == []


def test_roles_not_named_are_scripted_and_need_the_script(tmp_path: Path) -> None:
    project = toy_project(tmp_path / "toy")
    _configure(project, SCRIPTED, "drivers: {examiner: command}\ncommands: {examiner: [python3]}")
    _configure(project, "script: scripted/roles.yaml\n", "")
    assert _lines(project) == ["builder, judge, tester scripted, but acceptance.yaml names no script; "
                               "set script: to the recorded role actions, or choose other drivers"]
    _configure(project, "drivers: {examiner: command}\ncommands: {examiner: [python3]}",
               "drivers: {examiner: command, builder: command, tester: command, judge: command}\n"
               "commands: {builder: [python3], tester: [python3], judge: [python3], examiner: [python3]}")
    assert _lines(project) == []


def test_a_file_the_script_names_must_exist_beside_it(tmp_path: Path) -> None:
    project = toy_project(tmp_path / "toy")
    script = project.resolve() / "scripted" / "roles.yaml"
    script.write_text(script.read_text().replace("content_file: examiner-round-2/generate.py",
                                                 "content_file: gone.py"))
    assert _lines(project) == [f"{script}: the script names gone.py, which does not exist; "
                               "add the file beside the script, or fix content_file"]


def test_an_exam_folder_that_is_not_there_is_one_problem(tmp_path: Path) -> None:
    project = toy_project(tmp_path / "toy")
    _configure(project, "exam: exam\n", "exam: no-exam\n")
    assert _lines(project) == [f"the exam folder {project.resolve() / 'no-exam'} does not exist; "
                               "set exam: in acceptance.yaml"]


def test_the_exam_its_caliber_and_its_menu_are_each_checked(tmp_path: Path) -> None:
    project = toy_project(tmp_path / "toy")
    exam = project.resolve() / "exam"
    for name in ("exam.yaml", "caliber.yaml", "mutations.yaml"):
        (exam / name).write_text("schema_version: 1\nsurprise: [1\n")
    found = _lines(project)
    assert [f.split(":")[0] for f in found] == [str(exam / n) for n in ("exam.yaml", "caliber.yaml",
                                                                         "mutations.yaml")]
    (exam / "exam.yaml").write_text((TOY / "exam" / "exam.yaml").read_text())
    (exam / "mutations.yaml").unlink()
    assert [f.split(":")[0] for f in _lines(project)] == [str(exam / "caliber.yaml")]


def test_a_failed_preflight_check_is_named(tmp_path: Path) -> None:
    project = toy_project(tmp_path / "toy")
    _configure(project, "spec: [spec/README.md]", "spec: [spec/NOPE.md]")
    assert _lines(project) == ["preflight: spec readable: spec/NOPE.md does not exist in the project; "
                               "point --spec at the spec files"]


@pytest.mark.parametrize("store", ["evidence", "./target/../store"])
def test_a_store_inside_the_project_is_a_problem_as_accept_says(tmp_path: Path, store: str) -> None:
    project = toy_project(tmp_path / "toy")
    _configure(project, "exam: exam\n", f"exam: exam\nevidence: {store}\n")
    [line] = _lines(project)
    assert line.startswith("the evidence store ") and "lies inside the project" in line
