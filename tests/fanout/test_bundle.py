"""Bundles: a folder packed as one tar named by its SHA-256; the bytes checked before anything is unpacked."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tri_agent._errors import TamperDetected
from tri_agent.fanout import Bundle, digests, odd, pack, problem, unpack
from tri_agent.fanout._bundle import cached


def _tree(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


NAMES = st.lists(st.text("abc", min_size=1, max_size=3), min_size=1, max_size=3).map("/".join)


@settings(max_examples=40)
@given(st.dictionaries(NAMES, st.binary(max_size=64), min_size=1, max_size=6))
def test_a_folder_comes_back_as_it_went_and_its_name_is_its_bytes(tmp_path_factory: pytest.TempPathFactory,
                                                                    files: dict[str, bytes]) -> None:
    files = {k: v for k, v in files.items() if not any(o != k and o.startswith(k + "/") for o in files)}
    root = _tree(tmp_path_factory.mktemp("src"), files)
    bundle = pack(root)
    assert pack(root) == bundle and bundle.problem() is None  # the same folder, the same bytes and name
    out = unpack(bundle, tmp_path_factory.mktemp("dst") / "x", "the test folder")
    assert {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()} == files
    assert set(digests(bundle)) == set(files)


def test_times_and_modes_travel(tmp_path: Path) -> None:
    root = _tree(tmp_path / "src", {"run.sh": b"#!/bin/sh\n", "data": b"x"})
    (root / "run.sh").chmod(0o755)
    os.utime(root / "data", ns=(1_000_000_123_456_789, 1_000_000_123_456_789))
    (root / "ro").write_text("r")
    (root / "ro").chmod(0o444)
    (root / "private").mkdir()
    (root / "private").chmod(0o700)
    out = unpack(pack(root), tmp_path / "dst", "the test folder")
    assert os.access(out / "run.sh", os.X_OK) and not os.access(out / "data", os.X_OK)
    modes = {p.name: p.stat().st_mode & 0o777 for p in out.iterdir()}
    assert modes == {p.name: p.stat().st_mode & 0o777 for p in root.iterdir()}
    assert modes["ro"] == 0o444 and modes["private"] == 0o700  # as the local pool's copy keeps them
    assert (out / "data").stat().st_mtime_ns // 1000 == 1_000_000_123_456  # to the microsecond (PAX)


def test_bytes_changed_on_the_way_are_refused_before_anything_is_unpacked(tmp_path: Path) -> None:
    bundle = pack(_tree(tmp_path / "src", {"a": b"1"}))
    changed = Bundle(bundle.sha256, bundle.data.replace(b"1", b"2"))
    assert changed.problem() is not None
    with pytest.raises(TamperDetected, match="the built target did not arrive as sent"):
        unpack(changed, tmp_path / "dst", "the built target")
    assert not (tmp_path / "dst").exists()


def _tar(*members: tuple[tarfile.TarInfo, bytes]) -> Bundle:
    import hashlib

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data))
    return Bundle(hashlib.sha256(buffer.getvalue()).hexdigest(), buffer.getvalue())


@pytest.mark.parametrize(("member", "message"), [
    (("link", tarfile.SYMTYPE, "/etc/passwd"), "cannot be unpacked"),  # a link leading out: the filter refuses it
    (("../escape", tarfile.REGTYPE, ""), "did not arrive as sent: holds '../escape', not a plain path"),
    (("dev", tarfile.CHRTYPE, ""), "did not arrive as sent: holds 'dev', neither a plain file"),  # a device
])
def test_what_no_run_writes_is_refused_and_never_unpacked(tmp_path: Path, member: tuple[str, bytes, str],
                                                          message: str) -> None:
    name, kind, link = member
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    bundle = _tar((info, b""))
    assert odd(bundle) == ([] if name == "../escape" else [name])  # a result may hold files and folders only
    with pytest.raises(TamperDetected, match=message):
        unpack(bundle, tmp_path / "dst", "the outputs")
    assert not (tmp_path / "dst").exists() and not (tmp_path / "escape").exists()


def _file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


@pytest.mark.parametrize(("members", "message"), [
    # one name twice: the check would read the first, the unpacking write the second
    ([_file("summary.csv", b"A,1\n"), _file("./summary.csv", b"A,999\n")], "not a plain path"),
    ([_file("summary.csv", b"A,1\n"), _file("summary.csv", b"A,999\n")], "'summary.csv' twice"),
    ([_file("x", b""), _file("x/y", b"")], "'x/y' under a file"),
])
def test_members_that_could_unpack_as_other_than_they_were_checked_are_refused(
        tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes]], message: str) -> None:
    bundle = _tar(*members)
    assert message in (problem(bundle) or "")
    with pytest.raises(TamperDetected, match=message):
        unpack(bundle, tmp_path / "dst", "the outputs")


def test_a_compressed_tar_is_refused_whatever_it_would_unpack_to(tmp_path: Path) -> None:
    import hashlib

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz") as tar:
        info, data = _file("big", bytes(1 << 20))
        tar.addfile(info, io.BytesIO(data))
    data = buffer.getvalue()
    bundle = Bundle(hashlib.sha256(data).hexdigest(), data)
    assert len(data) < 1 << 12 and "is not a plain tar" in (problem(bundle) or "")
    with pytest.raises(TamperDetected, match="is not a plain tar"):
        unpack(bundle, tmp_path / "dst", "the outputs")


def test_bytes_that_are_no_tar_are_a_problem_not_a_traceback() -> None:
    import hashlib

    assert "is not a plain tar" in (problem(Bundle(hashlib.sha256(b"junk").hexdigest(), b"junk")) or "")


def test_a_cache_unpacks_a_bundle_once_under_its_name(tmp_path: Path) -> None:
    bundle = pack(_tree(tmp_path / "src", {"a": b"1"}))
    (tmp_path / "cache").mkdir()
    first = cached(bundle, tmp_path / "cache", "the test folder")
    (first / "a").write_bytes(b"marker")  # the second call finds the folder and does not unpack again
    assert cached(bundle, tmp_path / "cache", "the test folder") == first == tmp_path / "cache" / bundle.sha256
    assert (first / "a").read_bytes() == b"marker"
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [bundle.sha256]


def test_tasks_of_one_worker_unpacking_the_same_bundle_at_once_all_get_it(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    bundle = pack(_tree(tmp_path / "src", {f"f{n}": bytes(10_000) for n in range(50)}))
    (tmp_path / "cache").mkdir()
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda _n: cached(bundle, tmp_path / "cache", "the test folder"), range(16)))
    assert set(got) == {tmp_path / "cache" / bundle.sha256}
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [bundle.sha256]  # no half folder left beside it
