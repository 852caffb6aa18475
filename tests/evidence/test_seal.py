"""Sealing rules and verify: every tamper kind, every rejection, reseal and the seal log."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tri_agent import TamperDetected, UsageError, seal, verify
from tri_agent.evidence._seal import digest_of, preview


def _tree(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "answers.jsonl").write_text('{"k": "1", "v": "2.35"}\n')
    (root / "sub" / "b.csv").write_text("k,v\n1,2\n")
    (root / "empty").write_bytes(b"")
    return root


def test_seal_then_verify_is_clean(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    digest = seal(d)
    report = verify(d, expect=digest)
    assert report.ok and report.files == 3 and report.digest == digest


@pytest.mark.parametrize("tamper,kind", [
    (lambda d: (d / "answers.jsonl").write_text('{"k": "1", "v": "2.36"}\n'), "modified"),
    (lambda d: (d / "sub" / "b.csv").unlink(), "missing"),
    (lambda d: (d / "new.txt").write_text("x\n"), "added"),
    (lambda d: (d / "sub" / "b.csv").rename(d / "sub" / "c.csv"), "renamed"),
    (lambda d: os.symlink("/etc/hostname", d / "link"), "unsealable"),
])
def test_every_tamper_kind_is_reported(tmp_path: Path, tamper: object, kind: str) -> None:
    d = _tree(tmp_path / "d")
    seal(d)
    tamper(d)  # type: ignore[operator]
    report = verify(d)
    assert not report.ok
    assert kind in {f.kind for f in report.findings}


def test_consistent_rewrite_of_file_and_manifest_is_caught_by_expect(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    digest = seal(d)
    (d / "answers.jsonl").write_text('{"k": "1", "v": "9.99"}\n')
    (d / "MANIFEST.sha256").write_bytes(__import__("tri_agent.evidence._manifest", fromlist=["render"]).render(
        preview(d)))
    assert not verify(d).ok  # the seal log still names the old digest
    report = verify(d, expect=digest)
    assert {f.kind for f in report.findings} >= {"digest"}


@pytest.mark.parametrize("rewrite", [lambda b: b.replace(b"\n", b"\r\n"), lambda b: b[:-1],
                                     lambda b: b.replace(b'": ', b'":  ', 1)])
def test_a_seal_log_that_is_not_byte_exact_is_tamper(tmp_path: Path, rewrite: object) -> None:
    d = _tree(tmp_path / "d")
    seal(d)
    log = d / "SEAL-LOG.jsonl"
    log.write_bytes(rewrite(log.read_bytes()))  # type: ignore[operator]
    assert [f.kind for f in verify(d).findings] == ["log"]


def test_rewritten_seal_log_is_detected(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    seal(d)
    log = d / "SEAL-LOG.jsonl"
    entry = json.loads(log.read_text())
    entry["reason"] = "edited"
    log.write_text(json.dumps(entry) + "\n")
    # a first entry with a reason is still a valid entry; the chain must catch edits of later lines
    assert verify(d).ok
    (d / "x").write_text("1\n")
    new = digest_of(preview(d))
    seal(d, reseal=True, expect=new, reason="add x")
    lines = log.read_text().splitlines()
    log.write_text(json.dumps(dict(json.loads(lines[0]), digest="0" * 64)) + "\n" + lines[1] + "\n")
    assert [f.kind for f in verify(d).findings] == ["log"]


@pytest.mark.parametrize("make,reason", [
    (lambda d: (d / "crlf.txt").write_bytes(b"a\r\nb\r\n"), "CRLF"),
    (lambda d: os.symlink("../outside", d / "link"), "symlink"),
    (lambda d: os.mkfifo(d / "fifo"), "special file"),
    (lambda d: (d / "bad\nname").write_text("x\n"), "control character"),
    (lambda d: open(os.path.join(os.fsencode(d), b"caf\xe9"), "w").close(), "not valid UTF-8"),
])
def test_seal_rejects(tmp_path: Path, make: object, reason: str) -> None:
    d = _tree(tmp_path / "d")
    make(d)  # type: ignore[operator]
    with pytest.raises(TamperDetected, match=reason):
        seal(d)
    assert not (d / "MANIFEST.sha256").exists()


def test_binary_files_may_hold_crlf_bytes(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    (d / "img.bin").write_bytes(b"\x00\x01\r\n\x02")
    assert seal(d)


def test_reseal_rules(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    first = seal(d)
    with pytest.raises(TamperDetected, match="already sealed"):
        seal(d)
    (d / "answers.jsonl").write_text('{"k": "1", "v": "2.40"}\n')
    with pytest.raises(UsageError, match="--expect"):
        seal(d, reseal=True, reason="fix")
    with pytest.raises(UsageError, match="--reason"):
        seal(d, reseal=True, expect="0" * 64, reason=" ")
    with pytest.raises(TamperDetected, match="would produce"):
        seal(d, reseal=True, expect=first, reason="oracle fix")
    new = digest_of(preview(d))
    assert seal(d, reseal=True, expect=new, reason="oracle fix") == new
    log = [json.loads(line) for line in (d / "SEAL-LOG.jsonl").read_text().splitlines()]
    assert [(e["action"], e["previous_digest"], e["digest"], e["reason"]) for e in log] == [
        ("seal", None, first, None), ("reseal", first, new, "oracle fix")]
    assert verify(d, expect=new).ok


def test_reseal_of_unsealed_dir_is_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not sealed"):
        seal(_tree(tmp_path / "d"), reseal=True, expect="0" * 64, reason="r")


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(data=st.binary(min_size=1, max_size=64), position=st.integers(0, 63), flip=st.integers(1, 255),
       action=st.sampled_from(["byte", "add", "remove"]))
def test_any_single_change_fails_verify(tmp_path_factory: pytest.TempPathFactory, data: bytes, position: int,
                                         flip: int, action: str) -> None:
    d = tmp_path_factory.mktemp("prop")
    (d / "f.bin").write_bytes(data + b"\0")
    (d / "g.txt").write_text("stable\n")
    digest = seal(d)
    if action == "byte":
        raw = bytearray((d / "f.bin").read_bytes())
        raw[position % len(raw)] ^= flip
        (d / "f.bin").write_bytes(bytes(raw))
    elif action == "add":
        (d / "h.bin").write_bytes(data)
    else:
        (d / "g.txt").unlink()
    assert not verify(d, expect=digest).ok


@pytest.mark.parametrize("name", ["SEAL-LOG.jsonl", "MANIFEST.sha256"])
def test_planted_symlink_in_place_of_our_files_is_refused(tmp_path: Path, name: str) -> None:
    d = _tree(tmp_path / "d")
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    os.symlink(victim, d / name)
    with pytest.raises(TamperDetected, match="not a regular file"):
        seal(d)
    assert victim.read_text() == "untouched\n"


def test_keep_crlf_is_recorded_and_verified(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    (d / "chaos.csv").write_bytes(b"k,v\r\n1,2\r\n")
    digest = seal(d, crlf_kept=True)
    assert verify(d, expect=digest).ok
    manifest = d / "MANIFEST.sha256"
    manifest.write_text(manifest.read_text().replace(" crlf=kept", ""))  # drop the flag: tamper
    report = verify(d, expect=digest)
    assert {f.kind for f in report.findings} >= {"digest", "unsealable"}


def test_deleting_the_manifest_does_not_reopen_sealing(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    seal(d)
    (d / "MANIFEST.sha256").unlink()
    with pytest.raises(TamperDetected, match="already sealed"):
        seal(d)


def test_first_seal_takes_no_expect_or_reason(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="belong to --reseal"):
        seal(_tree(tmp_path / "d"), expect="0" * 64)


def test_bad_reason_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    digest = seal(d)
    (d / "x").write_text("1\n")
    with pytest.raises(UsageError, match="not valid UTF-8"):
        seal(d, reseal=True, expect=digest_of(preview(d)), reason="bad\udcff")
    report = verify(d, expect=digest)
    assert [f.kind for f in report.findings] == ["added"]  # the seal itself is intact


def test_duplicate_or_unsorted_manifest_entries_are_tamper(tmp_path: Path) -> None:
    from tri_agent.evidence._manifest import Entry, parse, render

    a, b = Entry("a", "0" * 64, 1), Entry("b", "1" * 64, 1)
    for entries in ([b, a], [a, b, a], [a, a]):
        with pytest.raises(TamperDetected, match="strictly sorted"):
            parse(render(entries), "m")


def test_verify_reports_the_log_head(tmp_path: Path) -> None:
    import hashlib

    d = _tree(tmp_path / "d")
    seal(d)
    line = (d / "SEAL-LOG.jsonl").read_bytes().splitlines()[-1]
    assert verify(d).log_head == hashlib.sha256(line).hexdigest()


def test_a_missing_seal_log_is_a_finding_of_its_own(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    digest = seal(d)
    log = d / "SEAL-LOG.jsonl"
    log.chmod(0o644)
    log.unlink()
    report = verify(d, expect=digest)
    assert not report.ok and report.log_head is None and report.digest == digest
    assert [(f.kind, f.path, f.detail) for f in report.findings] == [("log", "SEAL-LOG.jsonl", "seal log is missing")]
