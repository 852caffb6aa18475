"""A project is checked whole before a run writes anything: every problem at once, with the first one's code."""

from __future__ import annotations

from pathlib import Path

from conftest import commit, run_state, toy_project

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
