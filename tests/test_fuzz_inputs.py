"""Hostile and malformed variants of every input format, read the way the project reads them.

Each variant must end in a result or in one of our errors, on one line, with an exit code of its class
(2 usage, 3 malformed input, 4 tamper), within a deadline; sealed evidence is never changed by reading it.
With TRI_AGENT_FUZZ_STATS=FILE the runs and exit codes are written there (the counts in a closing note).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import TOY, deadline
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tri_agent import TriAgentError
from tri_agent.acceptance._config import load_config
from tri_agent.drivers._scripted import ScriptedDriver
from tri_agent.evidence._seal import seal, verify
from tri_agent.evidence._trail import EvidenceStore
from tri_agent.exam._formats import load_exam
from tri_agent.mutation._menu import load_concrete, load_menu
from tri_agent.scoring._caliber import load_caliber
from tri_agent.targets._target import Target

STATS: Counter[str] = Counter()
HOSTILE = [b"a: &a [*a]\n", b"x: " + b"9" * 5000 + b"\n", b"\x00", b"\r\n", b"\r", b"\xed\xa0\x80", b"\xff\xfe",
           b"[" * 300, b"{", b"- - - -", b"!!python/object:os.system ls", b"'" + b"x" * 200000 + b"'", b"\t",
           b"\xef\xbb\xbf", b": :", b"*b", b"&x", b"\\u0000", b"key: [1, 2", b"# size 99\n", b"\n\n\n"]


def _mutant(base: bytes) -> st.SearchStrategy[bytes]:
    def edit(cut: int, span: int, insert: bytes) -> bytes:
        at = cut % (len(base) + 1)
        return base[:at] + insert + base[at + span:]

    return st.one_of(st.builds(edit, st.integers(0, 1 << 16), st.integers(0, 40),
                               st.one_of(st.sampled_from(HOSTILE), st.binary(max_size=30))),
                     st.binary(max_size=200), st.just(base[: len(base) // 2]))


def _toy_file(rel: str) -> bytes:
    return (TOY / rel).read_bytes()


def _exam(folder: Path, data: bytes) -> object:
    shutil.copytree(TOY / "exam", folder / "exam")
    (folder / "exam" / "exam.yaml").write_bytes(data)
    return load_exam(folder / "exam")


def _project(folder: Path, data: bytes) -> object:
    (folder / "acceptance.yaml").write_bytes(data)
    return load_config(folder)


def _in(name: str, load: Callable[[Path], object]) -> Callable[[Path, bytes], object]:
    def run(folder: Path, data: bytes) -> object:
        (folder / name).write_bytes(data)
        return load(folder / name)

    return run


FORMATS: dict[str, tuple[bytes, Callable[[Path, bytes], object]]] = {
    "caliber": (_toy_file("exam/caliber.yaml"), _in("caliber.yaml", load_caliber)),
    "exam": (_toy_file("exam/exam.yaml"), _exam),
    "target": (_toy_file("target.yaml"), _in("target.yaml", Target.load)),
    "menu": (_toy_file("exam/mutations.yaml"), _in("mutations.yaml", load_menu)),
    "judge's mutants": (b"schema_version: 1\nmutants: []\n", _in("mutants.yaml", load_concrete)),
    "acceptance": (_toy_file("acceptance.yaml"), _project),
    "scripted episodes": (_toy_file("scripted/roles.yaml"), _in("roles.yaml", ScriptedDriver)),
}


def _outcome(fmt: str, run: Callable[[], object], allowed: tuple[int, ...]) -> None:
    STATS[f"{fmt}: runs"] += 1
    try:
        with deadline(20):
            run()
    except TriAgentError as exc:
        line = exc.line()
        assert int(exc.exit_code) in allowed, f"{fmt}: exit {int(exc.exit_code)}: {line}"
        assert "\n" not in line and "Traceback" not in line
        STATS[f"exit {int(exc.exit_code)}"] += 1
        return
    STATS["a result (loaded, or findings reported)"] += 1


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_yaml_format_answers_in_its_class(tmp_path_factory: pytest.TempPathFactory, fmt: str) -> None:
    base, load = FORMATS[fmt]

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(data=_mutant(base))
    def variant(data: bytes) -> None:
        folder = tmp_path_factory.mktemp("fuzz")
        _outcome(fmt, lambda: load(folder, data), (2, 3))

    variant()


def _sealed(folder: Path) -> Path:
    (folder / "d" / "sub").mkdir(parents=True)
    (folder / "d" / "a.csv").write_text("k,v\n1,2\n")
    (folder / "d" / "sub" / "b.txt").write_text("x\n")
    seal(folder / "d")
    return folder / "d"


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(which=st.sampled_from(["MANIFEST.sha256", "SEAL-LOG.jsonl"]), data=st.data())
def test_a_rewritten_manifest_or_seal_log_is_tamper_or_clean(tmp_path_factory: pytest.TempPathFactory, which: str,
                                                             data: st.DataObject) -> None:
    d = _sealed(tmp_path_factory.mktemp("seal"))
    base = (d / which).read_bytes()
    changed = data.draw(_mutant(base))
    (d / which).write_bytes(changed)
    before = {p: p.read_bytes() for p in d.rglob("*") if p.is_file()}

    def check() -> None:
        report = verify(d)
        if which == "SEAL-LOG.jsonl" and _last_line_alone(base, changed):
            # no line after the last vouches for it: the log head a caller pins does
            head_was = hashlib.sha256(base.splitlines()[-1]).hexdigest()
            assert report.log_head != head_was or not report.ok, "a changed last log line kept its head"
            return
        assert changed == base or not report.ok, "a changed manifest or log verified clean"

    _outcome(which, check, (4,))
    assert {p: p.read_bytes() for p in d.rglob("*") if p.is_file()} == before  # reading changed nothing


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(data=st.data())
def test_a_rewritten_trail_never_verifies_and_never_crashes(tmp_path_factory: pytest.TempPathFactory,
                                                            data: st.DataObject) -> None:
    store = EvidenceStore(tmp_path_factory.mktemp("trail") / "evidence")
    for name in ("round-0001", "round-0002"):
        store.append(name, "round", lambda f: (f / "x.txt").write_text("x\n"))
    base = store.trail.read_bytes()
    changed = data.draw(_mutant(base))
    store.trail.write_bytes(changed)

    def check() -> None:
        findings = store.verify_trail()
        if _last_line_alone(base, changed):
            # no line after the last vouches for it: the trail digest a caller pins does
            findings = findings or store.verify_trail(expect=hashlib.sha256(base).hexdigest())
        assert changed == base or findings, "a changed trail verified clean"
        store.entries()

    _outcome("trail", check, (4,))


def _last_line_alone(base: bytes, changed: bytes) -> bool:
    """Whether ``changed`` is ``base`` with only its last line's content rewritten (line count and ends kept)."""
    old, new = base.split(b"\n"), changed.split(b"\n")
    return changed != base and len(old) == len(new) and old[:-2] == new[:-2] and old[-1] == new[-1] == b""


def teardown_module() -> None:
    out = os.environ.get("TRI_AGENT_FUZZ_STATS")
    if out:
        Path(out).write_text(json.dumps(dict(sorted(STATS.items())), indent=1) + "\n")
