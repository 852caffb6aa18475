"""The manifest text format: round trip, strict parsing, coreutils compatibility."""

from __future__ import annotations

import shutil
import subprocess
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
