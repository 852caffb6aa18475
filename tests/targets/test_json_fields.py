"""json and set fields scored through the gateway: what a target writes as JSON (or as JSON text in a CSV cell)
is compared as JSON with the oracle's values, never as a string quoted twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tri_agent.exam._build import build_exam
from tri_agent.scoring._grading import score
from tri_agent.targets._gateway import run_exam, run_score_inputs

GENERATOR = '''import json, sys
from pathlib import Path
out = Path(sys.argv[2])
cases = []
for n, words in enumerate(["b a a", "c", "x y z"]):
    case = f"c-{n:08x}"
    (out / "inputs" / case).mkdir(parents=True)
    (out / "inputs" / case / "words.txt").write_text(words)
    (out / "inputs" / case / "seed.txt").write_text(sys.argv[1])  # a build refuses a generator blind to its seed
    cases.append({"case": case, "inputs": f"inputs/{case}"})
(out / "cases.jsonl").write_text("".join(json.dumps(c) + "\\n" for c in cases))
'''
ORACLE = '''import json, sys
from pathlib import Path
visible, out = Path(sys.argv[1]), Path(sys.argv[2])
rows = []
for line in (visible / "cases.jsonl").read_text().splitlines():
    case = json.loads(line)
    words = (visible / case["inputs"] / "words.txt").read_text().split()
    rows.append({"case": case["case"], "id": "1", "tags": words, "meta": {"n": len(words), "first": words[0]}})
(out / "answers.jsonl").write_text("".join(json.dumps(r) + "\\n" for r in rows))
'''
TARGETS = {
    "json": ('''import json, sys
words = open(sys.argv[1] + "/words.txt").read().split()
{bug}
json.dump([{{"id": "1", "tags": words[::-1], "meta": {{"first": words[0], "n": len(words)}}}}],
          open(sys.argv[2] + "/out.json", "w"))
''', "out.json"),
    "csv": ('''import csv, json, sys
words = open(sys.argv[1] + "/words.txt").read().split()
{bug}
w = csv.writer(open(sys.argv[2] + "/out.csv", "w", newline=""))
w.writerow(["id", "tags", "meta"])
w.writerow(["1", json.dumps(words[::-1]), json.dumps({{"first": words[0], "n": len(words)}})])
''', "out.csv"),
}


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exam = tmp_path_factory.mktemp("exam")
    (exam / "gen.py").write_text(GENERATOR)
    (exam / "oracle.py").write_text(ORACLE)
    (exam / "exam.yaml").write_text('schema_version: 1\nname: words\ngenerator: [python3, gen.py, "{seed}", "{out}"]\n'
                                    'oracle: [python3, oracle.py, "{cases}", "{out}"]\n')
    (exam / "caliber.yaml").write_text("schema_version: 1\nkey: [case, id]\nfields: {tags: set, meta: json}\n")
    (exam / "SPEC.md").write_text("words in, tags and meta out\n")
    (exam / "TESTPLAN.md").write_text("three word lists\n")
    out = tmp_path_factory.mktemp("build") / "b"
    build_exam(exam, "1", out)
    return out


def _target(folder: Path, kind: str, bug: str) -> Path:
    code, output = TARGETS[kind]
    (folder / "t").mkdir(parents=True)
    (folder / "t" / "main.py").write_text(code.format(bug=bug))
    (folder / "target.yaml").write_text(
        f'schema_version: 1\nbaseline: t\nrun: [python3, "{{target}}/main.py", "{{input}}", "{{output}}"]\n'
        f"extract: {{file: {output}, format: {kind}}}\n")
    return folder / "target.yaml"


@pytest.mark.parametrize("kind", ["json", "csv"])
def test_json_and_set_fields_written_by_a_target_score_as_json(build: Path, tmp_path: Path, kind: str) -> None:
    run_exam(build, _target(tmp_path, kind, ""), tmp_path / "run")
    report = score(run_score_inputs(build, tmp_path / "run"))
    assert report.verdict == "pass", report.answers.failures
    assert (report.answers.passed, report.answers.total) == (3, 3)


@pytest.mark.parametrize("kind", ["json", "csv"])
def test_a_wrong_json_value_still_fails_on_exactly_its_field(build: Path, tmp_path: Path, kind: str) -> None:
    run_exam(build, _target(tmp_path, kind, "words = words + ['extra'] if len(words) == 1 else words"),
             tmp_path / "run")
    report = score(run_score_inputs(build, tmp_path / "run"))
    assert report.verdict == "fail"
    assert sorted((f.field, f.reason) for f in report.answers.failures) == [("meta", "not_equal"),
                                                                           ("tags", "not_equal")]


def test_the_runs_actual_table_holds_text_cells(build: Path, tmp_path: Path) -> None:
    run_exam(build, _target(tmp_path, "json", ""), tmp_path / "run")
    rows = [json.loads(line) for line in (tmp_path / "run" / "actual.jsonl").read_text().splitlines()]
    assert all(isinstance(v, str) for r in rows for v in r.values())
    assert run_score_inputs(build, tmp_path / "run").actual_text
