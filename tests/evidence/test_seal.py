"""Sealing rules and verify: every tamper kind, every rejection, reseal and the seal log."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tri_agent import TamperDetected, UsageError, seal, verify
from tri_agent.evidence._manifest import Entry, render
from tri_agent.evidence._seal import digest_of, exact_lines, preview, read_log


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


@pytest.mark.parametrize("at", ["[[2026-12-02T00:42:46Z", "2026-12-02 00:42:46", "yesterday", ""])
def test_a_seal_log_time_that_is_no_time_is_tamper(tmp_path: Path, at: str) -> None:
    d = _tree(tmp_path / "d")
    seal(d)
    log = d / "SEAL-LOG.jsonl"
    entry = json.loads(log.read_text())
    log.write_text(json.dumps(dict(entry, at=at), sort_keys=True, ensure_ascii=False) + "\n")
    assert [(f.kind, f.detail) for f in verify(d).findings] == [("log", "line 1: not an entry")]


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


def _lines(d: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (d / "SEAL-LOG.jsonl").read_bytes().splitlines()]


def _findings(d: Path, expect: str | None = None) -> list[tuple[str, str, str]]:
    return [(f.kind, f.path, f.detail) for f in verify(d, expect=expect).findings]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_seal_writes_the_manifest_and_one_log_line_naming_its_digest(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    before = datetime.now(UTC).replace(microsecond=0)
    digest = seal(d)
    manifest = (d / "MANIFEST.sha256").read_bytes()
    assert digest == _sha(manifest) == digest_of(preview(d)) and manifest == render(preview(d))
    [line] = (d / "SEAL-LOG.jsonl").read_bytes().splitlines(keepends=True)
    entry = json.loads(line)
    assert line == (json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n").encode()  # canonical JSON
    assert {k: v for k, v in entry.items() if k != "at"} == {
        "schema_version": 1, "seq": 0, "action": "seal", "digest": digest, "previous_digest": None, "reason": None,
        "previous_line_sha256": None}
    at = datetime.strptime(str(entry["at"]), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before <= at <= datetime.now(UTC)
    assert [e.model_dump() for e in read_log(d)] == [entry]
    report = verify(d, expect=digest)
    assert (report.ok, report.digest, report.expected_digest, report.files, report.log_head) == (
        True, digest, digest, 3, _sha(line.rstrip(b"\n")))


def test_the_log_time_is_utc_whatever_the_local_zone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "XYZ-14")  # POSIX: fourteen hours east of UTC
    time.tzset()
    try:
        seal(_tree(tmp_path / "d"))
    finally:
        monkeypatch.undo()
        time.tzset()
    at = datetime.strptime(str(_lines(tmp_path / "d")[0]["at"]), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert abs((datetime.now(UTC) - at).total_seconds()) < 600


def test_a_reseal_chains_its_line_to_the_one_before(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    first = seal(d)
    (d / "answers.jsonl").write_text('{"k": "1", "v": "2.40"}\n')
    second = digest_of(preview(d))
    assert seal(d, reseal=True, expect=second, reason="caf\u00e9 fix \u2713") == second
    (d / "new.txt").write_text("n\n")
    third = digest_of(preview(d))
    assert seal(d, reseal=True, expect=third, reason="add new") == third
    raw = (d / "SEAL-LOG.jsonl").read_bytes()
    assert "caf\u00e9 fix \u2713".encode() in raw  # written as UTF-8 text, not \\u escapes
    lines = raw.splitlines()
    log = _lines(d)
    assert [(e["seq"], e["action"], e["previous_digest"], e["digest"], e["reason"], e["previous_line_sha256"])
            for e in log] == [
        (0, "seal", None, first, None, None),
        (1, "reseal", first, second, "caf\u00e9 fix \u2713", _sha(lines[0])),
        (2, "reseal", second, third, "add new", _sha(lines[1]))]
    assert [e.seq for e in read_log(d)] == [0, 1, 2]
    report = verify(d, expect=third)
    assert report.ok and report.files == 4 and report.log_head == _sha(lines[2])


def _relog(d: Path, edit: object) -> None:
    """Rewrite the seal log line by line as its writer would (canonical JSON), after ``edit`` of the entries."""
    entries = _lines(d)
    edit(entries)  # type: ignore[operator]
    (d / "SEAL-LOG.jsonl").write_bytes(b"".join(
        (json.dumps(e, sort_keys=True, ensure_ascii=False) + "\n").encode() for e in entries))


def _resealed(tmp_path: Path) -> Path:
    d = _tree(tmp_path / "d")
    seal(d)
    (d / "x").write_text("1\n")
    seal(d, reseal=True, expect=digest_of(preview(d)), reason="add x")
    return d


def _chain(entries: list[dict[str, object]]) -> None:
    """Recompute every previous_line_sha256: what a forger who knows the format does."""
    for i in range(1, len(entries)):
        entries[i]["previous_line_sha256"] = _sha(json.dumps(entries[i - 1], sort_keys=True,
                                                             ensure_ascii=False).encode())


@pytest.mark.parametrize(("edit", "detail"), [
    (lambda es: es[1].update(seq=5), "line 2: chain broken (a line was removed, reordered or rewritten)"),
    (lambda es: es[0].update(seq=1), "line 1: chain broken (a line was removed, reordered or rewritten)"),
    (lambda es: es[0].update(reason="nothing to see"),
     "line 2: chain broken (a line was removed, reordered or rewritten)"),
    (lambda es: es[1].update(previous_line_sha256=None),
     "line 2: chain broken (a line was removed, reordered or rewritten)"),
    (lambda es: es[0].update(previous_line_sha256="0" * 64),
     "line 1: chain broken (a line was removed, reordered or rewritten)"),
    (lambda es: es.reverse(), "line 1: chain broken (a line was removed, reordered or rewritten)"),
    (lambda es: es.pop(0), "line 1: chain broken (a line was removed, reordered or rewritten)"),
    (lambda es: es.append(dict(es[1])), "line 3: chain broken (a line was removed, reordered or rewritten)"),
    (lambda es: es.pop(), "last logged digest is not the manifest's digest"),
    (lambda es: es.clear(), "last logged digest is not the manifest's digest"),
    (lambda es: (es.pop(), es.append(dict(es[0], seq=1, digest="0" * 64)), _chain(es)),
     "last logged digest is not the manifest's digest"),
])
def test_each_rewrite_of_the_seal_log_is_named(tmp_path: Path, edit: object, detail: str) -> None:
    d = _resealed(tmp_path)
    _relog(d, edit)
    assert _findings(d) == [("log", "SEAL-LOG.jsonl", detail)]


@pytest.mark.parametrize(("rewrite", "detail"), [
    (lambda b: b[:-1], "the last line has no final newline (bytes cut or added)"),
    (lambda b: b + b"{}", "the last line has no final newline (bytes cut or added)"),
    (lambda b: b.replace(b"\n", b"\r\n", 1), "line 1: not byte-exact (line end, spacing or key order changed)"),
    (lambda b: b.replace(b'", "', b'","', 1), "line 1: not byte-exact (line end, spacing or key order changed)"),
    (lambda b: b + b"\n", "line 3: not an entry"),
    (lambda b: b"\n" + b, "line 1: not an entry"),
    (lambda b: b.replace(b'"seal"', b'"sealed"'), "line 1: not an entry"),
])
def test_a_log_not_as_written_is_named_by_its_line(tmp_path: Path, rewrite: object, detail: str) -> None:
    d = _resealed(tmp_path)
    log = d / "SEAL-LOG.jsonl"
    log.write_bytes(rewrite(log.read_bytes()))  # type: ignore[operator]
    assert _findings(d) == [("log", "SEAL-LOG.jsonl", detail)]


def test_an_empty_seal_log_is_no_seal(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    seal(d)
    (d / "SEAL-LOG.jsonl").write_bytes(b"")
    report = verify(d)
    assert report.log_head is None
    assert _findings(d) == [("log", "SEAL-LOG.jsonl", "last logged digest is not the manifest's digest")]


def _canonical(line: bytes) -> bytes:
    if not line.startswith(b"{"):
        raise ValueError("not an entry")
    return line.strip()


@pytest.mark.parametrize(("raw", "lines", "problems"), [
    (b"", [], []),
    (b"{a}\n", [b"{a}"], []),
    (b"{a}\n{b}\n", [b"{a}", b"{b}"], []),
    (b"{a}\n{b}", [b"{a}", b"{b}"], [(0, "the last line has no final newline (bytes cut or added)")]),
    (b"{a b}\n{c d}", [b"{a b}", b"{c d}"], [(0, "the last line has no final newline (bytes cut or added)")]),
    (b"x\n{b} \ny\n", [b"x", b"{b} ", b"y"], [
        (1, "not an entry"), (2, "not byte-exact (line end, spacing or key order changed)"), (3, "not an entry")]),
    (b"\n", [b""], [(1, "not an entry")]),
    (b"{a}\r\n", [b"{a}\r"], [(1, "not byte-exact (line end, spacing or key order changed)")]),
])
def test_exact_lines_splits_on_lf_alone_and_names_every_problem(raw: bytes, lines: list[bytes],
                                                                 problems: list[tuple[int, str]]) -> None:
    assert exact_lines(raw, _canonical) == (lines, problems)


def test_every_difference_is_reported_in_kind_then_path_order(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    for name, text in [("a", "same\n"), ("b", "gone\n"), ("c", "moved\n"), ("y", "old\n"), ("z", "old too\n")]:
        (d / name).write_text(text)
    old = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in d.iterdir()}
    seal(d)
    (d / "z").write_text("new!\n")
    (d / "y").write_text("newer\n")
    (d / "b").unlink()
    (d / "c").rename(d / "0-moved")
    (d / "0-added").write_text("fresh\n")
    (d / "bad\x01name").write_text("x\n")
    new_y, new_z, added = (_sha(b"newer\n"), _sha(b"new!\n"), _sha(b"fresh\n"))
    assert _findings(d) == [
        ("modified", "y", f"sha256 {old['y'][:16]}.. -> {new_y[:16]}.., size 4 -> 6"),
        ("modified", "z", f"sha256 {old['z'][:16]}.. -> {new_z[:16]}.., size 8 -> 5"),
        ("renamed", "c", "now at 0-moved"),
        ("missing", "b", f"sha256 {old['b'][:16]}.., size 5"),
        ("added", "0-added", f"sha256 {added[:16]}.., size 6"),
        ("unsealable", "bad\x01name", "name holds a control character; rename it"),
    ]


def test_renames_pair_each_missing_file_with_one_copy_of_its_content(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    (d / "m1").write_text("twin\n")
    (d / "m2").write_text("twin\n")
    (d / "solo").write_text("solo\n")
    seal(d)
    for name in ("m1", "m2", "solo"):
        (d / name).unlink()
    for name in ("n3", "n1", "n2"):
        (d / name).write_text("twin\n")
    (d / "other").write_text("solo, but a byte longer\n")
    twin = _sha(b"twin\n")[:16]
    assert _findings(d) == [
        ("renamed", "m1", "now at n1"), ("renamed", "m2", "now at n2"),
        ("missing", "solo", f"sha256 {_sha(b'solo' + bytes([10]))[:16]}.., size 5"),
        ("added", "n3", f"sha256 {twin}.., size 5"),
        ("added", "other", f"sha256 {_sha(b'solo, but a byte longer' + bytes([10]))[:16]}.., size 24"),
    ]


def test_same_bytes_of_another_size_is_no_rename() -> None:
    from tri_agent.evidence._seal import diff

    sha = "a" * 64
    assert [(f.kind, f.path) for f in diff([Entry("old", sha, 1)], [Entry("new", sha, 2)])] == [
        ("missing", "old"), ("added", "new")]
    assert [(f.kind, f.path) for f in diff([Entry("old", sha, 1)], [Entry("new", sha, 1)])] == [("renamed", "old")]
    assert diff([Entry("a", sha, 1)], [Entry("a", sha, 1)]) == []
    assert [f.kind for f in diff([Entry("a", sha, 1)], [Entry("a", sha, 2)])] == ["modified"]


def _refusal(call: object) -> tuple[type[Exception], int, str]:
    with pytest.raises((TamperDetected, UsageError)) as err:
        call()  # type: ignore[operator]
    return type(err.value), int(err.value.exit_code), err.value.line()


def test_each_seal_rule_refuses_with_its_code_and_message(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    root = d.resolve()
    assert _refusal(lambda: seal(d, reseal=True, expect="0" * 64, reason="r")) == (
        UsageError, 2, f"--reseal given but {root} is not sealed; seal it first")
    for expect, reason in (("0" * 64, None), (None, "r"), ("0" * 64, "r")):
        assert _refusal(lambda e=expect, r=reason: seal(d, expect=e, reason=r)) == (
            UsageError, 2, "--expect and --reason belong to --reseal; a first seal takes neither")
    assert not (d / "MANIFEST.sha256").exists() and not (d / "SEAL-LOG.jsonl").exists()
    first = seal(d)
    assert _refusal(lambda: seal(d)) == (
        TamperDetected, 4, f"{root} is already sealed (it has a manifest or a seal log); "
                           "to change sealed content run: seal --reseal --expect NEW_DIGEST --reason TEXT")
    assert _refusal(lambda: seal(d, expect=first, reason="r")) == _refusal(lambda: seal(d))
    needs = (UsageError, 2, "--reseal needs --expect NEW_DIGEST and a non-empty --reason TEXT; "
                            "get the digest with: tri-agent seal DIR --dry-run")
    for expect, reason in ((None, "r"), ("", "r"), (first, None), (first, ""), (first, " \t\n")):
        assert _refusal(lambda e=expect, r=reason: seal(d, reseal=True, expect=e, reason=r)) == needs
    assert _refusal(lambda: seal(d, reseal=True, expect=first, reason="bad \udcff")) == (
        UsageError, 2, "--reason is not valid UTF-8 text; write the reason in UTF-8")
    (d / "x").write_text("1\n")
    new = digest_of(preview(d))
    assert _refusal(lambda: seal(d, reseal=True, expect=first, reason="add x")) == (
        TamperDetected, 4, f"reseal of {root} would produce {new}, but --expect declared {first}; "
                           "check what changed (tri-agent verify) and declare the digest you mean")
    assert len(_lines(d)) == 1  # nothing was written
    assert _findings(d, expect=first) == [("added", "x", f"sha256 {_sha(b'1' + bytes([10]))[:16]}.., size 2")]
    assert seal(d, reseal=True, expect=new, reason="add x") == new


def test_a_reseal_to_the_same_content_is_allowed_and_logged(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    digest = seal(d)
    assert seal(d, reseal=True, expect=digest, reason="re-read, nothing changed") == digest
    assert [(e["action"], e["previous_digest"], e["digest"]) for e in _lines(d)] == [
        ("seal", None, digest), ("reseal", digest, digest)]
    assert verify(d, expect=digest).ok


def test_a_lost_seal_log_keeps_the_directory_sealed(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    digest = seal(d)
    (d / "SEAL-LOG.jsonl").unlink()
    with pytest.raises(TamperDetected, match="already sealed"):
        seal(d)
    assert seal(d, reseal=True, expect=digest, reason="log restored") == digest
    assert [(e["seq"], e["action"], e["previous_digest"]) for e in _lines(d)] == [(0, "reseal", digest)]


@pytest.mark.parametrize("count", [1, 2, 3])
def test_preview_names_the_first_refusal_and_counts_the_rest(tmp_path: Path, count: int) -> None:
    d = _tree(tmp_path / "d")
    for i in range(count):
        (d / f"c{i}.txt").write_bytes(b"a\r\n")
    more = f" (and {count - 1} more)" if count > 1 else ""
    assert _refusal(lambda: preview(d)) == (
        TamperDetected, 4, f"cannot seal {d.resolve()}/c0.txt: text file has CRLF line endings; convert to LF "
                           f"(e.g. dos2unix){more}")
    assert _refusal(lambda: seal(d)) == _refusal(lambda: preview(d))
    assert not (d / "MANIFEST.sha256").exists() and not (d / "SEAL-LOG.jsonl").exists()
    assert [e.path for e in preview(d, crlf_kept=True) if e.path[0] == "c"] == [f"c{i}.txt" for i in range(count)]


def test_kept_crlf_is_in_the_manifest_and_its_digest(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    (d / "chaos.csv").write_bytes(b"k,v\r\n1,2\r\n")
    entries = preview(d, crlf_kept=True)
    digest = seal(d, crlf_kept=True)
    manifest = (d / "MANIFEST.sha256").read_bytes()
    assert manifest == render(entries, crlf_kept=True) and manifest.split(b"\n")[0].endswith(b" crlf=kept")
    assert digest == digest_of(entries, crlf_kept=True) == _sha(manifest) != digest_of(entries)
    assert verify(d, expect=digest).ok and _lines(d)[0]["digest"] == digest


def test_verify_without_a_manifest_is_tamper(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    assert _refusal(lambda: verify(d)) == (
        TamperDetected, 4, f"{d.resolve()}/MANIFEST.sha256 is missing; this directory was never sealed, or it was "
                           "removed")


def test_verify_names_the_manifest_file_and_line_of_a_bad_manifest(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    seal(d)
    manifest = d / "MANIFEST.sha256"
    manifest.write_text(manifest.read_text().replace("# size 0", "# size zero"))
    assert _refusal(lambda: verify(d)) == (
        TamperDetected, 4, f"{d.resolve()}/MANIFEST.sha256:4: expected '# size N', found '# size zero'")


def test_a_pinned_digest_that_differs_is_a_finding(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    digest = seal(d)
    assert _findings(d, expect="f" * 64) == [("digest", "", f"manifest digest {digest} != expected {'f' * 64}")]
    assert verify(d, expect="f" * 64).expected_digest == "f" * 64 and verify(d).expected_digest is None


def test_a_manifest_rewritten_to_match_new_content_is_caught_by_the_log(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    digest = seal(d)
    (d / "answers.jsonl").write_text('{"k": "1", "v": "9.99"}\n')
    forged = render(preview(d))
    (d / "MANIFEST.sha256").write_bytes(forged)
    assert _findings(d) == [("log", "SEAL-LOG.jsonl", "last logged digest is not the manifest's digest")]
    assert _findings(d, expect=digest) == [
        ("digest", "", f"manifest digest {_sha(forged)} != expected {digest}"),
        ("log", "SEAL-LOG.jsonl", "last logged digest is not the manifest's digest")]


def test_symlinks_and_non_files_are_refused_where_we_read_or_write(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    (tmp_path / "link").symlink_to(d)
    assert _refusal(lambda: seal(tmp_path / "link")) == (
        TamperDetected, 4, f"{tmp_path / 'link'} is a symlink; seal the real directory")
    assert _refusal(lambda: verify(tmp_path / "link")) == _refusal(lambda: seal(tmp_path / "link"))
    assert _refusal(lambda: seal(d / "answers.jsonl")) == (
        UsageError, 2, f"{d / 'answers.jsonl'} is not a directory; pass the directory to seal or verify")
    assert _refusal(lambda: verify(tmp_path / "none"))[:2] == (UsageError, 2)
    for name in ("MANIFEST.sha256", "SEAL-LOG.jsonl"):
        (d / name).mkdir()
        assert _refusal(lambda: seal(d)) == (
            TamperDetected, 4, f"{d.resolve() / name} is not a regular file; remove it; only tri-agent writes it")
        (d / name).rmdir()
    seal(d)
    (d / "SEAL-LOG.jsonl").rename(tmp_path / "log")
    (d / "SEAL-LOG.jsonl").symlink_to(tmp_path / "log")
    assert _refusal(lambda: verify(d))[1:] == (
        4, f"{d.resolve() / 'SEAL-LOG.jsonl'} is not a regular file; remove it; only tri-agent writes it")


def test_a_folder_reached_through_a_symlinked_parent_is_named_by_its_real_path(tmp_path: Path) -> None:
    real = _tree(tmp_path / "real" / "d")
    (real / "crlf").write_bytes(b"\r\n")
    (tmp_path / "via").symlink_to(tmp_path / "real")
    assert _refusal(lambda: preview(tmp_path / "via" / "d"))[2].startswith(f"cannot seal {real.resolve()}/crlf: ")


def test_the_manifest_is_written_through_a_hidden_partial_file_beside_it(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    d = _tree(tmp_path / "d")
    moves: list[tuple[Path, Path, bytes]] = []
    real_replace = os.replace

    def replace(src: str, dst: Path) -> None:
        moves.append((Path(src), Path(dst), Path(src).read_bytes()))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no such folder"))  # never the system temp folder
    seal(d)
    [(src, dst, data)] = moves
    assert dst == d.resolve() / "MANIFEST.sha256" and data == dst.read_bytes() == render(preview(d))
    assert src.parent == dst.parent and src.name.startswith(".tmp-") and src.name.endswith(".partial")
    assert sorted(p.name for p in d.iterdir()) == ["MANIFEST.sha256", "SEAL-LOG.jsonl", "answers.jsonl", "empty", "sub"]


@pytest.mark.parametrize("lose_the_partial", [False, True])
def test_a_failed_manifest_write_leaves_no_partial_file_and_no_log_line(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        lose_the_partial: bool) -> None:
    d = _tree(tmp_path / "d")

    def failing_replace(src: str, dst: Path) -> None:
        if lose_the_partial:
            os.unlink(src)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="No space left on device") as err:
        seal(d)
    assert err.value.errno == 28  # the cause surfaces, never an error of the clean-up
    assert sorted(p.name for p in d.iterdir()) == ["answers.jsonl", "empty", "sub"]


def test_the_seal_log_is_appended_and_readable_by_all(tmp_path: Path) -> None:
    d = _tree(tmp_path / "d")
    old = os.umask(0o022)
    try:
        seal(d)
    finally:
        os.umask(old)
    assert (d / "SEAL-LOG.jsonl").stat().st_mode & 0o777 == 0o644
    first = (d / "SEAL-LOG.jsonl").read_bytes()
    (d / "x").write_text("1\n")
    seal(d, reseal=True, expect=digest_of(preview(d)), reason="add x")
    assert (d / "SEAL-LOG.jsonl").read_bytes().startswith(first) and len(_lines(d)) == 2
