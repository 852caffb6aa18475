"""The sealed configuration: what steers a run, and nothing the run itself writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import toy_project

from tri_agent import PolicyViolation
from tri_agent.acceptance._config import load_config
from tri_agent.acceptance._preflight import check_configuration, configuration


def test_a_script_at_the_project_root_seals_itself_and_its_content_files_only(tmp_path: Path) -> None:
    project = toy_project(tmp_path / "toy")
    for item in (project / "scripted").iterdir():
        shutil.move(item, project / item.name)
    config = (project / "acceptance.yaml")
    config.write_text(config.read_text().replace("script: scripted/roles.yaml", "script: roles.yaml"))
    sealed = configuration(project, load_config(project))
    assert "project:roles.yaml" in sealed.files and "project:fixed-grades.py" in sealed.files
    assert not any(label.startswith(("project:target/", "project:exam/tickets")) for label in sealed.files)
    (project / "target" / "grades.py").write_text("# the builder's own code\n")
    (project / "exam" / "tickets" / "builder").mkdir(parents=True)
    (project / "exam" / "tickets" / "builder" / "t-1.md").write_text("# a ticket\n")
    check_configuration(configuration(project, load_config(project)), sealed)  # neither is configuration
    (project / "fixed-grades.py").write_text("# a recording rewritten\n")
    with pytest.raises(PolicyViolation, match=r"project:fixed-grades\.py changed"):
        check_configuration(configuration(project, load_config(project)), sealed)


def test_every_file_under_spec_is_configuration_listed_or_not(tmp_path: Path) -> None:
    """Every role that reads the spec reads all of spec/: an amendment a builder adds between stops would
    steer the examiner and the judge without ever being sealed."""
    project = toy_project(tmp_path / "toy")
    sealed = configuration(project, load_config(project))
    (project / "spec" / "amendment.md").write_text("Averages are rounded half-even; keys are not trimmed.\n")
    with pytest.raises(PolicyViolation, match=r"project:spec/amendment\.md appeared"):
        check_configuration(configuration(project, load_config(project)), sealed)
