"""The shipped review corpus (corpora/review/) and its builder (corpora/build.py): the corpus passes its audit, has
the size and spread issue 31 asks for, is exactly what the programs give, and every case's right answer holds
(a planted bug is shown by a probe, a clean variant behaves as the original, nothing else is planted)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import load_script
from tri_agent._cli import main
from tri_agent._errors import LeakDetected
from tri_agent.roleeval import audit, load_corpus
from tri_agent.roleeval._corpus import Corpus

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpora" / "review"


@pytest.fixture(scope="module")
def build() -> ModuleType:
    return load_script(ROOT / "corpora" / "build.py", "corpus_build")


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(CORPUS)


def test_the_shipped_corpus_passes_its_audit_and_has_the_size_and_spread_asked_for(corpus: Corpus) -> None:
    audit(corpus)  # raises on the first contaminated case
    verdicts = Counter(e.verdict for e in corpus.expectations.values())
    programs = {p.program for p in corpus.provenance.values()}
    assert len(corpus.manifest.cases) >= 300 and len(programs) >= 10
    assert verdicts["findings"] >= 200 and verdicts["clean"] >= 100 and 3 <= verdicts["blocked"] <= 30
    assert {p.kind for p in corpus.provenance.values()} == {"command", "service", "browser", "document"}
    per_program = Counter(p.program for p in corpus.provenance.values())
    assert max(per_program.values()) <= 40  # no program dominates: intervals are clustered by program


def test_every_payload_is_its_own_and_every_planted_case_names_its_bug_class_and_operator(corpus: Corpus) -> None:
    texts = [json.dumps(p.files, sort_keys=True) for p in corpus.payloads.values()]
    assert len(set(texts)) == len(texts)
    for ref, expectation in corpus.expectations.items():
        provenance = corpus.provenance[ref]
        if expectation.verdict == "findings":
            assert provenance.bug_class and provenance.tool.startswith("tri_agent.mutation operator ")
            (rc,) = expectation.root_causes
            assert rc.surface.lines is not None and rc.surface.path.endswith(".py")
            assert rc.surface.lines[1] <= len(corpus.payloads[ref].files[rc.surface.path].splitlines())
        else:
            assert not provenance.bug_class and not provenance.tool


# marks the mutation operators leave that no person's bug has: a judge that looked for them would find bugs without
# reading the spec (an adversarial review found 41% of the planted cases that way before the builder wrote mutants
# naturally); the bug idioms themselves (a bare except, Decimal(float(...))) stay: flagging them is reviewing
MARKS = {
    "a quoted rounding mode": re.compile(r'rounding="ROUND_'),
    "a self-assignment": re.compile(r"^\s*(\w+) = \1\s*$", re.M),
    "a sum in needless parentheses": re.compile(r"[\[{(,:=] ?\(len\([^()]*\) [+-] 1\)[,)\]}]|\{\(len\(|\(1 \+ 1\)"),
    "a list copied by a comprehension": re.compile(r"\[(\w+) for \1 in [\w.()]+\]"),
    "a strip stripped again": re.compile(r"\.strip\(\)\.strip\(\)"),
    "a loop that always stops": re.compile(r"^( +)\S.*\n\1break$", re.M),
    "code after a return in its block": re.compile(r"^( +)return\b.*\n\1(?!(?:else|elif|except|finally)\b)\w", re.M),
    "a block of pass alone": re.compile(r"^(?!.*except).*:\n +pass$", re.M),
}


def test_no_planted_case_bears_a_mark_of_the_operator_that_planted_it(corpus: Corpus) -> None:
    for ref, expectation in corpus.expectations.items():
        for name, text in corpus.payloads[ref].files.items():
            if name.endswith(".py"):
                found = [mark for mark, pattern in MARKS.items() if pattern.search(text)]
                assert not found, (ref, expectation.verdict, found)


def test_a_renamed_name_tells_no_verdict(corpus: Corpus, build: ModuleType) -> None:
    """Clean cases are renamed variants of their program; planted ones are too, so the share of cases holding a
    name no original holds is about the same for both (within 15 points)."""
    originals = " ".join((p / f"{p.name}.py").read_text() for p in (ROOT / "corpora" / "programs").iterdir())
    new = {v for v in build.SYNONYMS.values() if not re.search(rf"\b{v}\b", originals)}
    share = {}
    for verdict in ("findings", "clean"):
        refs = [r for r, e in corpus.expectations.items() if e.verdict == verdict]
        renamed = [r for r in refs if any(re.search(rf"\b{v}\b", t) for t in corpus.payloads[r].files.values()
                                          for v in new)]
        share[verdict] = len(renamed) / len(refs)
    assert abs(share["findings"] - share["clean"]) < 0.15, share


def test_the_corpus_is_exactly_what_the_programs_give(build: ModuleType, tmp_path: Path) -> None:
    """The whole build runs again, apart (as ``--check`` does, under the hash seed it sets itself), and is compared
    byte for byte; a corpus changed by hand, or missing, is caught by the same comparison."""
    done = subprocess.run([sys.executable, str(ROOT / "corpora" / "build.py"), "--check"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("review corpus: ") and "12 programs" in done.stdout
    edited = tmp_path / "review"
    shutil.copytree(CORPUS, edited)
    assert build.same_tree(CORPUS, edited)
    first = next(iter(sorted((edited / "private").glob("*.json"))))
    first.write_text(first.read_text().replace('"verdict": "', '"verdict": "x', 1))
    assert not build.same_tree(CORPUS, edited)
    first.unlink()
    assert not build.same_tree(CORPUS, edited)
    done = subprocess.run([sys.executable, str(ROOT / "corpora" / "build.py"), "--check", "--out",
                           str(tmp_path / "nowhere")], capture_output=True, text=True)
    assert done.returncode == 1 and "is not what the programs give" in done.stderr


PROGRAM = '''def run(text):
    words = [w.strip() for w in text.split(",")]
    if len(words) > 3:
        return "too many"
    return "|".join(words)
'''


def _program(tmp_path: Path, probes: list[str]) -> Path:
    folder = tmp_path / "tiny"
    folder.mkdir(parents=True)
    (folder / "spec.md").write_text("# tiny\n\nSplits on commas, trims each part, at most three parts.\n")
    (folder / "tiny.py").write_text(PROGRAM)
    (folder / "probes.py").write_text(f"def inputs():\n    return {probes!r}\n")
    return folder


def test_only_a_mutant_some_probe_shows_is_planted(build: ModuleType, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(build.KINDS, "tiny", "command")
    weak = build.load_program(_program(tmp_path / "a", ["a,b"]))
    strong = build.load_program(_program(tmp_path / "b", ["a,b", " a , b ", "a,b,c", "a,b,c,d"]))
    shown = {i.operator for i, *_ in build.shown_mutants(strong, build.outputs(strong.source, strong.module,
                                                                                strong.probes))}
    hidden = {i.operator for i, *_ in build.shown_mutants(weak, build.outputs(weak.source, weak.module, weak.probes))}
    # "a,b" has no spaces and two parts: the dropped strip and the moved boundary never show on it
    assert {"normalisation-dropped", "boundary-shift"} <= shown
    assert not hidden & {"normalisation-dropped", "boundary-shift"}


def test_a_clean_variant_that_behaves_otherwise_is_never_shipped(build: ModuleType, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(build.KINDS, "tiny", "command")
    program = build.load_program(_program(tmp_path, ["a,b", " a ,b"]))
    expected = build.outputs(program.source, program.module, program.probes)
    assert len(build.clean(program, expected)) >= 1
    monkeypatch.setattr(build, "_variant", lambda source, n: source.replace("w.strip()", f"w.strip() + '{n}'"))
    assert build.clean(program, expected) == []


def test_a_planted_bug_reads_as_written_by_a_person(build: ModuleType) -> None:
    """A check that never fires is gone, not ``and False``; a dropped statement leaves no ``pass`` beside others."""
    source = "def f(x):\n    if x < 0 and False:\n        raise ValueError(x)\n    y = x\n    pass\n    return y\n"
    assert build.naturalised(source) == "def f(x):\n    y = x\n    return y\n"
    assert build.changed_lines("a\nb\nc\n", "a\nc\n") == (1, 2)  # a deletion: the lines on both sides of it
    assert build.changed_lines("a\nb\nc\n", "a\nB\nc\n") == (2, 2)


def test_a_mutant_that_hangs_is_no_case(build: ModuleType) -> None:
    assert build.outputs("def run(text):\n    while True:\n        pass\n", "m.py", ["x"]) is None
    assert build.outputs("def run(text):\n    return 1 / 0\n", "m.py", ["x"]) == ["raised ZeroDivisionError"]


def _replies(corpus: Corpus, folder: Path) -> Path:
    """A recorded reviewer (a simulation): it names every other planted bug at its place in the corpus's words,
    says nothing of the rest and of clean cases, and blocks on incomplete ones."""
    folder.mkdir()
    for n, ref in enumerate(corpus.manifest.cases):
        expectation = corpus.expectations[ref]
        reply: dict[str, object] = {"findings": []}
        if expectation.verdict == "blocked":
            reply = {"blocked": True}
        elif expectation.verdict == "findings" and n % 2 == 0:
            rc = expectation.root_causes[0]
            assert rc.surface.lines is not None
            reply = {"findings": [{"location": f"{rc.surface.path}:{rc.surface.lines[0]}",
                                   "text": f"{rc.formulations[0]} here"}]}
        (folder / f"{ref}.jsonl").write_text(json.dumps(reply) + "\n")
    return folder


def test_eval_roles_over_the_shipped_corpus_prints_every_measure_and_refuses_a_baseline(
        corpus: Corpus, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fixtures = _replies(corpus, tmp_path / "replies")
    base = ["eval-roles", str(CORPUS), "--role", "judge", "--driver", "fixture", "--fixtures", str(fixtures),
            "--attempts", "1", "--out", str(tmp_path / "out")]
    assert main(base) == 0
    printed = capsys.readouterr().out
    planted = sum(e.verdict == "findings" for e in corpus.expectations.values())
    named = sum(1 for n, ref in enumerate(corpus.manifest.cases)
                if corpus.expectations[ref].verdict == "findings" and n % 2 == 0)
    assert f"| {named} / {planted} |" in printed  # recall, with its denominator
    for measure in ("recall", "false_clean", "false_alarm", "blocked_accuracy", "pass_at_1"):
        assert f"| {measure} |" in printed
    assert "**A simulation**" in printed and " to " in printed  # each measure with its interval
    assert main([*base, "--force", "--baseline-report", str(tmp_path / "b.json")]) == 2
    assert "never be a baseline" in capsys.readouterr().err and not (tmp_path / "b.json").exists()


def test_a_contamination_planted_in_the_shipped_corpus_last_case_starts_nothing(
        corpus: Corpus, tmp_path: Path) -> None:
    """The last case's payload gets a private string of its own (an accepted non-finding, in its spec): the audit
    names that case before any attempt starts. No reply is recorded at all, so an attempt that started would end
    the run with exit 3; it ends 6 (a leak) and writes nothing."""
    copy = tmp_path / "review"
    shutil.copytree(CORPUS, copy)
    last = corpus.manifest.cases[-1]
    expectation = copy / "private" / f"{last}.json"
    data = json.loads(expectation.read_text())
    data["accepted"] = ["the reorder threshold is tight"]
    expectation.write_text(json.dumps(data))
    audit(load_corpus(copy))  # the private string alone is no leak
    visible = copy / "visible" / f"{last}.json"
    payload = json.loads(visible.read_text())
    name = next(iter(payload["files"]))
    payload["files"][name] += "\n# the reorder\n# threshold is\n# Tight\n"
    visible.write_text(json.dumps(payload))
    with pytest.raises(LeakDetected, match=last):
        audit(load_corpus(copy))
    assert main(["eval-roles", str(copy), "--role", "judge", "--driver", "fixture", "--fixtures",
                 str(tmp_path / "none"), "--attempts", "1", "--out", str(tmp_path / "out")]) == 6
    assert not (tmp_path / "out").exists()
