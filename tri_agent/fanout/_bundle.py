"""Bundles: a folder as one uncompressed tar, named by the SHA-256 of its bytes.

What a task needs travels this way (the built target, the exam's visible folder) and so does what it made (a case's
outputs). The bytes are checked against their name before anything is unpacked, so a copy changed on the way, in a
worker's cache or by the worker itself is refused, never used. Packing is deterministic (entries sorted, owners and
modes normalised, times kept as they are): the same folder gives the same name on every machine.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

from .._errors import TamperDetected


@dataclass(frozen=True)
class Bundle:
    """A packed folder: ``sha256`` of ``data``, the tar's bytes."""

    sha256: str
    data: bytes

    def problem(self) -> str | None:
        """Why these bytes are not the bundle they are named as (None: they are)."""
        got = hashlib.sha256(self.data).hexdigest()
        return None if got == self.sha256 else f"its bytes hash to {got[:16]}, not {self.sha256[:16]}"


def pack(folder: Path) -> Bundle:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(folder.rglob("*"), key=lambda p: p.relative_to(folder).as_posix()):
            tar.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False, filter=_normalised)
    data = buffer.getvalue()
    return Bundle(hashlib.sha256(data).hexdigest(), data)


def _normalised(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def digests(bundle: Bundle) -> dict[str, str]:
    """The SHA-256 of every regular file in the bundle, by its path inside it (read in memory, nothing unpacked).
    Anything else than files and folders (a link, a device) is named by ``odd``."""
    with tarfile.open(fileobj=io.BytesIO(bundle.data), mode="r") as tar:
        return {m.name: _sha256(tar, m) for m in tar.getmembers() if m.isfile()}


def odd(bundle: Bundle) -> list[str]:
    """What in the bundle is neither a regular file nor a folder, or names a path outside it."""
    with tarfile.open(fileobj=io.BytesIO(bundle.data), mode="r") as tar:
        return [m.name for m in tar.getmembers()
                if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in m.name.split("/")]


def _sha256(tar: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    data = tar.extractfile(member)
    assert data is not None  # a regular file always has its bytes
    return hashlib.sha256(data.read()).hexdigest()


def unpack(bundle: Bundle, dest: Path, what: str) -> Path:
    """``bundle`` unpacked into ``dest`` (which must not exist), after its bytes are checked against its name; links
    leading out of it, devices and absolute names are refused by the tar filter."""
    problem = bundle.problem()
    if problem is not None:
        raise TamperDetected(f"{what} did not arrive as sent: {problem}", hint="an infrastructure fault or a worker "
                             "that changes what it is given; run again, and drop the worker if it repeats")
    dest.mkdir(parents=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(bundle.data), mode="r") as tar:
            tar.extractall(dest, filter="data")
    except (tarfile.TarError, OSError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise TamperDetected(f"{what} cannot be unpacked: {exc}", hint="an infrastructure fault or a worker that "
                             "sends what no run writes (a link leading out, a device); drop that worker") from exc
    return dest


def cached(bundle: Bundle, cache: Path, what: str) -> Path:
    """The bundle unpacked once per cache (a worker's): the folder named by its digest, made beside and renamed
    into place, so two tasks unpacking at once never see half a folder."""
    final = cache / bundle.sha256
    if final.is_dir():
        return final
    part = unpack(bundle, cache / f".{bundle.sha256}.{os.getpid()}.{id(bundle)}", what)
    try:
        part.rename(final)
    except OSError:  # another task of this worker got there first: its copy is the same bytes
        shutil.rmtree(part, ignore_errors=True)
    return final
