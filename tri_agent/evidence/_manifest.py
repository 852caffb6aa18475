"""The manifest: what a sealed directory held, file by file.

A manifest is a text file that ``sha256sum -c`` can check on its own, with our extra facts (schema
version, sizes) carried in ``#`` comment lines that coreutils skips::

    # tri-agent manifest v1 files=2 bytes=17
    # size 12
    3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea  answers.jsonl
    # size 5
    \\9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c02190ecf1e430635ab  odd\\\\name.txt

Entries are sorted by path (code point order, which is UTF-8 byte order); paths are POSIX, relative,
normalised, and may not escape the directory. The seal digest is the SHA-256 of the manifest's bytes.
Scanning a tree, rendering and parsing are here; the rules about *when* to seal are in ``_seal``.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import queue
import re
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from pydantic import ConfigDict, Field

from .._errors import TamperDetected
from .._model import Record

MANIFEST_NAME = "MANIFEST.sha256"
SEAL_LOG_NAME = "SEAL-LOG.jsonl"
RESERVED_NAMES = frozenset({MANIFEST_NAME, SEAL_LOG_NAME})
_HEADER = "# tri-agent manifest v1"
_CRLF_KEPT = " crlf=kept"
_SMALL = 1 << 20
_CHUNK = 4 << 20
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SIZE = re.compile(r"[0-9]{1,20}")  # ASCII digits only, and no size needs more than 20 of them


class Entry(NamedTuple):
    """One sealed file, as the hot path carries it (a pydantic model per file costs 20% of a scan)."""

    path: str
    sha256: str
    size: int


class ManifestEntry(Record):
    """One sealed file."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(description="POSIX path relative to the sealed directory.")
    sha256: str = Field(description="Lower-case hex SHA-256 of the file's bytes.")
    size: int = Field(description="Size of the file in bytes.")


class Manifest(Record):
    """Every regular file under a sealed directory (the manifest and seal log excepted).

    On disk this is the text format described in the module docstring; this model is its schema.
    """

    model_config = ConfigDict(frozen=True)

    schema_version: int = Field(default=1, description="Version of the manifest format.")
    entries: tuple[ManifestEntry, ...] = Field(description="Entries sorted by path.")

    @classmethod
    def of(cls, entries: list[Entry]) -> Manifest:
        return cls(entries=tuple(ManifestEntry(path=e.path, sha256=e.sha256, size=e.size) for e in entries))


def render(entries: list[Entry], crlf_kept: bool = False) -> bytes:
    """The manifest text of ``entries`` (already sorted by path).

    ``crlf_kept`` records that CRLF text was sealed on purpose (chaos inputs of an exam); answer
    keys never set it, and verify reads it back from the manifest.
    """
    total = sum(e.size for e in entries)
    lines = [f"{_HEADER} files={len(entries)} bytes={total}{_CRLF_KEPT if crlf_kept else ''}"]
    for e in entries:
        lines.append(f"# size {e.size}")
        lines.append(_hash_line(e.sha256, e.path))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _hash_line(sha: str, path: str) -> str:
    # coreutils convention: a leading backslash announces escapes in the name
    if "\\" in path:
        return f"\\{sha}  {path.replace(chr(92), chr(92) * 2)}"
    return f"{sha}  {path}"


def parse(data: bytes, where: str) -> tuple[list[Entry], bool]:
    """Read a manifest strictly; anything unexpected in it is a tamper finding."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TamperDetected(f"{where}: manifest is not UTF-8 ({exc.reason})") from None
    lines = text.split("\n")
    if not lines or not lines[0].startswith(_HEADER) or lines[-1] != "":
        raise TamperDetected(f"{where}:1: not a tri-agent manifest v1", hint="re-seal from trusted content")
    entries = _parse_entries(lines[1:-1], where)
    if any(a.path >= b.path for a, b in itertools.pairwise(entries)):
        raise TamperDetected(f"{where}: manifest paths are not strictly sorted (a duplicate or moved entry)")
    crlf_kept = lines[0].endswith(_CRLF_KEPT)
    if render(entries, crlf_kept) != data:
        raise TamperDetected(f"{where}: manifest is not in canonical form (edited by hand?)")
    return entries, crlf_kept


def _parse_entries(lines: list[str], where: str) -> list[Entry]:
    if len(lines) % 2:
        raise TamperDetected(f"{where}: manifest has a dangling line")
    entries = []
    for i in range(0, len(lines), 2):
        lineno = i + 2
        size_line, hash_line = lines[i], lines[i + 1]
        if not size_line.startswith("# size ") or not _SIZE.fullmatch(size_line[7:]):
            raise TamperDetected(f"{where}:{lineno}: expected '# size N', found {size_line[:60]!r}")
        sha, path = _split_hash_line(hash_line, f"{where}:{lineno + 1}")
        check_relative(path, f"{where}:{lineno + 1}")
        entries.append(Entry(path, sha, int(size_line[7:])))
    return entries


def _split_hash_line(line: str, where: str) -> tuple[str, str]:
    escaped = line.startswith("\\")
    body = line[1:] if escaped else line
    sha, sep, path = body.partition("  ")
    if not sep or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise TamperDetected(f"{where}: malformed manifest line {line!r}")
    if escaped:
        path = path.replace("\\\\", "\0").replace("\0", "\\")
    return sha, path


def check_relative(path: str, where: str) -> None:
    """Refuse a manifest path that is absolute, unnormalised or escapes its directory."""
    p = PurePosixPath(path)
    bad = (
        not path
        or p.is_absolute()
        or ".." in p.parts
        or str(p) != path
        or path == "."  # the folder itself, never a file in it
        or any(ord(c) < 32 for c in path)
    )
    if bad:
        raise TamperDetected(f"{where}: path {path!r} escapes or is not normalised", hint="re-seal")


@dataclass
class Scan:
    """What a walk of a directory found: sealable entries and the reasons it cannot be sealed."""

    entries: list[Entry] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    crlf: list[str] = field(default_factory=list)  # text files with CRLF: a problem unless kept on purpose

    def refusals(self, crlf_kept: bool) -> list[tuple[str, str]]:
        crlf = [] if crlf_kept else [(p, "text file has CRLF line endings; convert to LF (e.g. dos2unix)")
                                     for p in self.crlf]
        return sorted(self.problems + crlf)

    def sorted_entries(self) -> list[Entry]:
        return sorted(self.entries)


def scan(root: Path) -> Scan:
    """Hash every regular file under ``root`` without following any symlink.

    One process does it all: a pool of worker processes was measured slower at 100k small files
    (start-up and pickling cost more than the ~5 us of hashing per file), and large files are already
    hashed at nearly the in-memory limit by ``_hash_large``.
    """
    result = Scan()
    files: list[tuple[str, str]] = []
    stack = [("", os.fspath(root))]
    while stack:
        rel_dir, abs_dir = stack.pop()
        with os.scandir(abs_dir) as it:
            for entry in it:
                if not rel_dir and entry.name in RESERVED_NAMES:
                    continue
                _visit(entry, f"{rel_dir}{entry.name}", result, stack, files)
    for rel, path in files:
        sha, size, crlf = hash_file(path)
        if crlf:
            result.crlf.append(rel)
        result.entries.append(Entry(rel, sha, size))
    return result


def _visit(entry: os.DirEntry[str], rel: str, result: Scan, stack: list[tuple[str, str]],
           files: list[tuple[str, str]]) -> None:
    reason = _name_problem(entry.name)
    if reason:
        result.problems.append((rel.encode("utf-8", "backslashreplace").decode(), reason))
    elif entry.is_dir(follow_symlinks=False):  # a link to a folder is neither a folder nor a file here
        stack.append((rel + "/", entry.path))
    elif entry.is_file(follow_symlinks=False):
        files.append((rel, entry.path))
    elif entry.is_symlink():
        result.problems.append((rel, f"symlink to {os.readlink(entry.path)!r} (seal the target's content)"))
    else:
        kind = stat.filemode(os.lstat(entry.path).st_mode)[0]
        result.problems.append((rel, f"special file (mode {kind}); only regular files can be sealed"))


def _name_problem(name: str) -> str:
    if name.isascii() and name.isprintable():
        return ""  # the common case, decided in C
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "name is not valid UTF-8; rename it"
    if _CONTROL.search(name):
        return "name holds a control character; rename it"
    return ""


def hash_file(path: str) -> tuple[str, int, bool]:
    """Return (sha256 hex, size, holds CRLF text) reading the file once."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        head = os.read(fd, _SMALL)
        if len(head) < _SMALL:  # a short read of a regular file is its end: no fstat needed
            return hashlib.sha256(head).hexdigest(), len(head), _is_crlf_text(head)
        return _hash_large(fd, head)
    finally:
        os.close(fd)


def _hash_large(fd: int, head: bytes) -> tuple[str, int, bool]:
    # a reader thread keeps the next chunk coming while this one hashes: both release the GIL,
    # which brings a large file within a few percent of hashing the same bytes in memory
    h = hashlib.sha256(head)
    binary, crlf, last, size = b"\0" in head, b"\r\n" in head, head[-1:], len(head)
    chunks: queue.Queue[bytes] = queue.Queue(maxsize=4)
    errors: list[OSError] = []
    reader = threading.Thread(target=_read_chunks, args=(fd, chunks, errors), daemon=True)
    reader.start()
    while chunk := chunks.get():
        h.update(chunk)
        binary = binary or b"\0" in chunk
        crlf = crlf or b"\r\n" in chunk or (last == b"\r" and chunk[:1] == b"\n")
        last, size = chunk[-1:], size + len(chunk)
    reader.join()
    if errors:
        raise errors[0]  # never return the digest of half a file
    return h.hexdigest(), size, crlf and not binary


def _read_chunks(fd: int, out: queue.Queue[bytes], errors: list[OSError]) -> None:
    try:
        while chunk := os.read(fd, _CHUNK):
            out.put(chunk)
    except OSError as exc:
        errors.append(exc)
    finally:
        out.put(b"")


def _is_crlf_text(data: bytes) -> bool:
    # "text" means no NUL byte anywhere: the same rule for small and large files
    return b"\r\n" in data and b"\0" not in data
