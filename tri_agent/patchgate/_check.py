"""``gate check``: policy before verdict, composed. The one place of the wing that runs both.

The patch is the commits from BASE to HEAD, or a patch file applied to BASE (``--patch``): the file is applied
to BASE's tree in a private index and written as a commit object on top of BASE, which no ref names, so both
forms are judged by the same rules. The verdict runs only when every policy rule held: a patch that broke one is
refused with that rule's code and is never run.
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import Field

from .._errors import MEANING, ExitCode, UsageError
from .._model import Record
from ..repository import clean_env, git_out
from ._map import gate_at
from ._policy import Finding, PolicyReport, check_policy
from ._verdict import Verdict, diff, verdict

_IDENTITY = ["-c", "user.name=tri-agent gate", "-c", "user.email=gate@tri-agent.invalid"]


class GateReport(Record):
    """``gate check --json``: the policy's findings, then the verdict when the policy held."""

    schema_version: Literal[1] = Field(default=1, description="Version of the gate report format.")
    base: str = Field(description="The base commit.")
    head: str = Field(description="The head commit (for --patch: the commit object the patch made on the base).")
    patch_sha256: str = Field(description="SHA-256 of the patch judged (git diff --binary BASE HEAD).")
    policy: PolicyReport = Field(description="Every policy finding (empty: every rule held).")
    verdict: Verdict | None = Field(description="The runs at the base and the head; None when the policy refused "
                                    "(or --policy-only).")
    exit_code: int = Field(description="0 passed, 1 the verdict failed, 9 the policy alone held (--policy-only), "
                           "10-15 the first broken rule.")
    outcome: str = Field(description="What the exit code means.")


def commit_patch(repo: Path, base: str, patch: bytes) -> str:
    """A commit object on ``base`` whose tree is ``base`` with ``patch`` applied (``git apply --check`` first)."""
    with tempfile.TemporaryDirectory(prefix="tri-agent-index-") as tmp:
        env = {**clean_env(), "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        when = git_out(repo, "show", "-s", "--format=%cI", base).decode().strip()
        env |= {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}

        def git(*args: str, data: bytes = b"") -> bytes:
            done = subprocess.run(["git", "-C", str(repo), *_IDENTITY, *args], input=data, env=env,
                                  capture_output=True, check=False)
            if done.returncode != 0:
                why = done.stderr.decode("utf-8", "replace").strip().splitlines()[:1] or [f"exit {done.returncode}"]
                raise UsageError(f"the patch does not apply to {base[:12]}: {why[0]}", hint="rebase it on the base")
            return done.stdout

        git("read-tree", base)
        git("apply", "--cached", "--check", "--binary", "-", data=patch)
        git("apply", "--cached", "--binary", "-", data=patch)
        tree = git("write-tree").decode().strip()
        return git("commit-tree", tree, "-p", base, "-m", "the patch under the gate").decode().strip()


def check(repo: Path, base: str, head: str | None = None, patch: bytes | None = None,
          timeout: float = 600.0, run: bool = True) -> tuple[GateReport, list[Finding]]:
    """The whole gate on one patch: HEAD's commits on BASE, or ``patch`` applied to BASE. With ``run`` False, the
    policy alone: a patch that breaks no rule ends with exit 9, never 0 (half a gate passes nothing)."""
    base = git_out(repo, "rev-parse", "--verify", f"{base}^{{commit}}").decode().strip()
    if (head is None) == (patch is None):
        raise UsageError("gate check needs HEAD or --patch FILE, not both", hint="name the patch one way")
    head = commit_patch(repo, base, patch) if patch is not None else head
    assert head is not None
    policy, found = check_policy(repo, base, head)
    head = policy.head
    judged = diff(repo, base, head)
    ran = None if found or not run else verdict(repo, base, judged, gate_at(repo, base), timeout)
    code = found[0].code if found else ExitCode.NOT_CERTIFIED if not run else \
        ExitCode.PASS if ran is not None and ran.passed else ExitCode.FAIL
    report = GateReport(base=base, head=head, patch_sha256=hashlib.sha256(judged).hexdigest(), policy=policy,
                        verdict=ran, exit_code=int(code), outcome=MEANING[code])
    return report, found
