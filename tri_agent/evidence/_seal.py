"""Sealing a directory, verifying it, and the append-only seal log.

Rules: a directory is sealed once; resealing must declare the digest it expects
to produce and a reason, and both digests go to ``SEAL-LOG.jsonl``, whose entries are hash-chained so
that a rewritten log is detectable. Every rejection and every verify difference is exit 4.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from .._errors import TamperDetected, UsageError
from .._model import Record
from ._manifest import MANIFEST_NAME, SEAL_LOG_NAME, Entry, parse, render, scan

FindingKind = Literal["modified", "missing", "added", "renamed", "unsealable", "digest", "log"]


class SealLogEntry(Record):
    """One line of ``SEAL-LOG.jsonl``: a seal or reseal, chained to the line before it."""

    schema_version: int = Field(default=1, description="Version of the seal log format.")
    seq: int = Field(description="0 for the first seal, then +1 per line.")
    action: Literal["seal", "reseal"] = Field(description="What happened.")
    digest: str = Field(description="Seal digest (SHA-256 of MANIFEST.sha256) after this action.")
    previous_digest: str | None = Field(description="Seal digest before a reseal; null for a seal.")
    reason: str | None = Field(description="Why the content was resealed; null for a first seal.")
    at: str = Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$",
                    description="UTC time of the action, ISO 8601 to the second (YYYY-MM-DDTHH:MM:SSZ).")
    previous_line_sha256: str | None = Field(description="SHA-256 of the previous log line's bytes.")


class Finding(Record):
    """One difference between a sealed directory and its manifest."""

    kind: FindingKind = Field(description="What kind of difference.")
    path: str = Field(description="The file concerned, relative to the directory ('' for the seal).")
    detail: str = Field(description="Human-readable specifics (digests, sizes, reasons).")


class VerifyReport(Record):
    """Outcome of ``verify``: ``ok`` only when there are no findings."""

    schema_version: int = Field(default=1, description="Version of this report format.")
    digest: str = Field(description="Digest of the manifest found in the directory.")
    expected_digest: str | None = Field(description="Digest the caller pinned with --expect.")
    log_head: str | None = Field(default=None, description="SHA-256 of the seal log's last line: pin it to make "
                                                           "a rewrite of the whole log detectable.")
    files: int = Field(description="Number of files the manifest lists.")
    findings: list[Finding] = Field(description="Every difference found, in a stable order.")

    @property
    def ok(self) -> bool:
        return not self.findings


def preview(directory: Path, crlf_kept: bool = False) -> list[Entry]:
    """The manifest entries sealing would write now, refusing what cannot be sealed."""
    root = _root(directory)
    found = scan(root)
    refusals = found.refusals(crlf_kept)
    if refusals:
        path, reason = refusals[0]
        more = f" (and {len(refusals) - 1} more)" if len(refusals) > 1 else ""
        raise TamperDetected(f"cannot seal {root}/{path}: {reason}{more}")
    return found.sorted_entries()


def digest_of(entries: list[Entry], crlf_kept: bool = False) -> str:
    return hashlib.sha256(render(entries, crlf_kept)).hexdigest()


def seal(directory: Path, *, reseal: bool = False, expect: str | None = None, reason: str | None = None,
         crlf_kept: bool = False) -> str:
    """Seal ``directory`` and return the seal digest; ``crlf_kept`` admits CRLF text (exam inputs only)."""
    root = _root(directory)
    manifest_path = root / MANIFEST_NAME
    old = _current_digest(manifest_path)
    sealed_before = old is not None or (root / SEAL_LOG_NAME).exists()  # a deleted manifest is no fresh start
    _check_seal_request(sealed_before, reseal, expect, reason, root)
    entries = preview(root, crlf_kept)
    digest = digest_of(entries, crlf_kept)
    if reseal and digest != expect:
        raise TamperDetected(
            f"reseal of {root} would produce {digest}, but --expect declared {expect}",
            hint="check what changed (tri-agent verify) and declare the digest you mean",
        )
    # everything that can fail is done before the first write: the log line is built and encoded first
    record = _log_record(root, "reseal" if reseal else "seal", digest, old, reason)
    _write_atomic(manifest_path, render(entries, crlf_kept))
    _append_log(root, record)
    return digest


def _check_seal_request(sealed_before: bool, reseal: bool, expect: str | None, reason: str | None,
                        root: Path) -> None:
    if sealed_before and not reseal:
        raise TamperDetected(f"{root} is already sealed (it has a manifest or a seal log)",
                             hint="to change sealed content run: seal --reseal --expect NEW_DIGEST --reason TEXT")
    if reseal and not sealed_before:
        raise UsageError(f"--reseal given but {root} is not sealed", hint="seal it first")
    if not reseal and (expect is not None or reason is not None):
        raise UsageError("--expect and --reason belong to --reseal", hint="a first seal takes neither")
    if reseal and (not expect or not reason or not reason.strip()):
        raise UsageError("--reseal needs --expect NEW_DIGEST and a non-empty --reason TEXT",
                         hint="get the digest with: tri-agent seal DIR --dry-run")
    try:
        if reason is not None:
            reason.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError("--reason is not valid UTF-8 text", hint="write the reason in UTF-8") from None


def verify(directory: Path, *, expect: str | None = None) -> VerifyReport:
    """Compare ``directory`` with its manifest, the pinned digest and the seal log."""
    root = _root(directory)
    manifest_path = root / MANIFEST_NAME
    if not manifest_path.is_file() or manifest_path.is_symlink():
        raise TamperDetected(f"{manifest_path} is missing", hint="this directory was never sealed, or it was removed")
    data = manifest_path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    sealed, crlf_kept = parse(data, str(manifest_path))
    found = scan(root)
    findings = diff(sealed, found.sorted_entries())
    findings += [Finding(kind="unsealable", path=p, detail=r) for p, r in found.refusals(crlf_kept)]
    if expect is not None and expect != digest:
        findings.append(Finding(kind="digest", path="", detail=f"manifest digest {digest} != expected {expect}"))
    findings += _log_findings(root, digest)
    log = root / SEAL_LOG_NAME
    head = log.read_bytes().splitlines()[-1:] if log.is_file() else []
    return VerifyReport(digest=digest, expected_digest=expect, files=len(sealed), findings=findings,
                        log_head=hashlib.sha256(head[0]).hexdigest() if head else None)


def diff(sealed: list[Entry], now: list[Entry]) -> list[Finding]:
    """Every modified, missing, added and renamed file, sorted by kind then path."""
    old = {e.path: e for e in sealed}
    new = {e.path: e for e in now}
    findings = [
        Finding(kind="modified", path=p, detail=_change(old[p], new[p]))
        for p in sorted(old.keys() & new.keys())
        if old[p] != new[p]
    ]
    missing = [old[p] for p in sorted(old.keys() - new.keys())]
    added = [new[p] for p in sorted(new.keys() - old.keys())]
    return findings + _pair_renames(missing, added)


def _change(a: Entry, b: Entry) -> str:
    return f"sha256 {a.sha256[:16]}.. -> {b.sha256[:16]}.., size {a.size} -> {b.size}"


def _pair_renames(missing: list[Entry], added: list[Entry]) -> list[Finding]:
    by_content: dict[tuple[str, int], list[Entry]] = {}
    for e in added:
        by_content.setdefault((e.sha256, e.size), []).append(e)
    out, renamed_to = [], set()
    for e in missing:
        twins = by_content.get((e.sha256, e.size))
        if twins:
            to = twins.pop(0)
            renamed_to.add(to.path)
            out.append(Finding(kind="renamed", path=e.path, detail=f"now at {to.path}"))
        else:
            out.append(Finding(kind="missing", path=e.path, detail=f"sha256 {e.sha256[:16]}.., size {e.size}"))
    out += [
        Finding(kind="added", path=e.path, detail=f"sha256 {e.sha256[:16]}.., size {e.size}")
        for e in added
        if e.path not in renamed_to
    ]
    order = ("renamed", "missing", "added")  # diff puts the modified files first
    return sorted(out, key=lambda f: (order.index(f.kind), f.path))


def read_log(root: Path) -> list[SealLogEntry]:
    path = root / SEAL_LOG_NAME
    if not path.exists():
        return []
    return [SealLogEntry.model_validate_json(line) for line in exact_lines(path.read_bytes(), _log_line)[0]]


def exact_lines(raw: bytes, canonical: Callable[[bytes], bytes]) -> tuple[list[bytes], list[tuple[int, str]]]:
    """The lines of a chained JSON-lines file, split on LF alone, and each way its bytes differ from what its
    writer writes, as (line number, problem); line 0 is the file as a whole. ``canonical`` rewrites one line
    as the writer would (ValueError: not an entry). A chain hashes lines, so without this a CRLF rewrite,
    a cut final newline or respaced JSON would pass unnoticed."""
    problems = []
    if raw and not raw.endswith(b"\n"):
        problems.append((0, "the last line has no final newline (bytes cut or added)"))
    lines = raw.split(b"\n")[:-1] if raw.endswith(b"\n") else raw.split(b"\n") if raw else []
    for i, line in enumerate(lines, 1):
        try:
            exact = canonical(line) == line
        except ValueError:
            problems.append((i, "not an entry"))
            continue
        if not exact:
            problems.append((i, "not byte-exact (line end, spacing or key order changed)"))
    return lines, problems


def _log_line(line: bytes) -> bytes:
    return _log_bytes(SealLogEntry.model_validate_json(line))


def _log_bytes(entry: SealLogEntry) -> bytes:
    # every field is an int, a str or None: the Python dump is already the JSON one
    return json.dumps(entry.model_dump(), sort_keys=True, ensure_ascii=False).encode("utf-8")


def _log_findings(root: Path, digest: str) -> list[Finding]:
    path = root / SEAL_LOG_NAME
    if not path.is_file():
        return [Finding(kind="log", path=SEAL_LOG_NAME, detail="seal log is missing")]
    lines, problems = exact_lines(path.read_bytes(), _log_line)
    if problems:
        n, problem = problems[0]
        return [Finding(kind="log", path=SEAL_LOG_NAME, detail=f"line {n}: {problem}" if n else problem)]
    previous: bytes | None = None
    for i, line in enumerate(lines):
        problem = _log_line_problem(line, i, previous)
        if problem:
            return [Finding(kind="log", path=SEAL_LOG_NAME, detail=f"line {i + 1}: {problem}")]
        previous = line
    last = SealLogEntry.model_validate_json(lines[-1]) if lines else None
    if last is None or last.digest != digest:
        return [Finding(kind="log", path=SEAL_LOG_NAME, detail="last logged digest is not the manifest's digest")]
    return []


def _log_line_problem(line: bytes, i: int, previous: bytes | None) -> str:
    entry = SealLogEntry.model_validate_json(line)  # exact_lines has already refused a line that is no entry
    want = hashlib.sha256(previous).hexdigest() if previous is not None else None
    if entry.seq != i or entry.previous_line_sha256 != want:
        return "chain broken (a line was removed, reordered or rewritten)"
    return ""


def _log_record(root: Path, action: Literal["seal", "reseal"], digest: str, old: str | None,
                reason: str | None) -> bytes:
    path = root / SEAL_LOG_NAME
    lines = path.read_bytes().splitlines() if path.exists() else []
    entry = SealLogEntry(
        seq=len(lines),
        action=action,
        digest=digest,
        previous_digest=old,
        reason=reason,
        at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        previous_line_sha256=hashlib.sha256(lines[-1]).hexdigest() if lines else None,
    )
    return _log_bytes(entry) + b"\n"


def _append_log(root: Path, record: bytes) -> None:
    fd = os.open(root / SEAL_LOG_NAME, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, record)
        os.fsync(fd)
    finally:
        os.close(fd)


def _current_digest(manifest_path: Path) -> str | None:
    if not manifest_path.exists():
        return None
    return hashlib.sha256(manifest_path.read_bytes()).hexdigest()


def _root(directory: Path) -> Path:
    if directory.is_symlink():
        raise TamperDetected(f"{directory} is a symlink", hint="seal the real directory")
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory", hint="pass the directory to seal or verify")
    root = directory.resolve()
    for name in (MANIFEST_NAME, SEAL_LOG_NAME):
        # a planted symlink here would make us read or append outside the directory
        path = root / name
        if path.is_symlink() or (path.exists() and not path.is_file()):
            raise TamperDetected(f"{path} is not a regular file", hint="remove it; only tri-agent writes it")
    return root


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
