"""The fork server gives the same fingerprints as the gateway, in one jail, and survives hostile inputs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import toy_copy

from tri_agent.exam._formats import read_cases
from tri_agent.targets._batch import batchable, preloadable, run_batch
from tri_agent.targets._gateway import Gateway
from tri_agent.targets._target import Target
from tri_agent.targets._trace import read_lines, traceable


@pytest.fixture(params=["bubblewrap", "landlock"])
def layer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each hostile-input test under both layers the fork server runs in: bubblewrap (its pid namespace sweeps)
    and Landlock alone, as on a machine without bubblewrap (the launcher sweeps, asked through its pipe)."""
    from tri_agent.sandbox import _jail
    from tri_agent.sandbox._confine import landlock_abi
    from tri_agent.targets import _batch

    if request.param == "bubblewrap" and _jail.strongest() != "bubblewrap":
        pytest.skip("bubblewrap is not installed (python3 dev.py test installs it)")
    if request.param == "landlock":
        if landlock_abi() <= 0:
            pytest.skip("this kernel has no Landlock")
        monkeypatch.setattr(_jail, "strongest", lambda: "landlock")
        monkeypatch.setattr(_batch, "strongest", lambda: "landlock")
    return str(request.param)


def test_batch_fingerprints_equal_the_gateways(toy_build: Path, tmp_path: Path, layer: str) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    target = Target.load(toy / "target.yaml")
    visible = toy_build / "visible"
    gateway = Gateway(target, visible, tmp_path / "g")
    cases = read_cases(visible / "cases.jsonl")
    prints = run_batch(target, gateway.built, [(visible, c) for c in cases], tmp_path / "b")
    for case, fp in zip(cases, prints, strict=True):
        p = gateway.run_case(case).provenance
        assert (dict(fp.outputs), fp.behavior, fp.exit_code, fp.stdout_sha256) == \
            (p.outputs, p.behavior, p.exit_code, p.stdout_sha256)
    assert {fp.behavior for fp in prints} == {"accepted", "rejected"}  # both kinds of run were compared


def test_a_hanging_input_is_killed_and_the_rest_is_not_run(toy_build: Path, tmp_path: Path, layer: str) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    grades = toy / "target" / "grades.py"
    grades.write_text(grades.read_text().replace("def main():", "def main():\n    if 'A' in open(sys.argv[1]).read():"
                                                 "\n        while True: pass"))
    (toy / "target.yaml").write_text((toy / "target.yaml").read_text().replace("timeout: 20", "timeout: 1"))
    target = Target.load(toy / "target.yaml")
    visible = tmp_path / "v"
    for name, text in (("hang", "student,group,score\ns1,A,1\n"), ("ok", "student,group,score\ns1,B,1\n")):
        (visible / "inputs" / name).mkdir(parents=True)
        (visible / "inputs" / name / "scores.csv").write_text(text)
    from tri_agent.exam._formats import Case

    cases = [Case(case="c-000000000001", inputs="inputs/hang"), Case(case="c-000000000002", inputs="inputs/ok")]
    gateway = Gateway(target, visible, tmp_path / "g")
    ok, hang, skipped = run_batch(target, gateway.built, [(visible, c) for c in [cases[1], *cases]], tmp_path / "b")
    assert ok.exit_code == 0 and ok.behavior == "accepted" and ok.outputs
    assert hang.exit_code is None and hang.behavior == "timeout"
    # a run that hangs has said enough (a mutant that hangs is decided): the server does not wait out the rest
    assert skipped.behavior.startswith("not run") and skipped.differs(ok)


def test_trace_records_lines_of_the_target_only_and_refuses_a_forged_record(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)
    target = Target.load(toy / "target.yaml")
    assert traceable(target.config.run) and not traceable(["node", "{target}/x.js"])
    [case] = read_cases(toy_build / "visible" / "cases.jsonl")[:1]
    result = Gateway(target, toy_build / "visible", tmp_path / "g").run_case(case, trace=True)
    assert result.lines is not None and set(result.lines) == {"grades.py"} and len(result.lines["grades.py"]) > 10
    (tmp_path / "lines.json").write_text('["not", "a", "record"]')
    assert read_lines(tmp_path / "lines.json", tmp_path) is None
    (tmp_path / "big.json").symlink_to("/etc/passwd")
    assert read_lines(tmp_path / "big.json", tmp_path) is None


def test_the_server_preloads_only_the_entrys_stateless_standard_library_imports(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("import csv, random\nimport json.decoder\nfrom decimal import Decimal\n"
                                      "from . import sibling\nimport numpy\nimport tempfile\n")
    assert preloadable(tmp_path, "{target}/main.py") == ["csv", "decimal", "json"]
    (tmp_path / "bad.py").write_text("def (:\n")
    assert preloadable(tmp_path, "{target}/bad.py") == [] and preloadable(tmp_path, "{target}/gone.py") == []


def _hostile(tmp: Path, toy_build: Path, code: str) -> tuple[list[object], list[object]]:
    """Fingerprints of the first four inputs with the honest target and with one whose every run starts with
    ``code`` (``out`` is the job's output folder)."""
    toy = toy_copy(tmp / "toy", fixed=True)
    target = Target.load(toy / "target.yaml")
    visible = toy_build / "visible"
    cases = read_cases(visible / "cases.jsonl")[:4]
    honest = run_batch(target, Gateway(target, visible, tmp / "g").built, [(visible, c) for c in cases], tmp / "b")
    grades = toy / "target" / "grades.py"
    grades.write_text(grades.read_text().replace(
        "def main():", "def main():\n    import os, sys, time\n    out = sys.argv[2].rsplit('/', 1)[0]\n" + code, 1))
    target = Target.load(toy / "target.yaml")
    hostile = run_batch(target, Gateway(target, visible, tmp / "g2").built, [(visible, c) for c in cases], tmp / "b2")
    return honest, hostile


def test_a_job_cannot_write_into_another_jobs_folder(toy_build: Path, tmp_path: Path, layer: str) -> None:
    code = ("    me = os.path.dirname(out)\n"
            "    for n in range(4):\n"
            "        other = os.path.join(os.path.dirname(me), 'j%d' % n)\n"
            "        if other == me:\n"
            "            continue\n"
            "        try:\n"
            "            open(os.path.join(other, 'target', 'grades.py'), 'w').write('raise SystemExit(9)')\n"
            "            open(os.path.join(other, 'output', 'planted.txt'), 'w').write('x')\n"
            "        except OSError:\n"
            "            pass\n")
    honest, hostile = _hostile(tmp_path, toy_build, code)
    assert [(f.outputs, f.exit_code) for f in hostile] == [(f.outputs, f.exit_code) for f in honest]
    assert not list((tmp_path / "b2").glob("j*/output/planted.txt"))


def test_a_daemon_of_one_job_dies_before_the_next_job_starts(toy_build: Path, tmp_path: Path, layer: str) -> None:
    # the daemon outlives its job (which ends after 0.2 s) and writes into whatever job runs next
    code = ("    if os.fork() == 0:\n"
            "        os.setsid()\n"
            "        if os.fork() == 0:\n"
            "            for _ in range(20):\n"
            "                time.sleep(0.1)\n"
            "                jobs = os.path.dirname(os.path.dirname(out))\n"
            "                for path in __import__('glob').glob(jobs + '/j*/output'):\n"
            "                    if path != out:\n"
            "                        try:\n"
            "                            open(os.path.join(path, 'from-daemon'), 'w').write('x')\n"
            "                        except OSError:\n"
            "                            pass\n"
            "        os._exit(0)\n"
            "    time.sleep(0.2)\n")
    honest, hostile = _hostile(tmp_path, toy_build, code)
    assert [f.outputs for f in hostile] == [f.outputs for f in honest]
    assert not list((tmp_path / "b2").glob("j*/output/from-daemon"))


def test_a_daemon_of_one_job_never_writes_its_output_after_the_job_ended(toy_build: Path, tmp_path: Path,
                                                                         layer: str) -> None:
    # its own folder is the one a daemon may write: killed with the job, it never adds to the job's outputs
    code = ("    if os.fork() == 0:\n"
            "        os.setsid()\n"
            "        if os.fork() == 0:\n"
            "            time.sleep(0.5)\n"
            "            open(os.path.join(out, 'late.txt'), 'w').write('x')\n"
            "        os._exit(0)\n"
            "    time.sleep(0.2)\n")
    honest, hostile = _hostile(tmp_path, toy_build, code)
    assert not list((tmp_path / "b2").glob("j*/output/late.txt"))
    assert [f.outputs for f in hostile] == [f.outputs for f in honest]


def test_a_chain_of_forks_that_hops_away_from_every_scan_dies_with_its_job(toy_build: Path, tmp_path: Path,
                                                                           layer: str) -> None:
    # each process forks and exits at once, so a scan of /proc never finds the one alive; only a pid namespace per
    # job ends it. It writes only once its job has ended (0.1 s): what it writes then is what must never be
    code = ("    if os.fork() == 0:\n"
            "        os.setsid()\n"
            "        start = time.monotonic()\n"
            "        while time.monotonic() - start < 3:\n"
            "            if os.fork() != 0:\n"
            "                os._exit(0)\n"
            "            if time.monotonic() - start > 0.3 and int(time.monotonic() * 1000) % 50 == 0:\n"
            "                open(os.path.join(out, 'alive-%d' % os.getpid()), 'w').write('x')\n"
            "        os._exit(0)\n"
            "    time.sleep(0.1)\n")
    honest, hostile = _hostile(tmp_path, toy_build, code)
    time.sleep(0.5)  # had a chain survived the server, it would write now
    assert not list((tmp_path / "b2").glob("j*/output/alive-*"))
    assert [f.outputs for f in hostile] == [f.outputs for f in honest]


def test_without_a_sandbox_or_landlock_inputs_are_not_batched(toy_build: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from tri_agent.sandbox import _confine
    from tri_agent.targets import _batch

    target = Target.load(toy_copy(tmp_path / "toy", fixed=True) / "target.yaml")
    assert batchable(target)
    monkeypatch.setattr(_batch, "strongest", lambda: "landlock")
    assert batchable(target)  # the Landlock launcher sweeps what a job left
    monkeypatch.setattr(_batch, "strongest", lambda: None)
    assert not batchable(target)  # unsandboxed: nothing could kill a job's daemons before the next job
    monkeypatch.undo()
    monkeypatch.setattr(_confine, "landlock_abi", lambda: 0)
    assert not batchable(target)


def test_the_entry_runs_with_the_globals_the_interpreter_gives_it(toy_build: Path, tmp_path: Path) -> None:
    """What a script sees of itself as ``__main__`` is the same on the fork server and through the gateway, so a
    target that reads its own globals cannot be told apart by the harness that hunts it."""
    toy = toy_copy(tmp_path / "toy", fixed=True)
    grades = toy / "target" / "grades.py"
    probe = ("import sys as _s\nprint(sorted((k, type(v).__name__) for k, v in dict(globals()).items()), __name__,"
             " __package__, __spec__, type(__loader__).__name__, _s.modules['__main__'].__dict__ is globals(),"
             " _s.path[0] == __import__('os').path.dirname(__file__))\n")
    grades.write_text(probe + grades.read_text())
    target = Target.load(toy / "target.yaml")
    visible = toy_build / "visible"
    gateway = Gateway(target, visible, tmp_path / "g")
    cases = read_cases(visible / "cases.jsonl")[:2]
    prints = run_batch(target, gateway.built, [(visible, c) for c in cases], tmp_path / "b")
    for case, fp in zip(cases, prints, strict=True):
        p = gateway.run_case(case).provenance
        assert (fp.stdout_sha256, fp.exit_code) == (p.stdout_sha256, p.exit_code)
