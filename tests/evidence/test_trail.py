"""The evidence store: append-only, sealed records, a hash chain that catches any rewrite."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from tri_agent import TamperDetected, TriAgentError, UsageError
from tri_agent.evidence._seal import seal, verify
from tri_agent.evidence._trail import EvidenceStore, TrailFinding


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


def _rewrite_line(store: EvidenceStore, index: int, **change: object) -> None:
    """Rewrite one trail line byte-exactly as ``append`` would, with ``change`` applied."""
    lines = store.trail.read_bytes().split(b"\n")[:-1]
    entry = json.loads(lines[index])
    entry.update(change)
    lines[index] = json.dumps(entry, sort_keys=True).encode()
    store.trail.write_bytes(b"\n".join(lines) + b"\n")


def test_an_empty_store_has_no_entries_and_the_digest_of_no_bytes(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "evidence")
    assert store.entries() == [] and store.verify_trail() == [] and store.resume() == []
    assert store.digest() == hashlib.sha256(b"").hexdigest()


def test_a_trail_line_is_sorted_compact_json_with_the_chain(tmp_path: Path) -> None:
    store = _store(tmp_path)
    first, second = store.trail.read_bytes().split(b"\n")[:2]
    digest = store.entries()[0].digest
    assert first == (b'{"digest": "' + digest.encode() + b'", "kind": "step", "name": "round-0001", '
                     b'"previous_line_sha256": null, "schema_version": 1, "seq": 0}')
    assert json.loads(second)["previous_line_sha256"] == hashlib.sha256(first).hexdigest()
    assert stat.S_IMODE(store.trail.stat().st_mode) == 0o644 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize(("change", "why"), [({"seq": 5}, "only the sequence"),
                                              ({"previous_line_sha256": "0" * 64}, "only the hash")])
def test_a_chain_break_in_one_field_alone_is_found(tmp_path: Path, change: dict[str, object], why: str) -> None:
    store = _store(tmp_path)
    _rewrite_line(store, 1, **change)
    assert store.verify_trail() == [
        TrailFinding(where="TRAIL.jsonl:2", detail="chain broken (a line removed, reordered or rewritten)")], why


def test_junk_in_the_trail_is_named_by_line_and_refused_on_read(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.trail.write_bytes(b"junk\n" + store.trail.read_bytes())
    findings = store.verify_trail()
    assert findings[:2] == [TrailFinding(where="TRAIL.jsonl:1", detail="is not a trail entry"),
                            TrailFinding(where="TRAIL.jsonl:1", detail="not a trail entry")]
    assert TrailFinding(where="TRAIL.jsonl:2", detail="chain broken (a line removed, reordered or rewritten)") \
        in findings
    # the records behind the junk line are still matched with their entries, not reported as strays
    assert not any(f.detail == "not in the trail" for f in findings)
    with pytest.raises(TamperDetected) as err:
        store.entries()
    assert err.value.message == f"{store.trail}: TRAIL.jsonl:1: is not a trail entry"
    assert err.value.hint == "the trail was edited; run tri-agent verify-trail on it"
    store.trail.write_bytes(store.trail.read_bytes()[5:-1])
    assert store.verify_trail()[0] == TrailFinding(
        where="TRAIL.jsonl", detail="the last line has no final newline (bytes cut or added)")


def test_two_bad_records_are_both_reported(tmp_path: Path) -> None:
    store = _store(tmp_path)
    shutil.rmtree(store.root / "records" / "round-0001")
    shutil.rmtree(store.root / "records" / "round-0002")
    (store.root / "records" / "stray-a").mkdir()
    (store.root / "records" / ".stray-b").mkdir()
    assert store.verify_trail() == [TrailFinding(where="records/round-0001", detail="recorded but missing"),
                                    TrailFinding(where="records/round-0002", detail="recorded but missing"),
                                    TrailFinding(where="records/.stray-b", detail="not in the trail"),
                                    TrailFinding(where="records/stray-a", detail="not in the trail")]


def test_a_record_resealed_after_an_edit_no_longer_matches_its_trail_digest(tmp_path: Path) -> None:
    store = _store(tmp_path)
    record = store.root / "records" / "round-0001"
    for name in ("MANIFEST.sha256", "SEAL-LOG.jsonl"):
        (record / name).chmod(0o644)
        (record / name).unlink()
    (record / "score.json").write_text('{"verdict": "green"}\n')
    seal(record)  # self-consistent again: only the digest in the trail tells
    assert verify(record).findings == []
    findings = store.verify_trail()
    assert len(findings) == 1 and findings[0].where == "records/round-0001"
    assert findings[0].detail.startswith("digest: manifest digest ") and "!= expected" in findings[0].detail
    assert findings[0].detail.endswith(store.entries()[0].digest)


def test_a_record_whose_manifest_is_gone_is_named(tmp_path: Path) -> None:
    store = _store(tmp_path)
    (store.root / "records" / "round-0002" / "MANIFEST.sha256").unlink()
    [finding] = store.verify_trail()
    assert finding.where == "records/round-0002" and finding.detail.endswith(
        "MANIFEST.sha256 is missing; this directory was never sealed, or it was removed")


def test_the_pinned_digest_finding_names_both_digests(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.verify_trail(expect="f" * 64) == [
        TrailFinding(where="TRAIL.jsonl", detail=f"trail digest {store.digest()} != expected {'f' * 64}")]


def test_a_record_is_refused_when_its_name_is_in_the_trail_or_its_folder_exists(tmp_path: Path) -> None:
    store = _store(tmp_path)
    shutil.rmtree(store.root / "records" / "round-0001")
    with pytest.raises(UsageError) as err:
        store.append("round-0001", "step", _fill("again"))
    assert err.value.line() == "evidence record 'round-0001' already exists; evidence is never overwritten"
    (store.root / "records" / "round-0003").mkdir()
    with pytest.raises(UsageError, match="'round-0003' already exists"):
        store.append("round-0003", "step", _fill("again"))


@pytest.mark.parametrize("name", ["", "a/b", ".hidden", " round", "round ", "round\n", "r" * 256, "a\0b"])
def test_a_record_name_must_be_a_plain_folder_name(tmp_path: Path, name: str) -> None:
    with pytest.raises(UsageError, match="is not a plain folder name"):
        EvidenceStore(tmp_path / "evidence").append(name, "step", _fill("x"))


def test_names_with_dots_and_spaces_inside_are_plain(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "evidence")
    store.append("round.1 final", "step", _fill("x"))
    assert [e.name for e in store.entries()] == ["round.1 final"] and store.verify_trail() == []


def test_a_crash_left_staging_folder_is_cleared_before_the_record_is_staged(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "evidence")
    (store.root / ".staging-round-0001").mkdir(parents=True)
    (store.root / ".staging-round-0001" / "planted.txt").write_text("from a crashed attempt\n")
    store.append("round-0001", "step", _fill("x"))
    assert not (store.root / "records" / "round-0001" / "planted.txt").exists()
    assert store.verify_trail() == []


def test_crlf_text_is_sealed_only_when_the_record_says_so(tmp_path: Path) -> None:
    def crlf(folder: Path) -> None:
        (folder / "input.csv").write_bytes(b"a,b\r\n1,2\r\n")

    store = EvidenceStore(tmp_path / "evidence")
    with pytest.raises(TriAgentError, match="CRLF"):
        store.append("round-0001", "step", crlf)
    store.append("round-0002", "step", crlf, crlf_kept=True)
    assert store.verify_trail() == []


def test_a_trail_that_is_a_symlink_is_never_appended_through(tmp_path: Path) -> None:
    store = _store(tmp_path)
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(store.trail.read_bytes())
    store.trail.unlink()
    store.trail.symlink_to(elsewhere)
    with pytest.raises(OSError):
        store.append("round-0003", "step", _fill("x"))
    assert elsewhere.read_bytes().count(b"\n") == 2


@pytest.mark.parametrize("name", ["[" * 300, "../../outside", "a\u0000b", ".."])
def test_a_trail_line_naming_no_plain_folder_is_a_finding_never_a_lookup(tmp_path: Path, name: str) -> None:
    """A rewritten line may name anything (found by the fuzz suite: a name too long for the file system crashed
    verify-trail with ENAMETOOLONG); such a name is named as a finding and never looked up, inside the store or
    outside it."""
    store = _store(tmp_path)
    (tmp_path / "outside").mkdir()
    lines = store.trail.read_bytes().splitlines(keepends=True)
    entry = json.loads(lines[0])
    lines[0] = json.dumps({**entry, "name": name}, sort_keys=True).encode() + b"\n"
    store.trail.write_bytes(b"".join(lines))
    findings = store.verify_trail()
    assert any(f.detail == "not a plain record folder name" for f in findings)
    assert not any("outside" in f.where and f.detail != "not a plain record folder name" for f in findings)
