"""exam run and rerun: the toy-grades bugs are caught through the right channels; the gateway is strict."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import alive, toy_copy

from tri_agent import (
    InfrastructureFailure,
    NotDeterministic,
    PolicyViolation,
    TamperDetected,
    UsageError,
    score,
)
from tri_agent.scoring._report import ScoreReport
from tri_agent.targets._gateway import rerun, run_exam, run_score_inputs


def _score(build: Path, run: Path) -> ScoreReport:
    return score(run_score_inputs(build, run))  # the build's canaries set aside: they are scored apart


def test_buggy_target_fails_through_channel_one_and_the_drift_audit(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=False)
    run_exam(toy_build, toy / "target.yaml", tmp_path / "run", twice=True)
    report = _score(toy_build, tmp_path / "run")
    assert report.verdict == "fail"
    # bug 2, untrimmed group keys: rows under " Biology" are unexpected and the trimmed groups miss counts
    untrimmed = [f for f in report.answers.failures if f.reason == "unexpected_row"]
    assert untrimmed and all(f.key["group"] != f.key["group"].strip() for f in untrimmed)
    # bug 1, banker's rounding: one cent inside tolerance, every difference the same way
    [average] = [d for d in report.answers.drift if d.field == "average"]
    assert average.systematic and average.positive == 0 and average.top_deltas[0].delta == "-0.01"
    assert report.behaviors is not None and report.behaviors.verdict == "pass"


def test_fixed_target_passes_every_channel(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    record = run_exam(toy_build, toy / "target.yaml", tmp_path / "run", twice=True)
    report = _score(toy_build, tmp_path / "run")
    assert report.verdict == "pass", report.blockers
    assert record.twice and report.relations is not None and report.relations.total > 0
    assert rerun(tmp_path / "run", toy_build, toy / "target.yaml", sample=3) == []
    grades = toy / "target" / "grades.py"
    grades.write_text(grades.read_text().replace("writer.writerows(summarize(scores))",
                                                 "writer.writerows(summarize(scores)[:-1])"))
    assert len(rerun(tmp_path / "run", toy_build, toy / "target.yaml", sample=20)) == 13  # accepted ones


def _target(tmp: Path, script: str, timeout: float = 5) -> Path:
    (tmp / "t").mkdir(parents=True)
    (tmp / "t" / "prog.py").write_text(script)
    path = tmp / "target.yaml"
    path.write_text(f"""schema_version: 1
baseline: t
run: [python3, "{{target}}/prog.py", "{{input}}", "{{output}}"]
timeout: {timeout}
extract: {{file: out.csv, format: csv}}
env: {{BASELINE: "{tmp / 't'}"}}
""")
    return path


def test_non_deterministic_target_is_caught_by_twice(toy_build: Path, tmp_path: Path) -> None:
    script = "import sys, random\nopen(sys.argv[2] + '/out.csv', 'w').write(f'g\\n{random.random()}\\n')\n"
    target = _target(tmp_path, script)
    with pytest.raises(InfrastructureFailure, match="not deterministic"):
        run_exam(toy_build, target, tmp_path / "run", twice=True)




# a target whose rows say how it was run: each senses one thing of its harness, as an exam-aware target would
_SENSES = {
    "its parent process": "open(f'/proc/{os.getppid()}/cmdline', 'rb').read().split(b'\\0')[0].decode()",
    "its own pid": "os.getpid()",
    "HOME": "os.environ['HOME'].rsplit('/', 1)[1]",
    "the depth of its folder": "len(os.getcwd().split('/'))",
}


@pytest.mark.parametrize("sense", sorted(_SENSES))
def test_a_target_that_senses_its_harness_differs_under_the_second_and_is_named(toy_build: Path, tmp_path: Path,
                                                                                 sense: str) -> None:
    script = (f"import os, sys\nsensed = {_SENSES[sense]}\n"
              "open(sys.argv[2] + '/out.csv', 'w').write(f'g\\n{sensed}\\n')\n")
    if sense == "its parent process" and not Path("/proc/self/cmdline").exists():
        pytest.skip("no /proc here")
    with pytest.raises(NotDeterministic, match="the second under another harness") as err:
        run_exam(toy_build, _target(tmp_path, script), tmp_path / "run", twice=True)
    cases = (toy_build / "visible" / "cases.jsonl").read_text().splitlines()
    assert len(err.value.cases) == len(cases)  # every case named


def test_an_ordinary_case_path_names_nothing_of_the_engine(toy_build: Path, tmp_path: Path) -> None:
    script = ("import os, sys, json\nseen = json.dumps([os.getcwd(), dict(os.environ), sys.argv])\n"
              "open(sys.argv[2] + '/out.csv', 'w').write('g\\n' + json.dumps(seen) + '\\n')\n")
    run_exam(toy_build, _target(tmp_path, script), tmp_path / "run")
    seen = (tmp_path / "run" / "actual.jsonl").read_text()
    assert "c-" not in seen.replace('"case": "c-', "") and "tri" not in seen.lower().replace("tri_agent", "")


def test_compiled_code_the_target_ships_is_never_run(toy_build: Path, tmp_path: Path) -> None:
    """A .pyc whose header matches the source but whose code is other: the exam would run code that no smell,
    operator or mutant ever reads. The gateway drops every compiled file before a case runs."""
    import importlib.util
    import py_compile

    source = "def answer():\n    return 'from the source'\n"
    target = _target(tmp_path, "import sys\nsys.path.insert(0, sys.path[0])\nimport m\n"
                               "open(sys.argv[2] + '/out.csv', 'w').write('g\\n' + m.answer() + '\\n')\n")
    (tmp_path / "t" / "m.py").write_text(source)
    other = tmp_path / "other.py"
    other.write_text("def answer():\n    return 'hidden'\n")
    cache = tmp_path / "t" / "__pycache__" / f"m.{sys.implementation.cache_tag}.pyc"
    py_compile.compile(str(other), cfile=str(cache), invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    data = bytearray(cache.read_bytes())
    data[8:16] = importlib.util.source_hash(source.encode())  # the header vouches for m.py's own source
    cache.write_bytes(bytes(data))
    run_exam(toy_build, target, tmp_path / "run")
    rows = (tmp_path / "run" / "actual.jsonl").read_text()
    assert "from the source" in rows and "hidden" not in rows


def test_hanging_target_is_killed_with_every_descendant(toy_build: Path, tmp_path: Path) -> None:
    """At the deadline the case's whole tree dies: its child, and a daemon that left the process group."""
    target = _target(tmp_path, """import os, subprocess, time
subprocess.Popen(["sleep", "300.25"])
if os.fork() == 0:
    os.setsid()
    os.execvp("sleep", ["sleep", "300.75"])
time.sleep(300)
""", timeout=1)
    start = time.monotonic()
    run_exam(toy_build, target, tmp_path / "run")
    assert time.monotonic() - start < 60
    behaviors = (tmp_path / "run" / "observed_behaviors.jsonl").read_text()
    assert behaviors.count('"timeout"') == 15
    time.sleep(0.3)
    assert not alive("300.25") and not alive("300.75")


def test_a_target_cannot_reach_its_baseline_and_a_change_to_it_would_be_a_policy_violation(
        toy_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tri_agent.sandbox._jail as jail

    target = _target(tmp_path, "import os\nopen(os.environ['BASELINE'] + '/planted.txt', 'w').write('x')\n")
    run_exam(toy_build, target, tmp_path / "run")  # in the jail the baseline does not exist: the write fails
    assert not (tmp_path / "t" / "planted.txt").exists()
    behaviors = (tmp_path / "run" / "observed_behaviors.jsonl").read_text()
    assert behaviors.count('"rejected"') == 15  # it crashed on every case (the rules call a nonzero exit that)
    monkeypatch.setattr(jail, "strongest", lambda: None)  # no OS layer, run anyway: the audit still sees it
    monkeypatch.setattr(jail.POLICY, "allow_unsandboxed", True)
    with pytest.raises(PolicyViolation, match="changed its own baseline"):
        run_exam(toy_build, target, tmp_path / "run-unsandboxed")


def test_tampered_build_is_refused(toy_build: Path, tmp_path: Path) -> None:
    import shutil

    build = tmp_path / "build"
    shutil.copytree(toy_build, build)
    next((build / "visible" / "inputs").rglob("scores.csv")).write_text("student,group,score\n")
    toy = toy_copy(tmp_path / "toy", fixed=True)
    with pytest.raises(TamperDetected, match="does not match its seal"):
        run_exam(build, toy / "target.yaml", tmp_path / "run")


def test_a_run_folder_is_never_overwritten(toy_build: Path, tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "x").write_text("evidence")
    toy = toy_copy(tmp_path / "toy", fixed=True)
    with pytest.raises(UsageError, match="already holds a run"):
        run_exam(toy_build, toy / "target.yaml", tmp_path / "run")


def test_a_link_in_a_cases_output_is_never_followed_or_kept(toy_build: Path, tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere.jsonl"
    secret.write_text("SEALED\n")
    target = _target(tmp_path, f"import os, sys\nos.symlink({str(secret)!r}, sys.argv[2] + '/out.csv')\n")
    run_exam(toy_build, target, tmp_path / "run")
    outputs = tmp_path / "run" / "outputs"
    assert not any(p.is_symlink() or "SEALED" in p.read_text() for p in outputs.rglob("*") if not p.is_dir())
    provenance = (tmp_path / "run" / "provenance.jsonl").read_text()
    assert "links or special files in its output" in provenance


def test_a_build_step_that_grows_past_the_write_cap_stops(toy_build: Path, tmp_path: Path) -> None:
    from tri_agent import InfrastructureFailure

    target = _target(tmp_path, "print('never runs')\n")
    target.write_text(target.read_text() + "write_cap: 1048576\nbuild: [python3, -c, \"import os\\n"
                      "for i in range(3): open(f'part{i}', 'wb').write(b'x' * 600000)\"]\n")
    with pytest.raises(InfrastructureFailure, match=r"build step wrote \d+ bytes, past the write cap"):
        run_exam(toy_build, target, tmp_path / "run")


def test_a_target_without_an_extract_rule_is_refused_before_any_case_runs(toy_build: Path, tmp_path: Path) -> None:
    from tri_agent import MalformedInput

    toy = toy_copy(tmp_path / "toy", fixed=True)
    target = toy / "target.yaml"
    target.write_text("\n".join(x for x in target.read_text().splitlines() if not x.startswith("extract:")) + "\n")
    with pytest.raises(MalformedInput, match="no 'extract' rule") as err:
        run_exam(toy_build, target, tmp_path / "run")
    assert "extract" in err.value.where and not (tmp_path / "run" / "outputs").exists()


def test_a_wrong_output_name_is_reported_per_case_and_scored_missing(toy_build: Path, tmp_path: Path,
                                                                     cli) -> None:  # type: ignore[no-untyped-def]
    toy = toy_copy(tmp_path / "toy", fixed=True)
    target = toy / "target.yaml"
    target.write_text(target.read_text().replace("extract: {file: summary.csv", "extract: {file: summry.csv"))
    code, out, _ = cli("exam", "run", toy_build, "--target", target, "--out", tmp_path / "run")
    assert code == 0 and out.count("no output file summry.csv; its rows count as missing") == 10
    assert "and 5 more cases" in out
    code, out, _ = cli("exam", "score", toy_build, tmp_path / "run")
    assert code == 1 and "0/" in out


@pytest.fixture
def tool_outside() -> Iterator[Path]:
    """A program installed where no jail looks (neither the system's folders nor the tools on PATH): a folder of
    its own under /srv, as a virtualenv elsewhere would be. Made and removed by the test (the suite runs as root)."""
    if os.geteuid() != 0:
        pytest.skip("making a folder outside the temporary folder and HOME needs root")
    folder = Path(tempfile.mkdtemp(prefix="tri-agent-tool-", dir="/srv" if Path("/srv").is_dir() else "/var"))
    (folder / "bin").mkdir()
    tool = folder / "bin" / "tool"
    tool.write_text("#!/bin/sh\nprintf 'g\\nfrom the tool\\n' > \"$2/out.csv\"\n")
    tool.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def test_a_program_outside_the_jail_runs_once_its_folder_is_named_readable(toy_build: Path, tmp_path: Path,
                                                                          tool_outside: Path) -> None:
    path = tmp_path / "target.yaml"
    (tmp_path / "t").mkdir()
    plain = f"""schema_version: 1
baseline: t
run: ["{tool_outside}/bin/tool", "{{input}}", "{{output}}"]
timeout: 5
extract: {{file: out.csv, format: csv}}
"""
    path.write_text(plain)
    unseen = run_exam(toy_build, path, tmp_path / "unseen")
    assert unseen.unread and all("out.csv" in why for why in unseen.unread.values())  # it never ran
    path.write_text(plain + f"readable: [{tool_outside}]\n")
    seen = run_exam(toy_build, path, tmp_path / "seen")
    assert not seen.unread and "from the tool" in (tmp_path / "seen" / "actual.jsonl").read_text()


@pytest.mark.parametrize(("folder", "why"), [
    ("relative/path", "it is not an absolute path"), ("/nonexistent-tri-agent", "it is no folder"),
    ("/", "it would show"), ("~", "it would show"), ("TMP", "it would show"),
])
def test_a_readable_folder_that_would_show_what_no_run_may_see_is_refused_before_any_case(
        toy_build: Path, tmp_path: Path, folder: str, why: str) -> None:
    folder = {"~": str(Path.home()), "TMP": tempfile.gettempdir()}.get(folder, folder)
    path = _target(tmp_path, "open(1)\n")
    path.write_text(path.read_text() + f"readable: ['{folder}']\n")
    with pytest.raises(UsageError, match=f"readable folder '{re.escape(folder)}' is refused: {why}"):
        run_exam(toy_build, path, tmp_path / "run")
    assert not (tmp_path / "run").exists() or not any((tmp_path / "run").iterdir())
