"""A change's test evidence, composed: the tree judged, the test files it touched, and the three signals."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from .._errors import InfrastructureFailure
from ..collection import REMOVALS, collect, reduced
from ..repository import cat_blobs, git_out, top_level, tree_of
from ..testcode import is_pytest_config, is_test_file
from ._infrastructure import forged_in, infrastructure, source_text
from ._passed import harvest
from ._plugin import spool_dir
from ._reduced import removals_text, write_commit, write_working
from ._report import EvidenceReport, exit_code
from ._tree import commit_tree, listed, working_tree
from ._weakened import FLOOR, Judge, K, Weakened, judged, not_judged, with_forged


def evidence(repo: Path, base: str, head: str | None = None, *, reports: list[Path] | None = None,
             judge: Judge | None = None, k: int = K, floor: float = FLOOR,
             timeout: float = 600.0) -> EvidenceReport:
    """The evidence of the change from ``base`` to ``head`` (None: the working tree) in ``repo``."""
    top_level(repo)
    base_sha = _sha(repo, base)
    head_sha = _sha(repo, head) if head is not None else None
    tree = commit_tree(repo, head_sha) if head_sha else working_tree(repo)
    current = _sha(repo, "HEAD")
    commit = head_sha or (current if commit_tree(repo, current).sha256 == tree.sha256 else None)
    names = _changed(repo, base_sha, head_sha)
    texts = _texts(repo, base_sha, head_sha, [n for n in names if n.endswith(".py") or is_test_file(n)
                                               or is_pytest_config(n)])
    changed = [n for n in names if is_test_file(n)]
    around = [n for n in names if n in texts and infrastructure(n, *texts[n])]
    with tempfile.TemporaryDirectory(prefix="tri-evidence-") as tmp:
        base_ids = collect(write_commit(repo, base_sha, Path(tmp) / "base"), timeout)
        head_tree = write_commit(repo, head_sha, Path(tmp) / "head") if head_sha else \
            write_working(repo, Path(tmp) / "head")
        try:
            head_ids = collect(head_tree, timeout)
        except InfrastructureFailure as exc:  # the head cannot be collected: none of its tests is there
            head_ids = ([], [f"<the head's collection failed: {exc.message}>"])
    present = [f for f in changed if (head_tree / f).is_file()]  # a deleted test file has no test to run
    files = {p for _, _, p in tree_of(repo, head_sha)} if head_sha else set(listed(repo))
    passed = harvest(tree.sha256, tree.newest, spool_dir(repo), list(reports or []), commit, present, head_ids[0],
                     files)
    shown = cat_blobs(repo, [f"{head_sha}:{REMOVALS}"])[0] if head_sha else None
    gone = reduced(base_ids, head_ids, removals_text(repo, head_sha, shown))
    weak = with_forged(_weakened(changed + around, texts, judge, k, floor), forged_in(texts))
    report = EvidenceReport(base=base_sha, head=head_sha, tree_sha256=tree.sha256, changed_tests=changed,
                            changed_infrastructure=around, passed=passed, reduced=gone, weakened=weak,
                            exit_code=int(exit_code(passed, gone, weak)))
    return EvidenceReport.model_validate(_printable(report.model_dump()))


def _printable(value: Any) -> Any:
    """``value`` with every string made printable: a file name that is not UTF-8 (git hands it over as surrogate
    escapes) is shown with its bytes escaped (``test_\\xff.py``), so the report can always be written."""
    if isinstance(value, str):
        try:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate that is no escaped byte
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    return value


def _sha(repo: Path, rev: str) -> str:
    return git_out(repo, "rev-parse", "--verify", "--end-of-options", f"{rev}^{{commit}}").decode().strip()


def _changed(repo: Path, base: str, head: str | None) -> list[str]:
    """Files whose content differs between the base and the head (added, changed or deleted)."""
    args = ["diff", "--no-renames", "--name-only", "-z", base, *([head] if head else [])]
    names = set(git_out(repo, *args).decode("utf-8", "surrogateescape").split("\0")) - {""}
    if head is None:  # untracked files are part of the working tree
        tracked = set(git_out(repo, "ls-files", "-z").decode("utf-8", "surrogateescape").split("\0"))
        names |= set(listed(repo)) - tracked
    return sorted(names)


def _texts(repo: Path, base: str, head: str | None, names: list[str]) -> dict[str, tuple[str | None, str | None]]:
    """Each file's text at the base and at the head (None: not there)."""
    before = cat_blobs(repo, [f"{base}:{p}" for p in names])
    after = cat_blobs(repo, [f"{head}:{p}" for p in names]) if head else \
        [(repo / p).read_bytes() if (repo / p).is_file() and not (repo / p).is_symlink() else None for p in names]
    return {p: (_text(b, p), _text(a, p)) for p, b, a in zip(names, before, after, strict=True)}


def _weakened(asked: list[str], texts: dict[str, tuple[str | None, str | None]], judge: Judge | None,
              k: int, floor: float) -> Weakened:
    if judge is None:
        return not_judged(asked, "no judge was configured" if asked else "no test file changed", k, floor)
    return judged(judge, [(p, *texts[p]) for p in asked], k=k, floor=floor)


def _text(raw: bytes | None, path: str) -> str | None:
    """A file's text; a Python file's as Python reads it (its BOM, its coding cookie)."""
    if raw is None:
        return None
    return source_text(raw) if path.endswith(".py") else raw.decode("utf-8", "replace")
