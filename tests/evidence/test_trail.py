"""The evidence store: append-only, sealed records, a hash chain that catches any rewrite."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from tri_agent import TamperDetected, UsageError
from tri_agent.evidence._trail import EvidenceStore


def _fill(text: str):  # type: ignore[no-untyped-def]
    def fill(folder: Path) -> None:
        (folder / "score.json").write_text(json.dumps({"verdict": text}) + "\n")
        (folder / "tickets").mkdir()
        (folder / "tickets" / "t-1.md").write_text(f"# {text}\n")

    return fill


def _store(tmp: Path) -> EvidenceStore:
    store = EvidenceStore(tmp / "evidence")
    store.append("round-0001", "step", _fill("red"))
    store.append("round-0002", "step", _fill("green"))
    return store


def test_a_clean_trail_verifies_and_is_deterministic(tmp_path: Path) -> None:
    a, b = _store(tmp_path / "a"), _store(tmp_path / "b")
    assert a.verify_trail(expect=a.digest()) == [] and a.digest() == b.digest()
    assert [e.seq for e in a.entries()] == [0, 1] and a.entries()[1].previous_line_sha256


def test_evidence_is_never_overwritten(tmp_path: Path) -> None:
    store = _store(tmp_path)
    with pytest.raises(UsageError, match="never overwritten"):
        store.append("round-0002", "round", _fill("forged"))


@pytest.mark.parametrize("tamper,where", [
    (lambda s: (s.root / "records/round-0001/score.json").write_text('{"verdict": "green"}\n'), "round-0001"),
    (lambda s: (s.root / "records/round-0002/tickets/t-1.md").unlink(), "round-0002"),
    (lambda s: (s.root / "records/round-0001/extra.txt").write_text("x\n"), "round-0001"),
    (lambda s: s.trail.write_text(s.trail.read_text().splitlines()[1] + "\n"), "TRAIL.jsonl:1"),
    (lambda s: s.trail.write_text("\n".join(reversed(s.trail.read_text().splitlines())) + "\n"), "TRAIL.jsonl:1"),
    (lambda s: __import__("shutil").rmtree(s.root / "records/round-0002"), "round-0002"),
    (lambda s: (s.root / "records/round-0009").mkdir(), "round-0009"),
    # the bytes change, every line still parses and the chain (over LF-split lines) would still hold
    (lambda s: s.trail.write_bytes(s.trail.read_bytes().replace(b"\n", b"\r\n")), "TRAIL.jsonl:1"),
    (lambda s: s.trail.write_bytes(s.trail.read_bytes()[:-1]), "TRAIL.jsonl"),
    (lambda s: s.trail.write_bytes(s.trail.read_bytes().replace(b'"kind": "step"', b'"kind":  "step"', 1)),
     "TRAIL.jsonl:1"),
    (lambda s: s.trail.write_bytes(s.trail.read_bytes() + b"\n"), "TRAIL.jsonl:3"),
])
def test_any_tampering_is_caught(tmp_path: Path, tamper: object, where: str) -> None:
    store = _store(tmp_path)
    tamper(store)  # type: ignore[operator]
    findings = store.verify_trail()
    assert findings and any(where in f.where for f in findings)
    if "write_bytes" in inspect.getsource(tamper):  # type: ignore[arg-type]  # a trail not byte-exact: no append
        with pytest.raises(TamperDetected):
            store.append("round-0003", "step", _fill("more"))


def test_a_consistent_rewrite_of_the_whole_trail_needs_the_pinned_digest(tmp_path: Path) -> None:
    store = _store(tmp_path / "real")
    pinned = store.digest()
    forged = EvidenceStore(tmp_path / "real" / "evidence")
    import shutil

    shutil.rmtree(forged.root)
    forged.append("round-0001", "round", _fill("green"))
    forged.append("round-0002", "round", _fill("green"))
    assert forged.verify_trail() == []  # self-consistent
    assert forged.verify_trail(expect=pinned)  # but not the history that was pinned


def test_resume_drops_half_written_records_only(tmp_path: Path) -> None:
    store = _store(tmp_path)
    (store.root / ".staging-round-0003").mkdir()
    (store.root / "records" / "round-0004").mkdir()  # renamed into place, never chained
    assert store.resume() == [".staging-round-0003", "records/round-0004"]
    assert store.verify_trail() == [] and [e.name for e in store.entries()] == ["round-0001", "round-0002"]


def test_verify_trail_command(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    store = _store(tmp_path)
    code, out, _ = cli("verify-trail", store.root, "--expect", store.digest())
    assert code == 0 and out.startswith("OK 2 records")
    (store.root / "records" / "round-0001" / "score.json").write_text("{}\n")
    code, out, _ = cli("verify-trail", store.root)
    assert code == 4 and "records/round-0001/score.json: modified" in out
