"""The manifest text format: round trip, strict parsing, coreutils compatibility."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tri_agent._errors import TamperDetected
from tri_agent.evidence._manifest import Entry, Manifest, hash_file, parse, render, scan

_name = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FFF, exclude_characters="/\\."), min_size=1,
                max_size=12)
_path = st.lists(_name, min_size=1, max_size=3).map("/".join)
_entry = st.builds(Entry, _path, st.text("0123456789abcdef", min_size=64, max_size=64), st.integers(0, 2**40))


@given(st.lists(_entry, max_size=20, unique_by=lambda e: e.path), st.booleans())
def test_render_parse_round_trip(entries: list[Entry], crlf_kept: bool) -> None:
    entries = sorted(entries)
    assert parse(render(entries, crlf_kept), "m") == (entries, crlf_kept)


def test_backslash_names_use_the_coreutils_escape(tmp_path: Path) -> None:
    (tmp_path / "a\\b.txt").write_text("x\n")
    entries = scan(tmp_path).sorted_entries()
    text = render(entries).decode()
    assert "\\" + entries[0].sha256 + "  a\\\\b.txt" in text
    assert parse(render(entries), "m") == (entries, False)


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="coreutils sha256sum is not installed")
def test_sha256sum_can_check_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.bin").write_bytes(bytes(range(256)))
    (tmp_path / "odd\\name").write_text("y\n")
    (tmp_path / "MANIFEST.sha256").write_bytes(render(scan(tmp_path).sorted_entries()))
    done = subprocess.run(["sha256sum", "--strict", "-c", "MANIFEST.sha256"], cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stdout + done.stderr
    (tmp_path / "sub" / "x.bin").write_bytes(b"changed")
    assert subprocess.run(["sha256sum", "-c", "MANIFEST.sha256"], cwd=tmp_path, capture_output=True).returncode == 1


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/../b", "./a", "a//b", "a/"])
def test_parse_refuses_escaping_paths(bad: str) -> None:
    good = render([Entry("ok", "0" * 64, 1)]).decode()
    with pytest.raises(TamperDetected, match="escapes"):
        parse(good.replace("  ok", "  " + bad).encode(), "m")


@pytest.mark.parametrize("mutate", [
    lambda t: t.replace("# size 1", "# size x"),
    lambda t: t.replace("0" * 64, "0" * 63),
    lambda t: t + "extra line\n",
    lambda t: t.replace("# tri-agent manifest v1", "# other"),
    lambda t: t.replace("files=1", "files=2"),
])
def test_parse_refuses_anything_not_canonical(mutate: object) -> None:
    good = render([Entry("ok", "0" * 64, 1)]).decode()
    with pytest.raises(TamperDetected):
        parse(mutate(good).encode(), "m")  # type: ignore[operator]


def test_large_file_hash_matches_hashlib_and_sees_crlf_across_chunks(tmp_path: Path) -> None:
    import hashlib

    data = b"a" * ((4 << 20) - 1) + b"\r" + b"\n" + b"b" * (3 << 20)
    (tmp_path / "big.txt").write_bytes(data)
    sha, size, crlf = hash_file(str(tmp_path / "big.txt"))
    assert (sha, size, crlf) == (hashlib.sha256(data).hexdigest(), len(data), True)
    (tmp_path / "big.bin").write_bytes(data + b"\0")
    assert hash_file(str(tmp_path / "big.bin"))[2] is False  # binary: CRLF bytes are not line endings


def test_manifest_model_mirrors_entries() -> None:
    model = Manifest.of([Entry("a", "0" * 64, 3)])
    assert model.schema_version == 1 and model.entries[0].size == 3


@pytest.mark.parametrize("size", ["9" * 5000, "\u00b2", "1" * 21, "-1"])
def test_a_size_no_file_could_have_is_tamper_on_one_short_line(tmp_path: Path, size: str) -> None:
    from tri_agent.evidence._seal import seal, verify

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "a.txt").write_text("x\n")
    seal(tmp_path / "d")
    manifest = tmp_path / "d" / "MANIFEST.sha256"
    lines = manifest.read_text().splitlines()
    manifest.write_text("\n".join("# size " + size if line.startswith("# size ") else line for line in lines) + "\n")
    with pytest.raises(TamperDetected, match="expected '# size N'") as err:
        verify(tmp_path / "d")
    assert len(err.value.line()) < 300


@pytest.mark.parametrize("name", [" lead.txt", "trail.txt ", "two  spaces.txt", "a . b"])
def test_file_names_with_spaces_seal_verify_and_check_with_coreutils(tmp_path: Path, name: str) -> None:
    from tri_agent import seal, verify

    d = tmp_path / "d"
    (d / "sub dir").mkdir(parents=True)
    (d / "sub dir" / name).write_text("x\n")
    seal(d)
    assert verify(d).ok and [e.path for e in scan(d).entries] == [f"sub dir/{name}"]
    if shutil.which("sha256sum"):
        done = subprocess.run(["sha256sum", "--quiet", "-c", "MANIFEST.sha256"], cwd=d, capture_output=True)
        assert done.returncode == 0, done.stdout + done.stderr
    (d / "sub dir" / name).write_text("y\n")
    assert [f.kind for f in verify(d).findings] == ["modified"]


@pytest.mark.parametrize(("data", "crlf"), [
    (b"a" * ((1 << 20) - 2) + b"\r\n", True),  # just under the small-file limit
    (b"a" * ((1 << 20) - 1) + b"\r\n", True),  # the CRLF is split across the first read and the next chunk
    (b"a" * ((1 << 20) - 1) + b"\r\n" + b"\0", False),  # a NUL after the first MiB makes it binary
    (b"\0" + b"a" * (1 << 20) + b"\r\n", False),  # a NUL in the first MiB too
    (b"a" * (1 << 20), False), (b"a" * ((1 << 20) - 1) + b"\r", False),  # a lone CR at the end is no line end
    (b"a" * (1 << 20) + b"\n\r", False),
])
def test_crlf_and_binary_detection_around_the_one_mebibyte_read(tmp_path: Path, data: bytes, crlf: bool) -> None:
    import hashlib

    path = tmp_path / "f"
    path.write_bytes(data)
    assert hash_file(str(path)) == (hashlib.sha256(data).hexdigest(), len(data), crlf)


def test_hashing_never_follows_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("secret\n")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    with pytest.raises(OSError):
        hash_file(str(tmp_path / "link.txt"))
    found = scan(tmp_path)
    assert [e.path for e in found.entries] == ["real.txt"]
    assert found.problems == [("link.txt", f"symlink to {str(tmp_path / 'real.txt')!r} (seal the target's content)")]


_SHA_A, _SHA_B = "0" * 64, "f" * 64
_GOOD = render([Entry("a b/x.txt", _SHA_A, 12), Entry("odd\\name", _SHA_B, 5)])


@pytest.mark.parametrize("crlf_kept", [False, True])
def test_render_writes_the_documented_text(crlf_kept: bool) -> None:
    flag = " crlf=kept" if crlf_kept else ""
    assert render([Entry("a b/x.txt", _SHA_A, 12), Entry("odd\\name", _SHA_B, 5)], crlf_kept) == (
        f"# tri-agent manifest v1 files=2 bytes=17{flag}\n"
        f"# size 12\n{_SHA_A}  a b/x.txt\n"
        f"# size 5\n\\{_SHA_B}  odd\\\\name\n").encode()
    assert render([]) == b"# tri-agent manifest v1 files=0 bytes=0\n"


def _edit(old: str, new: str) -> bytes:
    text = _GOOD.decode()
    assert old in text
    return text.replace(old, new, 1).encode()


@pytest.mark.parametrize(("data", "message"), [
    (b"", "m:1: not a tri-agent manifest v1; re-seal from trusted content"),
    (b"# tri-agent manifest v1 files=0 bytes=0", "m:1: not a tri-agent manifest v1; re-seal from trusted content"),
    (_GOOD[:-1], "m:1: not a tri-agent manifest v1; re-seal from trusted content"),  # the final newline cut
    (b"\n" + _GOOD, "m:1: not a tri-agent manifest v1; re-seal from trusted content"),
    (_GOOD.replace(b"# tri-agent", b"# Tri-agent"), "m:1: not a tri-agent manifest v1; re-seal from trusted content"),
    (_GOOD + b"\xff", "m: manifest is not UTF-8 (invalid start byte)"),
    (_edit("# size 5\n", ""), "m: manifest has a dangling line"),
    (_edit("# size 12", "# size x"), "m:2: expected '# size N', found '# size x'"),
    (_edit("# size 12", "# size  12"), "m:2: expected '# size N', found '# size  12'"),
    (_edit("# size 12", "#size 12"), "m:2: expected '# size N', found '#size 12'"),
    (_edit("# size 5", "# size 5 "), "m:4: expected '# size N', found '# size 5 '"),
    (_edit("# size 5", "# size " + "7" * 30 + "y" * 40),
     f"m:4: expected '# size N', found '# size {'7' * 30}{'y' * 23}'"),  # the found line cut at 60 characters
    (_edit(f"{_SHA_A}  a b", f"{_SHA_A} a b"), f"m:3: malformed manifest line '{_SHA_A} a b/x.txt'"),
    (_edit(f"{_SHA_A}  a b", f"{_SHA_A}0  a b"), f"m:3: malformed manifest line '{_SHA_A}0  a b/x.txt'"),
    (_edit(f"{_SHA_A}  a b", f"{_SHA_A[1:]}  a b"), f"m:3: malformed manifest line '{_SHA_A[1:]}  a b/x.txt'"),
    (_edit(f"{_SHA_A}  a b", f"{'X' * 64}  a b"), f"m:3: malformed manifest line '{'X' * 64}  a b/x.txt'"),
    (_edit(f"\\{_SHA_B}", f"\\{'F' * 64}"), f"m:5: malformed manifest line '\\\\{'F' * 64}  odd\\\\\\\\name'"),
    (_edit(f"{_SHA_A}  a b", "  a b"), "m:3: malformed manifest line '  a b/x.txt'"),
    (_edit("a b/x.txt", "/a b/x.txt"), "m:3: path '/a b/x.txt' escapes or is not normalised; re-seal"),
    (_edit("odd\\\\name", "../odd"), "m:5: path '../odd' escapes or is not normalised; re-seal"),
    (_edit("files=2", "files=3"), "m: manifest is not in canonical form (edited by hand?)"),
    (_edit("bytes=17", "bytes=017"), "m: manifest is not in canonical form (edited by hand?)"),
    (_edit("# size 5", "# size 05"), "m: manifest is not in canonical form (edited by hand?)"),
    (_edit("\\" + _SHA_B, _SHA_B), "m: manifest is not in canonical form (edited by hand?)"),  # escape dropped
    (_edit("odd\\\\name", "odd\\name"), "m: manifest is not in canonical form (edited by hand?)"),  # escape half
    (_GOOD.replace(b"\n", b"\r\n"), "m:2: expected '# size N', found '# size 12\\r'"),
])
def test_each_way_a_manifest_is_wrong_has_its_own_message(data: bytes, message: str) -> None:
    with pytest.raises(TamperDetected) as err:
        parse(data, "m")
    assert err.value.line() == message and err.value.exit_code == 4


def test_a_manifest_listing_nothing_parses() -> None:
    assert parse(b"# tri-agent manifest v1 files=0 bytes=0\n", "m") == ([], False)
    assert parse(b"# tri-agent manifest v1 files=0 bytes=0 crlf=kept\n", "m") == ([], True)


@pytest.mark.parametrize("bad", [".", "", "a/./b", "a/.", "x\x1fy", "x\ry", "tab\there", "\x00"])
def test_parse_refuses_a_path_that_is_not_a_plain_relative_file_name(bad: str) -> None:
    with pytest.raises(TamperDetected) as err:
        parse(render([Entry(bad, _SHA_A, 1)]), "m")
    assert err.value.line() == f"m:3: path {bad!r} escapes or is not normalised; re-seal"


@pytest.mark.parametrize("name", ["x", "a b", "~x", "caf\u00e9/\u65e5\u672c.txt", "...x", "x.", "a/b/c"])
def test_plain_relative_paths_parse(name: str) -> None:
    assert parse(render([Entry(name, _SHA_A, 1)]), "m") == ([Entry(name, _SHA_A, 1)], False)


def test_scan_names_every_reason_a_tree_cannot_be_sealed(tmp_path: Path) -> None:
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "caf\u00e9 \u65e5\u672c.txt").write_text("fine\n")
    (tmp_path / "crlf.txt").write_bytes(b"a\r\n")
    (tmp_path / "del\x7fname").write_text("x\n")
    (tmp_path / "tab\tname").write_text("x\n")
    open(os.path.join(os.fsencode(tmp_path), b"caf\xe9"), "w").close()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "to-dir").symlink_to(tmp_path / "ok")
    found = scan(tmp_path)
    assert [(e.path, e.size) for e in found.sorted_entries()] == [("crlf.txt", 3), ("ok/caf\u00e9 \u65e5\u672c.txt", 5)]
    assert found.crlf == ["crlf.txt"]
    problems = [
        ("caf\\udce9", "name is not valid UTF-8; rename it"),
        ("del\x7fname", "name holds a control character; rename it"),
        ("fifo", "special file (mode p); only regular files can be sealed"),
        ("tab\tname", "name holds a control character; rename it"),
        ("to-dir", f"symlink to {str(tmp_path / 'ok')!r} (seal the target's content)"),
    ]
    assert found.refusals(crlf_kept=True) == problems
    assert found.refusals(crlf_kept=False) == sorted(
        [*problems, ("crlf.txt", "text file has CRLF line endings; convert to LF (e.g. dos2unix)")])


def test_only_the_top_level_manifest_and_seal_log_are_left_out(tmp_path: Path) -> None:
    for folder in (tmp_path, tmp_path / "sub"):
        folder.mkdir(exist_ok=True)
        (folder / "MANIFEST.sha256").write_text("m\n")
        (folder / "SEAL-LOG.jsonl").write_text("l\n")
    assert [e.path for e in scan(tmp_path).sorted_entries()] == ["sub/MANIFEST.sha256", "sub/SEAL-LOG.jsonl"]


def test_a_crlf_split_between_two_reads_is_seen_wherever_the_reads_end(tmp_path: Path) -> None:
    for cut in (1 << 20, (1 << 20) + (4 << 20)):  # the end of the first read, then of the first 4 MiB chunk
        data = b"a" * (cut - 1) + b"\r\nmore text" + b"b" * (1 << 20)
        (tmp_path / "f").write_bytes(data)
        assert hash_file(str(tmp_path / "f")) == (hashlib.sha256(data).hexdigest(), len(data), True)
        data = b"a" * (cut - 2) + b"\r\rmore text" + b"\n" * (1 << 20)  # a CR, then a chunk starting with LF
        (tmp_path / "f").write_bytes(data)
        assert hash_file(str(tmp_path / "f")) == (hashlib.sha256(data).hexdigest(), len(data), False)


def test_a_read_error_in_a_large_file_raises_and_never_gives_a_digest(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "big").write_bytes(b"a" * (3 << 20))
    real_read, reads = os.read, []

    def failing_read(fd: int, n: int) -> bytes:
        reads.append(n)
        if len(reads) > 1:
            raise OSError(errno.EIO, "the disk went away")
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", failing_read)
    with pytest.raises(OSError, match="the disk went away") as err:
        hash_file(str(tmp_path / "big"))
    assert err.value.errno == errno.EIO and reads == [1 << 20, 4 << 20]


def test_an_interrupted_hash_of_a_large_file_never_keeps_the_process_alive(tmp_path: Path) -> None:
    # the reader thread fills its queue and waits; if it kept the interpreter alive, Ctrl-C would hang the CLI
    big = tmp_path / "big"
    with big.open("wb") as f:
        f.truncate(64 << 20)
    assert hash_file(str(big)) == (hashlib.sha256(bytes(64 << 20)).hexdigest(), 64 << 20, False)  # uninterrupted
    code = (
        "import sys, time\n"
        "from tri_agent.evidence import _manifest\n"
        "class Interrupted:\n"
        "    def __init__(self, data): pass\n"
        "    def update(self, chunk):\n"
        "        time.sleep(1)\n"
        "        raise KeyboardInterrupt\n"
        "_manifest.hashlib = type('H', (), {'sha256': Interrupted})\n"
        "_manifest.hash_file(sys.argv[1])\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, "-c", code, str(big)], env=env, capture_output=True, timeout=60)
    assert b"KeyboardInterrupt" in done.stderr and done.returncode != 0
