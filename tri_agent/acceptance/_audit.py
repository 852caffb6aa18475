"""The contamination audit: no sealed value reaches a role that must not see answers, and none is stored
from what a role replies.

Before an episode starts, everything the role is about to receive (every file of its assembled workspace,
the names of its files and folders, its charter and its task) is leak-scanned against every sealed key of
the run. A hit stops the run before launch (exit 6), naming the place and the field, never the value.
After the episode, its reply is scanned the same way before it is stored: a hit is redacted, and for a role
that must not see answers it also stops the run. Values the role may legitimately hold (the case inputs,
the spec, the outputs the gateway served it) are not secrets and never count.

Roles whose contract lets them read answers (the judge; the examiner, who computes them) are not audited
on the way in: the leak scans of what they write, and the ticket guard, cover what they hand on.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from .._errors import LeakDetected
from ..drivers._episode import EpisodeResult
from ..exam._canaries import canaries_of
from ..isolation._contract import ANSWERS, Contract
from ..scoring._caliber import load_caliber
from ..scoring._leaks import LeakHit, scan_leaks

REDACTED = "(redacted: the reply held a sealed value)"


@dataclass(frozen=True)
class Exposure:
    """What a role may legitimately hold besides its workspace (values there are not leaks)."""

    seen: tuple[Path, ...] = ()


def public_spec(project: Path, listed: list[str]) -> tuple[Path, ...]:
    """What every role reads as the spec, and so no secret: the files ``acceptance.yaml`` lists and the whole
    ``spec/`` folder (a service's spec describes its fixture data, whole rows of it). No role's contract may write
    there; the examiner's own ``exam/SPEC.md`` is not the spec (it computes the answers)."""
    folder = project / "spec"
    return (*(project / rel for rel in listed), *((folder,) if folder.is_dir() and not folder.is_symlink() else ()))


def must_not_see_answers(contract: Contract) -> bool:
    return not any(contract.can_read(p) for p in ANSWERS)


def sealed_keys(builds: Path) -> list[Path]:
    """Every build of the run that holds a sealed answer key (oldest name first)."""
    if not builds.is_dir():
        return []
    return sorted(p for p in builds.glob("*") if (p / "sealed" / "answers.jsonl").is_file()
                  and (p / "caliber.yaml").is_file())


def before_launch(contract: Contract, workspace: Path, texts: dict[str, str], keys: list[Path],
                  exposure: Exposure = Exposure()) -> None:
    """Refuse to launch ``contract.role`` if anything it would receive holds a sealed value (exit 6)."""
    if not must_not_see_answers(contract):
        return
    # what the role wrote itself (the builder's own code and tests) is not something it receives: a value there
    # that matches a key is judged by the leak scan of its writing, a ticket, never a stop before launch
    received = [p for p in sorted(workspace.rglob("*"))
                if p.is_file() and not contract.can_write(p.relative_to(workspace).as_posix())]
    with tempfile.TemporaryDirectory() as tmp:
        extra = _texts(Path(tmp), {**texts, "file and folder names": _names(workspace, contract)})
        hits = _scan(keys, [*received, extra], exposure, workspace)
        if hits:
            where = _where(hits[0], workspace, extra)
            raise LeakDetected(f"contamination audit: the {contract.role} was about to receive a sealed value "
                                   f"at {where}{_author(where)} ({hits[0].detail}); "
                                   f"{len(hits)} hit(s), nothing was launched",
                                   hint="remove the value from what the role receives (an examiner's TESTPLAN or "
                                        "SPEC, a ticket, a file name); the run cannot continue with it")


def reply(result: EpisodeResult, contract: Contract, keys: list[Path], exposure: Exposure = Exposure()
          ) -> EpisodeResult:
    """The result with any sealed value in its reply redacted; a role that must not see answers stops (6)."""
    with tempfile.TemporaryDirectory() as tmp:
        extra = _texts(Path(tmp), _reply_fields(result))
        hits = _scan(keys, [extra], exposure, None)
        if hits and must_not_see_answers(contract):
            raise LeakDetected(f"the {contract.role}'s reply held a sealed value in {_where(hits[0], None, extra)} "
                               f"({hits[0].detail}); it was not stored",
                               hint="a role that never sees answers cannot name one: look for the channel it used")
    if not hits:
        return result
    attempts = [a.model_copy(update={"model": REDACTED if a.model else None, "error": REDACTED if a.error else None})
                for a in result.attempts]
    return result.model_copy(update={"summary": REDACTED, "reason": REDACTED if result.reason else None,
                                     "breach_attempts": [REDACTED for _ in result.breach_attempts],
                                     "attempts": attempts})


def _reply_fields(result: EpisodeResult) -> dict[str, str]:
    """Every free text of a reply that is stored: the summary and reason, and what the agent reports about
    itself (its model's name, the denials it lists, the errors of its attempts)."""
    fields = {"summary": result.summary, "reason": result.reason or ""}
    fields.update({f"denials[{i}]": d for i, d in enumerate(result.breach_attempts)})
    for i, attempt in enumerate(result.attempts):
        fields.update({f"attempts[{i}].model": attempt.model or "", f"attempts[{i}].error": attempt.error or ""})
    return fields


def _scan(keys: list[Path], paths: list[Path], exposure: Exposure, workspace: Path | None) -> list[LeakHit]:
    """One scan against every key at once: values in any build's inputs are not secrets of any other."""
    if not keys:
        return []
    columns = sorted({c for build in keys for c in load_caliber(build / "caliber.yaml")[0].key})
    inputs = [*(build / "visible" for build in keys), *exposure.seen]
    if workspace is not None:
        inputs += sorted(workspace.glob("builds/*/visible"))  # the cases the role is meant to run are not secret
    return scan_leaks([build / "sealed" / "answers.jsonl" for build in keys], paths,
                      inputs=[p for p in inputs if p.exists()], key=columns, aside=canaries_of(keys)).hits


def _texts(folder: Path, texts: dict[str, str]) -> Path:
    for name, text in texts.items():
        (folder / name).write_bytes(text.encode())
    return folder


def _names(workspace: Path, contract: Contract) -> str:
    names = (p.relative_to(workspace).as_posix() for p in sorted(workspace.rglob("*")))
    return "\n".join(n for n in names if not contract.can_write(n)) + "\n"


# who wrote what another role receives, by where it sits in the workspace: the leak is that role's fault
_AUTHORS = (("exam/tickets/", "the judge's or the orchestrator's tickets"), ("exam/judge/", "the tester's notes"),
            ("exam/", "the examiner"), ("spec/", "the spec's author"))


def _author(where: str) -> str:
    """``, written by the examiner`` for a place the examiner writes; empty where no role wrote it."""
    return next((f", written by {who}" for prefix, who in _AUTHORS if where.startswith(prefix)), "")


def _where(hit: LeakHit, workspace: Path | None, extra: Path) -> str:
    for root, label in ((workspace, ""), (extra, "the ")):
        prefix = f"{root}/"
        if root is not None and hit.where.startswith(prefix):
            return label + hit.where.removeprefix(prefix)
    return hit.where
