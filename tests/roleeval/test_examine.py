"""The examiner's mechanical measure: its exam built, run and mutated by the engine against the private target of its
case; a plant the exam kills is named, one it misses is not, and an exam that finds fault with the correct program or
cannot run at all names nothing (a recorded exam of the gradebook program, from its spec alone)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tri_agent._cli import main
from tri_agent.drivers._command import CommandDriver
from tri_agent.roleeval import load_corpus
from tri_agent.roleeval._audit import closure
from tri_agent.roleeval._corpus import Corpus
from tri_agent.roleeval._examine import Examined, examine, graded
from tri_agent.roleeval._run import _graded, driver_executor

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpora" / "examiner"
EXAM = ROOT / "tests" / "corpora" / "exams" / "gradebook"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(CORPUS)


def _case(corpus: Corpus, program: str, verdict: str = "findings") -> str:
    return next(r for r in corpus.manifest.cases
                if corpus.provenance[r].program == program and corpus.expectations[r].verdict == verdict)


def _exam(corpus: Corpus, ref: str, changes: dict[str, tuple[str, str]] | None = None) -> dict[str, str]:
    """The recorded exam beside the payload's own exam files; ``changes``: file -> (find, replace), one edit each."""
    files = {k.removeprefix("exam/"): v for k, v in corpus.payloads[ref].files.items() if k.startswith("exam/")}
    files |= {p.relative_to(EXAM).as_posix(): p.read_text() for p in sorted(EXAM.rglob("*")) if p.is_file()}
    for name, (find, replace) in (changes or {}).items():
        assert files[name].count(find) == 1, (name, find)
        files[name] = files[name].replace(find, replace)
    return files


GENERATOR, ORACLE = "generator/generate.py", "oracle/oracle.py"
# four drawn sheets instead of twelve, never with spaces around fields or lines of spaces between records
WEAK = {GENERATOR: ('    for n in range(12):\n        texts[f"sheet-{n}"] = sheet(rng, blank=n % 3 == 0, '
                    'spaces=n % 4 == 1)', '    for n in range(4):\n        texts[f"sheet-{n}"] = sheet(rng)')}


def test_the_examiner_corpus_keeps_every_plant_private_and_applicable(corpus: Corpus) -> None:
    planted = [e for e in corpus.expectations.values() if e.verdict == "findings"]
    assert len(planted) == 12 and sum(len(e.root_causes) for e in planted) >= 200
    for ref, expectation in corpus.expectations.items():
        shown = "\n".join(corpus.payloads[ref].files.values())
        for rc in expectation.root_causes:
            assert rc.plant is not None and expectation.target[rc.plant.file].count(rc.plant.find) == 1
        for name, text in expectation.target.items():  # the examiner never sees the code it examines
            assert name not in corpus.payloads[ref].files and (name == "target.yaml" or text not in shown)


@pytest.fixture(scope="module")
def examined(corpus: Corpus) -> tuple[Examined, Examined]:
    """The recorded exam and its weak variant, each built, run and mutated once for the module."""
    ref = _case(corpus, "gradebook")
    return examine(corpus.expectations[ref], _exam(corpus, ref)), examine(corpus.expectations[ref],
                                                                          _exam(corpus, ref, WEAK))


def test_an_exam_kills_the_plants_it_tells_apart_and_names_exactly_those(
        corpus: Corpus, examined: tuple[Examined, Examined]) -> None:
    ref = _case(corpus, "gradebook")
    expectation = corpus.expectations[ref]
    strong, weak = examined
    assert sorted(strong.killed) == sorted(rc.id for rc in expectation.root_causes) and not strong.fault
    assert 0 < len(weak.killed) < len(strong.killed) and set(weak.killed) < set(strong.killed)
    grade = graded(ref, expectation, weak)
    assert {g.grade for g in grade.findings} == {"match"} and grade.right is False
    assert grade.named == set(weak.killed)  # two plants at one place are still two
    assert graded(ref, expectation, strong).right is True


def test_an_exam_that_fails_the_correct_program_or_cannot_run_names_nothing(corpus: Corpus) -> None:
    """Each is graded clean (it told no bug apart) with one finding that names nothing: never better than a weak
    exam that works. Hostile file names are faults too, never an error that stops the run."""
    ref = _case(corpus, "gradebook")
    expectation = corpus.expectations[ref]
    half_even = _exam(corpus, ref, {ORACLE: ("    if hundredths - whole >= Fraction(1, 2):",
                                             "    if hundredths - whole > Fraction(1, 2):")})
    crashing = _exam(corpus, ref, {GENERATOR: ("    rng = random.Random(seed)\n",
                                               "    rng = random.Random(seed)\n    raise SystemExit(3)\n")})
    seedless = _exam(corpus, ref, {GENERATOR: ("    rng = random.Random(seed)\n", "    rng = random.Random(0)\n")})
    for exam, why in ((half_even, "fails the program as its spec describes it"), (crashing, "cannot be run"),
                      (seedless, "does not draw its cases from the seed"),
                      ({"../escape.py": "x"}, "leaves the exam folder"), ({}, "no exam was written"),
                      ({"a": "x", "a/b": "y"}, "cannot be laid out"), ({"a\0b": "x"}, "is no file name"),
                      ({"x" * 300: "x"}, "is no file name"), ({"big.py": "#" * (2 << 20)}, "larger than")):
        examined = examine(expectation, exam)
        assert examined.killed == [] and why in examined.fault, (why, examined.fault)
        grade = graded(ref, expectation, examined)
        assert grade.right is False and grade.named == set() and grade.unexpected == 1 and grade.given == "clean"
        assert grade.findings[0].finding.location == "exam"


def _sub_corpus(corpus: Corpus, dest: Path, refs: list[str]) -> Path:
    shutil.copytree(CORPUS, dest)
    manifest = json.loads((dest / "corpus.yaml").read_text())
    (dest / "corpus.yaml").write_text(json.dumps({**manifest, "cases": refs}))
    return dest


def test_eval_roles_grades_an_examiner_by_what_its_exams_kill(corpus: Corpus, examined: tuple[Examined, Examined],
                                                                tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                                ) -> None:
    ref, blocked = _case(corpus, "gradebook"), _case(corpus, "booking", "blocked")
    sub = _sub_corpus(corpus, tmp_path / "examiner", [ref, blocked])
    fixtures = tmp_path / "replies"
    fixtures.mkdir()
    (fixtures / f"{ref}.jsonl").write_text(json.dumps({"exam": _exam(corpus, ref, WEAK)}) + "\n")
    (fixtures / f"{blocked}.jsonl").write_text(json.dumps({"blocked": True}) + "\n")
    assert main(["eval-roles", str(sub), "--role", "examiner", "--driver", "fixture", "--fixtures", str(fixtures),
                 "--attempts", "1", "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert f"| recall | {len(examined[1].killed) / 24:.1%} | {len(examined[1].killed)} / 24 |" in printed
    assert "| blocked_accuracy | 100.0% | 1 / 1 |" in printed and "**A simulation**" in printed


def test_a_driven_examiner_hands_in_the_exam_folder_it_wrote_and_nothing_else(
        corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CLI examiner speaking the executor protocol writes its exam in its workspace; what is handed in is the
    exam folder's text files: a link it planted to a file outside is never followed, a binary file is left out."""
    ref = _case(corpus, "gradebook")
    outside = tmp_path / "outside.txt"
    outside.write_text("the answer key")
    agent = tmp_path / "agent.py"
    agent.write_text(f'''import json, os, pathlib, sys
request = json.load(sys.stdin)
ws = pathlib.Path(request["workspace"])
(ws / "exam" / "generator").mkdir(parents=True, exist_ok=True)
(ws / "exam" / "generator" / "generate.py").write_text("print(1)\\n")
(ws / "exam" / "caliber.yaml").write_text("schema_version: 1\\nkey: [case]\\nfields: {{}}\\n")
os.symlink({str(outside)!r}, ws / "exam" / "peek.txt")
(ws / "exam" / "blob.bin").write_bytes(b"\\x00\\x01")
(ws / "notes.txt").write_text("not part of the exam")
print(json.dumps({{"protocol": "tri-agent-executor/1", "status": "ok", "summary": "", "model": "fake-1"}}))
''')
    play = driver_executor(CommandDriver([sys.executable, str(agent)], sandbox=False), "examiner")
    attempt, reply = play(corpus.payloads[ref], closure("examiner", []), 0)
    assert attempt.status == "ok" and reply is not None
    assert set(reply.exam) == {"generator/generate.py", "exam.yaml", "caliber.yaml", "SPEC.md"}
    assert reply.exam["generator/generate.py"] == "print(1)\n"
    assert "fields: {}" in reply.exam["caliber.yaml"]  # it rewrote the caliber the case gave it...
    seen: dict[str, str] = {}
    monkeypatch.setattr("tri_agent.roleeval._run.examine", lambda _e, exam: seen.update(exam) or Examined())
    _graded("examiner", ref, corpus.expectations[ref], reply, {}, corpus.payloads[ref])
    assert seen["caliber.yaml"] == corpus.payloads[ref].files["exam/caliber.yaml"]  # ...which the engine puts back
    assert seen["generator/generate.py"] == "print(1)\n"
