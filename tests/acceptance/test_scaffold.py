"""`tri-agent new PROJECT --preset P`: a skeleton that checks out at once, whose exam passes a correct target and
fails a planted bug on exactly the rows it breaks; refusals of an occupied folder and of presets without one."""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tri_agent import ExitCode, UsageError
from tri_agent.acceptance._config import load_config
from tri_agent.acceptance._scaffold import available, scaffold, skeletons_dir
from tri_agent.targets._presets import load_presets

ROOT = Path(__file__).resolve().parents[2]
CLI = Callable[..., tuple[int, str, str]]
PRESETS = available(load_presets(), skeletons_dir())
Key = tuple[str, ...]

# per preset: the target file, one line of it, the planted bug, and which answer rows that bug must fail
BUGS = {
    "warehouse": ("report.py", '    rows.append(line("*ALL*", [amount for _, amount in sales]))\n', "",
                  lambda row: row["region"] == "*ALL*"),
    "document": ("render.py", '    headings = [line.lstrip("#").strip() for line in body.split("\\n") '
                 'if line.startswith("#")]\n', '    headings = [line.strip() for line in body.split("\\n") '
                 'if line.startswith("#")]\n', lambda row: row["part"] == "h2"),
    "api": ("app.py", '        return JSONResponse({"error": "not found"}, status_code=404)\n',
            '        return JSONResponse({"error": "not found"}, status_code=400)\n',
            lambda row: row.get("status") == "404"),
    "gui": ("app.py", """    alert = f'<p role="alert">{html.escape(problem)}</p>' if problem else ""\n""",
            """    alert = f'<p role="alert">{html.escape(problem.upper())}</p>' if problem else ""\n""",
            lambda row: row.get("problem") is not None),
}


def test_every_preset_the_gateway_drives_has_a_skeleton() -> None:
    assert sorted(load_presets()) == PRESETS == ["api", "document", "gui", "warehouse"]


@pytest.mark.parametrize("preset", PRESETS)
def test_new_writes_a_project_that_checks_out_at_once(tmp_path: Path, cli: CLI, preset: str) -> None:
    project = tmp_path / "ledger"
    code, out, err = cli("new", project, "--preset", preset)
    assert code == 0, err
    config = load_config(project)
    assert out.splitlines()[1] == config.consent.cost_note and config.target_kind == preset
    assert config.scope.startswith("ledger: replace") and "no model spend" in config.consent.cost_note
    written = sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file()
                     and ".git" not in p.parts)
    assert {"spec/README.md", "target.yaml", "acceptance.yaml", "scripted/roles.yaml", "exam/exam.yaml",
            "exam/caliber.yaml", "exam/mutations.yaml", "exam/TESTPLAN.md", "exam/SPEC.md",
            "exam/generator/generate.py", "exam/oracle/oracle.py"} <= set(written)
    for rel in written:  # every file says what to replace, and no placeholder is left
        text = (project / rel).read_text("utf-8")
        assert "replace" in text.lower() and "{{" not in text, rel
    menu = {c["id"] for c in _yaml(project / "exam" / "mutations.yaml")["classes"]}
    assert menu <= {c.id for c in load_presets()[preset].mutation_bug_classes}  # drawn from the preset
    assert "committed" in out and _git(project, "status", "--porcelain") == ""
    code, out, err = cli("check", project)
    assert code == 0 and out.startswith("READY"), err


@pytest.mark.parametrize("preset", PRESETS)
def test_the_skeleton_exam_passes_its_target_and_fails_a_planted_bug(tmp_path: Path, cli: CLI, preset: str) -> None:
    project = tmp_path / "p"
    scaffold(project, preset)
    build = tmp_path / "build"
    assert cli("exam", "build", project / "exam", "--seed", "7", "--out", build)[0] == 0
    report = _run_and_score(cli, project, build, tmp_path / "clean")
    answers = report["answers"]
    assert report["verdict"] == "pass" and answers["passed"] == answers["total"] > 10
    assert report["behaviors"]["passed"] == report["behaviors"]["total"] and report["relations"]["verdict"] == "pass"
    name, line, planted, broken = BUGS[preset]
    code = project / "target" / name
    assert code.read_text().count(line) == 1
    code.write_text(code.read_text().replace(line, planted))
    report = _run_and_score(cli, project, build, tmp_path / "buggy", expect=ExitCode.FAIL)
    key = _yaml(build / "caliber.yaml")["key"]
    expected = {_key(row, key) for row in _rows(build / "sealed" / "answers.jsonl") if broken(row)}
    failed = {_key(f["key"], key) for f in report["answers"]["failures"]}
    assert expected and failed == expected
    assert report["answers"]["passed"] == report["answers"]["total"] - len(expected)
    assert report["behaviors"]["passed"] == report["behaviors"]["total"]


def test_new_refuses_a_folder_that_is_not_empty(tmp_path: Path, cli: CLI) -> None:
    (tmp_path / "mine.txt").write_text("keep me\n")
    code, _, err = cli("new", tmp_path, "--preset", "warehouse")
    assert code == ExitCode.USAGE and err.count("\n") == 1
    assert f"{tmp_path} exists and is not empty; choose a new folder name" in err
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]
    code, _, err = cli("new", tmp_path / "mine.txt", "--preset", "warehouse")
    assert code == ExitCode.USAGE and "mine.txt exists and is not a folder" in err
    (tmp_path / "empty").mkdir()
    assert cli("new", tmp_path / "empty", "--preset", "document")[0] == 0


def test_new_refuses_a_preset_without_a_skeleton(tmp_path: Path, cli: CLI) -> None:
    code, _, err = cli("new", tmp_path / "p", "--preset", "nope")
    assert code == ExitCode.USAGE
    assert err == "tri-agent: error: no preset 'nope'; available: api, document, gui, warehouse\n"
    assert not (tmp_path / "p").exists()
    presets = load_presets()
    presets["kiosk"] = presets["warehouse"].model_copy(update={"name": "kiosk", "target_kind": "robot"})
    with pytest.raises(UsageError, match=r"^preset 'kiosk' drives a robot target, which has no skeleton yet; "
                                         r"available: api, document, gui, warehouse$"):
        scaffold(tmp_path / "k", "kiosk", presets=presets)
    presets["ledger"] = presets["warehouse"].model_copy(update={"name": "ledger"})
    with pytest.raises(UsageError, match="'ledger' has no skeleton"):
        scaffold(tmp_path / "l", "ledger", presets=presets)
    assert not (tmp_path / "k").exists() and not (tmp_path / "l").exists()


def test_git_inside_a_work_tree_and_without_an_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "outer")], check=True)
    made = scaffold(tmp_path / "outer" / "p", "warehouse")
    assert made.git.startswith("inside a git work tree already") and not (tmp_path / "outer" / "p" / ".git").exists()
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    made = scaffold(tmp_path / "q", "document")
    assert made.git.startswith("committed") and _git(tmp_path / "q", "log", "--format=%an") == "tri-agent new"


def test_skeletons_ship_in_the_wheel_like_the_presets() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shipped = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert shipped["skeletons"] == "tri_agent/_data/skeletons" and skeletons_dir() == ROOT / "skeletons"


def _run_and_score(cli: CLI, project: Path, build: Path, out: Path, expect: int = ExitCode.PASS) -> Any:
    code, _, err = cli("exam", "run", build, "--target", project / "target.yaml", "--out", out / "run")
    assert code == 0, err
    code, _, err = cli("exam", "score", build, out / "run", "--json", out / "score.json")
    assert code == expect, err
    return json.loads((out / "score.json").read_text())


def _rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _key(row: dict[str, Any], key: list[str]) -> Key:
    return tuple(str(row[k]) for k in key)


def _yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=project, capture_output=True, text=True, check=True).stdout.strip()
