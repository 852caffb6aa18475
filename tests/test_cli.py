"""The CLI: documented exit codes, one-line errors, exported schemas that validate real outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from conftest import ANSWERS, CALIBER, write_csv, write_jsonl

from tri_agent import ExitCode

Cli = Callable[..., tuple[int, str, str]]


def _files(tmp: Path, actual: list[dict[str, object]] | None = None) -> tuple[Path, Path, Path]:
    (tmp / "c.yaml").write_text(CALIBER)
    return tmp / "c.yaml", write_jsonl(tmp / "a.jsonl", ANSWERS), write_csv(tmp / "x.csv", actual or ANSWERS)


def test_score_pass_and_fail_codes(tmp_path: Path, cli: Cli) -> None:
    cal, ans, act = _files(tmp_path)
    code, out, _ = cli("score", "--caliber", cal, "--answers", ans, "--actual", act, "--json", tmp_path / "r.json",
                       "--md", tmp_path / "r.md")
    assert code == ExitCode.PASS and out.startswith("PASS answers 3/3")
    assert json.loads((tmp_path / "r.json").read_text())["verdict"] == "pass"
    assert (tmp_path / "r.md").read_text().startswith("# Score report: PASS")
    bad = [dict(r) for r in ANSWERS]
    bad[0]["n"] = "7"
    write_csv(act, bad)
    code, out, _ = cli("score", "--caliber", cal, "--answers", ans, "--actual", act)
    assert code == ExitCode.FAIL and "blocker: answers: 2/3" in out


def test_malformed_is_exit_3_on_one_line(tmp_path: Path, cli: Cli) -> None:
    cal, ans, act = _files(tmp_path)
    ans.write_text(ans.read_text().replace("2.35", "two"))  # the answer key is the exam's: its defect is exit 3
    code, out, err = cli("score", "--caliber", cal, "--answers", ans, "--actual", act)
    assert code == ExitCode.MALFORMED and out == ""
    assert err.count("\n") == 1 and f"{ans}:1: field 'avg'" in err and "Traceback" not in err


def test_the_targets_unreadable_value_is_a_red_score_not_malformed_input(tmp_path: Path, cli: Cli) -> None:
    cal, ans, act = _files(tmp_path)
    act.write_text(act.read_text().replace("2.35", "two"))
    code, out, err = cli("score", "--caliber", cal, "--answers", ans, "--actual", act, "--md", tmp_path / "r.md")
    assert code == ExitCode.FAIL and "blocker: answers: 2/3" in out and err == ""
    assert "unreadable_value" in (tmp_path / "r.md").read_text()


def test_an_existing_output_file_is_never_replaced_without_force(tmp_path: Path, cli: Cli) -> None:
    cal, ans, act = _files(tmp_path)
    report = tmp_path / "r.json"
    report.write_text("earlier evidence\n")
    code, _, err = cli("score", "--caliber", cal, "--answers", ans, "--actual", act, "--json", report)
    assert code == ExitCode.USAGE and "already exists" in err and "--force" in err
    assert report.read_text() == "earlier evidence\n"
    code, _, _ = cli("score", "--caliber", cal, "--answers", ans, "--actual", act, "--json", report, "--force")
    assert code == ExitCode.PASS and json.loads(report.read_text())["verdict"] == "pass"
    assert cli("schema", "--out", tmp_path / "s")[0] == 0 and cli("schema", "--out", tmp_path / "s")[0] == 2


def test_usage_errors_are_exit_2(tmp_path: Path, cli: Cli) -> None:
    assert cli("score", "--caliber", "x")[0] == ExitCode.USAGE
    assert cli("nonsense")[0] == ExitCode.USAGE
    code, _, err = cli("seal", tmp_path / "missing")
    assert code == ExitCode.USAGE and "is not a directory" in err


def test_seal_verify_tamper_codes(tmp_path: Path, cli: Cli) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.txt").write_text("a\n")
    code, digest, _ = cli("seal", d)
    assert code == 0 and len(digest.strip()) == 64
    assert cli("verify", d, "--expect", digest.strip())[0] == ExitCode.PASS
    (d / "a.txt").write_text("b\n")
    code, out, err = cli("verify", d, "--json", tmp_path / "v.json")
    assert code == ExitCode.TAMPER and out.startswith("modified: a.txt") and "TAMPER" in err
    assert cli("seal", d)[0] == ExitCode.TAMPER
    code, new, _ = cli("seal", d, "--dry-run")
    assert cli("seal", d, "--reseal", "--expect", new.strip(), "--reason", "fixed oracle")[0] == ExitCode.PASS


def test_leaks_exit_6(tmp_path: Path, cli: Cli) -> None:
    ans = write_jsonl(tmp_path / "a.jsonl", [{"k": "1", "v": "secret-value-42"}])
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "f.txt").write_text("nothing here\n")
    assert cli("leaks", "--answers", ans, tmp_path / "ws")[0] == ExitCode.PASS
    (tmp_path / "ws" / "g.txt").write_text("a\nsecret-value-42\n")
    code, out, _ = cli("leaks", "--answers", ans, tmp_path / "ws")
    assert code == ExitCode.LEAK and "g.txt:2: value:" in out and "secret-value-42" not in out


def test_exported_schemas_validate_real_outputs(tmp_path: Path, cli: Cli) -> None:
    assert cli("schema", "--out", tmp_path / "schemas")[0] == 0
    schema = json.loads((tmp_path / "schemas" / "score-report.schema.json").read_text())
    cal, ans, act = _files(tmp_path)
    cli("score", "--caliber", cal, "--answers", ans, "--actual", act, "--json", tmp_path / "r.json")
    jsonschema.validate(json.loads((tmp_path / "r.json").read_text()), schema)
    caliber_schema = json.loads((tmp_path / "schemas" / "caliber.schema.json").read_text())
    import yaml

    jsonschema.validate(yaml.safe_load(CALIBER.replace("avg: amount", "avg: {class: amount}")), caliber_schema)
    broken = dict(json.loads((tmp_path / "r.json").read_text()), verdict="maybe")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_installed_entry_point_prints_no_traceback(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tri_agent", "score", "--caliber", tmp_path / "none.yaml",
                           "--answers", tmp_path / "a.csv", "--actual", tmp_path / "b.csv"],
                          capture_output=True, text=True)
    assert done.returncode == ExitCode.USAGE
    assert done.stderr.startswith("tri-agent: error:") and "Traceback" not in done.stderr


def test_json_to_stdout_is_pure_json(tmp_path: Path, cli: Cli) -> None:
    cal, ans, act = _files(tmp_path)
    code, out, err = cli("score", "--caliber", cal, "--answers", ans, "--actual", act, "--json", "-")
    assert code == 0 and json.loads(out)["verdict"] == "pass" and "PASS" in err


@pytest.mark.parametrize("make_args,code,message", [
    (lambda t, c, a, x: ["score", "--caliber", c, "--answers", a, "--actual", x, "--json", t], 2, "already exists"),
    (lambda t, c, a, x: ["score", "--caliber", c, "--answers", a, "--actual", x, "--json", t, "--force"], 2,
     "is a folder"),
    (lambda t, c, a, x: ["leaks", "--answers", a, "--actual", t / "nope.jsonl"], 2, "not a regular file"),
])
def test_bad_output_and_table_paths_are_usage_errors(tmp_path: Path, cli: Cli, make_args: object, code: int,
                                                     message: str) -> None:
    cal, ans, act = _files(tmp_path)
    rc, _, err = cli(*make_args(tmp_path, cal, ans, act))  # type: ignore[operator]
    assert rc == code and message in err and err.count("\n") == 1


@pytest.mark.parametrize("caliber,message", [
    ("schema_version: 1\nkey: [case, case]\nfields: {avg: amount}\n", "names a column twice"),
    ("schema_version: 1\nkey: [case]\nfields: {avg: amount}\nbehaviors: {key: [behavior], values: [a]}\n",
     "both the key and the behaviour field"),
    ("schema_version: 1\nkey: &a [*a]\nfields: {avg: amount}\n", "refers to itself"),
])
def test_bad_calibers_are_exit_3(tmp_path: Path, cli: Cli, caliber: str, message: str) -> None:
    cal, ans, act = _files(tmp_path)
    cal.write_text(caliber)
    rc, _, err = cli("score", "--caliber", cal, "--answers", ans, "--actual", act)
    assert rc == ExitCode.MALFORMED and message in err and err.count("\n") == 1


def test_doctor_reports_presence_never_values(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-should-never-print-0123")
    code, out, _ = cli("doctor")
    assert code == 0 and "physical omission" in out and "write audit" in out and "OS sandbox" in out
    assert "ANTHROPIC_API_KEY  set" in out and "sk-ant-should-never-print" not in out
    assert "tester    ok" in out


def test_contract_show_and_workspace(tmp_path: Path, cli: Cli) -> None:
    code, out, _ = cli("contract", "show", "tester")
    assert code == 0 and "memory    fresh" in out and "iron rules: all hold" in out
    (tmp_path / "p" / "target").mkdir(parents=True)
    (tmp_path / "p" / "target" / "app.py").write_text("x\n")
    (tmp_path / "p" / "exam").mkdir()
    (tmp_path / "p" / "exam" / "TESTPLAN.md").write_text("plan\n")
    code, out, _ = cli("workspace", "tester", "--project", tmp_path / "p", "--out", tmp_path / "ws")
    assert code == 0 and "1 files copied, 1 kept out" in out
    assert (tmp_path / "ws" / "exam" / "TESTPLAN.md").exists() and not (tmp_path / "ws" / "target").exists()
    assert cli("contract", "show", "auditor")[0] == ExitCode.USAGE


def test_every_command_renders_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse formats each help string with %: a bare percent sign in a command's help or an argument's breaks
    --help of the command, or of the group that lists it."""
    from tri_agent._cli import COMMANDS, main

    listings = {(), *(tuple(c.name.split()[:-1]) for c in COMMANDS), *(tuple(c.name.split()) for c in COMMANDS)}
    for argv in sorted(listings):
        with pytest.raises(SystemExit) as done:
            main([*argv, "--help"])
        assert done.value.code == 0, argv
        assert "usage: tri-agent" in capsys.readouterr().out
