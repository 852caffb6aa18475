"""exam build: determinism, sealing, self-checks, and one-line failures for broken exams."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import TOY

from tri_agent import InfrastructureFailure, MalformedInput, PolicyViolation, TamperDetected, UsageError, verify
from tri_agent.exam._build import build_exam
from tri_agent.exam._canaries import changed
from tri_agent.exam._formats import BuildRecord
from tri_agent.scoring._caliber import FieldSpec


def _seed_blind(tmp: Path, moving: int) -> Path:
    """A copy of the toy exam whose generator ignores its seed for all but ``moving`` of its cases."""
    import shutil

    exam = tmp / "exam"
    shutil.copytree(TOY / "exam", exam)
    (exam / "blind.py").write_text(f"""import runpy, sys
seed, out = sys.argv[1], sys.argv[2]
sys.argv = [sys.argv[0], "1", out]
runpy.run_path("generator/generate.py", run_name="__main__")
import json, pathlib
cases = [json.loads(x) for x in (pathlib.Path(out) / "cases.jsonl").read_text().splitlines()]
for case in cases[:{moving}]:
    (pathlib.Path(out) / case["inputs"] / "seed.txt").write_text(seed)
""")
    config = exam / "exam.yaml"
    text = config.read_text()
    assert "generator/generate.py" in text
    config.write_text(text.replace("generator/generate.py", "blind.py", 1))
    return exam


@pytest.mark.parametrize("moving", [0, 2])
def test_a_generator_that_ignores_its_seed_is_refused_at_build(tmp_path: Path, moving: int) -> None:
    with pytest.raises(MalformedInput, match=rf"does not draw its cases from the seed: {15 - moving} of 15") as err:
        build_exam(_seed_blind(tmp_path, moving), "7", tmp_path / "build")
    assert err.value.exit_code == 3 and "exam.yaml: generator" in str(err.value)
    assert not (tmp_path / "build" / "build.json").exists()


def test_a_generator_that_moves_a_quarter_of_its_cases_with_the_seed_builds(tmp_path: Path) -> None:
    record = build_exam(_seed_blind(tmp_path, 4), "7", tmp_path / "build")
    assert record.checks.deepens == "4/15"


def test_toy_build_is_sealed_and_self_checked(toy_build: Path) -> None:
    record = BuildRecord.model_validate_json((toy_build / "build.json").read_text())
    assert record.checks.model_dump() == {"generator_deterministic": True, "oracle_deterministic": True,
                                          "gold_passes": True, "corrupted_key_fails": True, "deepens": "15/15",
                                          "canaries": "2 (1 impossible, 1 refuse); the oracle's answers fail each"}
    assert verify(toy_build / "visible", expect=record.visible_digest).ok
    assert verify(toy_build / "sealed", expect=record.sealed_digest).ok
    assert not (toy_build / "visible" / "pairs.jsonl").exists()
    visible_text = "".join(p.read_text(errors="replace") for p in (toy_build / "visible").rglob("*") if p.is_file())
    assert "bad-score" not in visible_text and "Half" in visible_text  # ids are opaque; inputs are visible


def test_same_seed_builds_byte_identical_keys(toy_build: Path, tmp_path: Path) -> None:
    again = build_exam(TOY / "exam", "1", tmp_path / "b")
    assert again.sealed_digest == BuildRecord.model_validate_json((toy_build / "build.json").read_text()).sealed_digest
    other = build_exam(TOY / "exam", "2", tmp_path / "c")
    assert other.sealed_digest != again.sealed_digest


def test_a_build_folder_is_never_overwritten(toy_build: Path) -> None:
    with pytest.raises(UsageError, match="already holds a build"):
        build_exam(TOY / "exam", "1", toy_build)


def _exam_copy(tmp: Path) -> Path:
    exam = tmp / "exam"
    shutil.copytree(TOY / "exam", exam)
    return exam


def test_non_deterministic_generator_is_refused(tmp_path: Path) -> None:
    exam = _exam_copy(tmp_path)
    gen = exam / "generator" / "generate.py"
    gen.write_text(gen.read_text().replace('rng = random.Random(f"toy-grades:{seed}")', "rng = random.Random()"))
    with pytest.raises(InfrastructureFailure, match="generator is not deterministic"):
        build_exam(exam, "1", tmp_path / "out")


def test_crashing_oracle_is_one_line(tmp_path: Path) -> None:
    exam = _exam_copy(tmp_path)
    (exam / "oracle" / "oracle.py").write_text("raise SystemExit('oracle: cannot parse input')\n")
    with pytest.raises(InfrastructureFailure, match="oracle exited 1: oracle: cannot parse input"):
        build_exam(exam, "1", tmp_path / "out")


def test_case_ids_must_be_opaque(tmp_path: Path) -> None:
    exam = _exam_copy(tmp_path)
    gen = exam / "generator" / "generate.py"
    gen.write_text(gen.read_text().replace('return "c-" + hashlib', 'return f"c-{name}-" + hashlib'))
    with pytest.raises(MalformedInput, match="not opaque"):
        build_exam(exam, "1", tmp_path / "out")


def test_oracle_that_disagrees_with_caliber_fails_gold(tmp_path: Path) -> None:
    exam = _exam_copy(tmp_path)
    oracle = exam / "oracle" / "oracle.py"
    oracle.write_text(oracle.read_text().replace('"total": str(total.quantize', '"total": str(1 + total.quantize'))
    with pytest.raises(InfrastructureFailure, match="does not pass against itself"):
        build_exam(exam, "1", tmp_path / "out")


@pytest.mark.parametrize("cls,value,values", [("amount", "2.35", None), ("ratio", "0.5", None), ("count", "3", None),
                                              ("status", "ok", ["ok", "late"]), ("text", "x", None),
                                              ("json", '{"a": 1}', None), ("set", '["a"]', None)])
def test_corruption_always_leaves_tolerance(cls: str, value: str, values: list[str] | None) -> None:
    from tri_agent.scoring._tolerance import CLASSES, check_expected, compare_cell

    c = CLASSES[cls]
    enum = frozenset(values) if values else None
    moved = changed(FieldSpec.model_validate({"class": cls, "values": values}), value)
    assert not compare_cell(c, check_expected(c, value, enum), moved, enum).ok
    json.dumps(moved)


def test_relative_paths_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(TOY / "exam", tmp_path / "exam")
    monkeypatch.chdir(tmp_path)
    assert build_exam(Path("exam"), "3", Path("builds/s3")).cases == 15


def test_compose_keeps_chosen_cases_with_their_answers_and_pairs(toy_build: Path, tmp_path: Path) -> None:
    from tri_agent.exam._build import Part, compose_build
    from tri_agent.exam._formats import read_cases

    other = tmp_path / "seed-2"
    build_exam(TOY / "exam", "2", other)
    red = list(yaml.safe_load((other / "caliber.yaml").read_text())["relations"][2]["pairs"][0])  # a seed-2 pair
    composed = compose_build([Part(toy_build), Part(other, frozenset([*red, "c-000000000000"]))], tmp_path / "out",
                             "1 + 2")
    cases = read_cases(tmp_path / "out" / "visible" / "cases.jsonl")
    assert len(cases) == 17 and composed.record.cases == 17 and composed.record.seed == "1 + 2"
    assert {composed.origin[c] for c in red} == {"2"} and composed.missing == {"2": ["c-000000000000"]}
    answers = [json.loads(x)["case"] for x in (tmp_path / "out" / "sealed" / "answers.jsonl").read_text().splitlines()]
    assert set(answers) <= {c.case for c in cases} and set(red) <= set(answers)
    assert all((tmp_path / "out" / "visible" / c.inputs / "scores.csv").is_file() for c in cases)
    pairs = yaml.safe_load((tmp_path / "out" / "caliber.yaml").read_text())["relations"][2]["pairs"]
    assert pairs and all(a in composed.origin and b in composed.origin for a, b in pairs)
    assert red in pairs  # the pair's relation is checked again, not only its cases
    assert composed.record.checks.gold_passes and composed.record.checks.corrupted_key_fails
    assert verify(tmp_path / "out" / "sealed", expect=composed.record.sealed_digest).ok


def test_compose_refuses_a_part_that_no_longer_matches_its_seal(toy_build: Path, tmp_path: Path) -> None:
    from tri_agent.exam._build import Part, compose_build

    part = tmp_path / "part"
    shutil.copytree(toy_build, part)
    answers = part / "sealed" / "answers.jsonl"
    answers.write_text(answers.read_text().replace('"count": "2"', '"count": "3"', 1))
    with pytest.raises(TamperDetected, match="does not match its seal"):
        compose_build([Part(part)], tmp_path / "out", "1")


def test_a_generator_cannot_read_the_implementation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The generator is the examiner's code: in its jail the project's target does not exist. The control,
    run without a jail, shows the same generator reading it."""
    import tri_agent.sandbox._jail as jail

    exam = tmp_path / "exam"
    shutil.copytree(TOY / "exam", exam)
    generator = exam / "generator" / "generate.py"
    stolen = TOY / "target" / "grades.py"
    generator.write_text(generator.read_text().replace(
        "    seed, out = sys.argv[1], Path(sys.argv[2])",
        "    seed, out = sys.argv[1], Path(sys.argv[2])\n    import os\n"
        f"    if os.path.exists({str(stolen)!r}):\n        sys.exit('stole the implementation')"))
    record = build_exam(exam, "1", tmp_path / "build")
    assert record.isolation and record.isolation[0] in ("bubblewrap", "landlock")
    monkeypatch.setattr(jail, "strongest", lambda: None)
    monkeypatch.setattr(jail.POLICY, "allow_unsandboxed", True)
    with pytest.raises(InfrastructureFailure, match="stole the implementation"):
        build_exam(exam, "1", tmp_path / "unjailed")


def test_a_generator_that_leaves_a_link_is_refused(tmp_path: Path) -> None:
    exam = tmp_path / "exam"
    shutil.copytree(TOY / "exam", exam)
    generator = exam / "generator" / "generate.py"
    generator.write_text(generator.read_text().replace(
        "    seed, out = sys.argv[1], Path(sys.argv[2])",
        "    seed, out = sys.argv[1], Path(sys.argv[2])\n"
        "    import os\n    os.symlink('/etc/passwd', out / 'impl.txt')"))
    with pytest.raises(MalformedInput, match="generator wrote a link or a special file"):
        build_exam(exam, "1", tmp_path / "build")
    assert not (tmp_path / "build" / "visible").exists()


def _prepend(script: Path, code: str) -> None:
    script.write_text(code + "\n" + script.read_text())


@pytest.mark.parametrize("role", ["generator/generate.py", "oracle/oracle.py"])
def test_a_huge_sparse_file_is_past_the_write_cap(tmp_path: Path, role: str) -> None:
    exam = _exam_copy(tmp_path)
    _prepend(exam / role, "open('big.sparse', 'wb').truncate(100 << 30)")
    with pytest.raises(InfrastructureFailure, match=r"(wrote|exited)"):
        build_exam(exam, "1", tmp_path / "out")
    assert not (tmp_path / "out" / "sealed").exists()


@pytest.mark.parametrize("role", ["generator/generate.py", "oracle/oracle.py"])
def test_many_files_past_the_exams_write_cap_are_refused(tmp_path: Path, role: str) -> None:
    exam = _exam_copy(tmp_path)
    (exam / "exam.yaml").write_text((exam / "exam.yaml").read_text() + "write_cap: 65536\n")
    _prepend(exam / role, "[open(f'f{i}', 'wb').write(b'x' * 30000) for i in range(4)]")
    with pytest.raises(InfrastructureFailure, match="past the write cap of 65536"):
        build_exam(exam, "1", tmp_path / "out")


@pytest.mark.parametrize("role", ["generator", "oracle"])
def test_a_flood_on_standard_output_is_oversized(tmp_path: Path, role: str) -> None:
    exam = _exam_copy(tmp_path)
    script = exam / ("generator/generate.py" if role == "generator" else "oracle/oracle.py")
    _prepend(script, "import sys as _s; _s.stdout.write('Z' * (5 << 20)); _s.stdout.flush()")
    with pytest.raises(InfrastructureFailure, match=f"the {role} printed more than .* bytes \\(oversized_output\\)"):
        build_exam(exam, "1", tmp_path / "out")


def test_a_hard_link_in_the_exam_is_refused(tmp_path: Path) -> None:
    exam = _exam_copy(tmp_path)
    (tmp_path / "KEY").write_text("secret")
    os.link(tmp_path / "KEY", exam / "generator" / "k.txt")
    with pytest.raises(PolicyViolation, match=r"the exam folder .* a hard link"):
        build_exam(exam, "1", tmp_path / "out")


_PLAN = (TOY / "exam" / "TESTPLAN.md").read_text()


def _with_plan(tmp: Path, extra: str) -> Path:
    """A copy of the toy exam whose test plan has ``extra`` at its end."""
    import shutil

    exam = tmp / "exam"
    shutil.copytree(TOY / "exam", exam)
    (exam / "TESTPLAN.md").write_text(_PLAN + extra)
    return exam


@pytest.mark.parametrize(("pasted", "named"), [
    ("| group | count | total | average |\n|---|---|---|---|\n| A | 2 | 160.01 | 80.01 |\n",
     "count, total, average"),
    ("| case | expected |\n| --- | --- |\n| bom | 80.01 |\n", "expected"),
    ("```\ngroup,count,total,average\nA,2,160.01,80.01\n```\n", "count, total, average"),
    ('{"group": "A", "count": 2, "average": "80.01"}\n', "count, average"),
])
def test_a_test_plan_with_a_table_of_expected_values_is_refused_whatever_its_values(
        tmp_path: Path, pasted: str, named: str) -> None:
    exam = _with_plan(tmp_path, "\nWhat the target should print:\n\n" + pasted)
    line = len((_PLAN + "\nWhat the target should print:\n\n").splitlines()) + 1 + pasted.startswith("```")
    with pytest.raises(MalformedInput, match=rf"table of expected values \({named}\)") as err:
        build_exam(exam, "1", tmp_path / "build")
    assert f"TESTPLAN.md:{line}" in str(err.value) and err.value.exit_code == 3


@pytest.mark.parametrize("extra", [
    "\nThe summary's columns: group, count, total, average.\n\n"
    "| bug class | cases | why |\n|---|---|---|\n| rounding | half cents | HALF_UP |\n",
    "\n| Scenario | Expected behaviour |\n|---|---|\n| an unreadable score | the run is rejected |\n",
])
def test_a_test_plan_that_lists_columns_or_tabulates_scenarios_builds(tmp_path: Path, extra: str) -> None:
    assert build_exam(_with_plan(tmp_path, extra), "1", tmp_path / "build").cases == 15
