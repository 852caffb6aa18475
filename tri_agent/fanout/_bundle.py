"""Bundles: a folder as one uncompressed tar, named by the SHA-256 of its bytes.

What a task needs travels this way (the built target, the exam's visible folder) and so does what it made (a case's
outputs). The bytes are checked against their name, and their members against what a folder can hold, before
anything is unpacked, so a copy changed on the way or by a worker is refused, never used. Packing is deterministic
(entries sorted, owners dropped, modes and times kept as they are): the same folder gives the same name anywhere.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
import shutil
import tarfile
import uuid
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
    """The SHA-256 of every regular file in the bundle, by its path inside it (read in memory, nothing unpacked);
    call it on a bundle ``problem`` passed. What is neither a file nor a folder is named by ``odd``."""
    with _opened(bundle) as tar:
        return {m.name: _sha256(tar, m) for m in tar.getmembers() if m.isfile()}


def odd(bundle: Bundle) -> list[str]:
    """What in the bundle is neither a regular file nor a folder (a link)."""
    with _opened(bundle) as tar:
        return [m.name for m in tar.getmembers() if not (m.isfile() or m.isdir())]


def problem(bundle: Bundle) -> str | None:
    """Why these bytes cannot be unpacked as a folder (None: they can): not the bytes their name says, not a plain
    tar (a compressed one could unpack to any size), or a member that is not a plain path inside the folder, comes
    twice, sits under a file, is sparse (a few bytes claiming gigabytes) or is a device."""
    wrong = bundle.problem()
    if wrong is not None:
        return wrong
    try:
        with _opened(bundle) as tar:
            return _refused(tar.getmembers())
    except tarfile.TarError as exc:
        return f"is not a plain tar ({exc})"


def _refused(members: list[tarfile.TarInfo]) -> str | None:
    names = [m.name for m in members]
    files = {m.name for m in members if not m.isdir()}
    for m in members:
        parents = m.name.split("/")[:-1]
        if m.name != posixpath.normpath(m.name) or m.name.startswith(("/", "../")) or m.name in ("..", "."):
            return f"holds {m.name!r}, not a plain path inside its folder"
        if names.count(m.name) > 1:
            return f"holds {m.name!r} twice"
        if any("/".join(parents[:k]) in files for k in range(1, len(parents) + 1)):
            return f"holds {m.name!r} under a file"
        if m.issparse() or not (m.isfile() or m.isdir() or m.issym()):
            return f"holds {m.name!r}, neither a plain file, a folder nor a link"
    return None


def _opened(bundle: Bundle) -> tarfile.TarFile:
    return tarfile.open(fileobj=io.BytesIO(bundle.data), mode="r:")  # a plain tar only: nothing is decompressed


def _sha256(tar: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    data = tar.extractfile(member)
    assert data is not None  # a regular file always has its bytes
    return hashlib.sha256(data.read()).hexdigest()


def unpack(bundle: Bundle, dest: Path, what: str) -> Path:
    """``bundle`` unpacked into ``dest`` (which must not exist), after ``problem`` found nothing; links leading out
    of it are refused by the tar filter, and modes come out as they went in (a read-only file stays read-only)."""
    wrong = problem(bundle)
    if wrong is not None:
        raise TamperDetected(f"{what} did not arrive as sent: {wrong}", hint="an infrastructure fault or a worker "
                             "that changes what it is given; run again, and drop the worker if it repeats")
    dest.mkdir(parents=True)
    try:
        with _opened(bundle) as tar:
            tar.extractall(dest, filter=_as_packed)
    except (tarfile.TarError, OSError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise TamperDetected(f"{what} cannot be unpacked: {exc}", hint="an infrastructure fault or a worker that "
                             "sends what no run writes (a link leading out, a device); drop that worker") from exc
    return dest


def _as_packed(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
    # the data filter's checks (names and links leading out, devices), but not its modes: the local pool copies
    # modes as they are, and a target may read its own
    checked = tarfile.data_filter(member, dest)
    return checked.replace(mode=member.mode & 0o777, deep=False)


def cached(bundle: Bundle, cache: Path, what: str) -> Path:
    """The bundle unpacked once per cache (a worker's): the folder named by its digest, made beside and renamed
    into place, so two tasks unpacking at once never see half a folder. The bytes are checked on arrival; the
    folder is not checked again (the cases run on copies of it, in the jail)."""
    final = cache / bundle.sha256
    if final.is_dir():
        return final
    part = unpack(bundle, cache / f".{bundle.sha256}.{uuid.uuid4().hex}", what)
    try:
        part.rename(final)
    except OSError:  # another task of this worker got there first: its copy is the same bytes
        shutil.rmtree(part, ignore_errors=True)
    return final
