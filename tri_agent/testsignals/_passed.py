"""The *passed* signal: harvested, never re-run, from the first source that exists, each with its assurance level.

1. a spool entry bound to the exact tree (``tree-bound``: an uncommitted edit after the run unbinds it);
   a JUnit report whose ``tri_agent.tree`` property (the plugin writes it) names the exact tree is the same;
2. a JUnit XML report naming the head commit, when the tree judged is that commit's (``commit-bound``), unless
   the plugin's property says it ran on another tree (a dirty checkout of the commit);
3. a report found at a configured glob, no older than the tree's last edit (``found-on-disk``);
4. else ``not_checked``, said so.

A source is evidence only when it holds a real run: something was collected (an empty run proves nothing), the
outcomes agree with the exit status (an exit 0 beside a failure is a forged or cut entry), and, when the change
touched test files, at least one collected test comes from them (a run that left out the new tests says nothing
about them). A report that does not parse is no evidence, whatever exit the shell saw (``pytest || true``).
"""

from __future__ import annotations

import os
import sysconfig
from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import Field

from .._model import Record
from ._junit import JUnitReport, read_junit
from ._spool import SpoolEntry, read_entries

State = Literal["passed", "failed", "no_evidence", "stale", "not_checked"]
Assurance = Literal["tree-bound", "commit-bound", "found-on-disk"]
_BAD = ("failed", "error")


class Passed(Record):
    """What the harvested run says, how strongly it is bound to the tree, and what was looked at."""

    state: State = Field(description="passed, failed (the run failed tests), no_evidence (a source that holds no "
                                     "real run), stale (runs exist, none of this tree), not_checked (no source).")
    assurance: Assurance | None = Field(description="How the source is bound to the tree judged; null: none was.")
    source: str | None = Field(description="The spool entry or report the state rests on.")
    collected: int | None = Field(description="Tests the run collected.")
    counts: dict[str, int] = Field(description="Outcomes of the run, counted.")
    failing: list[str] = Field(description="Tests that failed or errored (at most 50).")
    notes: list[str] = Field(description="What was found and set aside, and why, in order.")


def harvest(tree: str, newest: float, spool: Path | None, reports: list[Path], commit: str | None,
            changed_tests: list[str], head_ids: list[str] | None = None, tree_files: set[str] | None = None) -> Passed:
    """The *passed* signal for the tree whose hash is ``tree`` (``newest``: its last edit, 0 for a commit's tree).
    ``commit`` is the head commit when the tree judged is exactly its tree, else None. ``head_ids``: the ids a
    clean collection of the tree finds; a spool entry that ran fewer (a subset, ``-k``) is no evidence of them.
    ``tree_files``: the files the tree's hash covers; an outcome hook run from a file of the work tree outside them
    (ignored, excluded) makes the entry no evidence."""
    notes: list[str] = []
    entries, bad = read_entries(spool) if spool is not None else ([], [])
    notes += [f"spool: {b}" for b in bad]
    for path, entry in entries:
        if entry.tree_sha256 == tree and entry.tree_sha256_end == tree:
            hooks = _hooks(entry.hooks, tree_files)
            return _judged(_from_entry(entry), path, "tree-bound", changed_tests, [*notes, *hooks[1]], head_ids,
                           hooks[0])
    if entries:
        notes.append(f"spool: the newest entry ({entries[0][0].name}) ran on tree {entries[0][1].tree_sha256[:12]}, "
                     f"this tree is {tree[:12]}: edited after the run")
    read, unread = [], 0
    for path in reports:
        found = read_junit(path)
        if isinstance(found, str):
            notes.append(f"report {path}: not a report: {found}")
            unread += 1
        else:
            read.append(found)
    ran = [r for r in read if r.properties.get("tri_agent.tree") == tree
           and r.properties.get("tri_agent.tree_end", tree) == tree]
    if ran:  # written by a session of this very tree (the plugin names it in the report)
        return _judged(_from_junit(ran[0]), ran[0].path, "tree-bound", changed_tests, notes)
    elsewhere = [r for r in read if r.properties.get("tri_agent.tree") not in (None, tree)]
    notes += [f"report {r.path}: ran on tree {r.properties['tri_agent.tree'][:12]}, this tree is {tree[:12]}"
              for r in elsewhere]
    bound = [r for r in read if commit is not None and r.commit() == commit and r not in elsewhere]
    if bound:
        return _judged(_from_junit(bound[0]), bound[0].path, "commit-bound", changed_tests, notes)
    fresh = [r for r in read if newest and r.mtime >= newest]
    notes += [f"report {r.path}: older than the tree's last edit" for r in read if r not in fresh]
    if fresh:
        return _judged(_from_junit(fresh[0]), fresh[0].path, "found-on-disk", changed_tests, notes)
    state: State = "stale" if entries or read else "no_evidence" if bad or unread else "not_checked"
    return Passed(state=state, assurance=None, source=None, collected=None, counts={}, failing=[], notes=notes)


class _Run:
    """A run as the signal reads it, from either source."""

    def __init__(self, collected: list[str], outcomes: dict[str, str], files: dict[str, str],
                 exit_status: int | None, errors: list[str]) -> None:
        self.collected, self.outcomes, self.files = collected, outcomes, files
        self.exit_status, self.errors = exit_status, errors


def _from_entry(entry: SpoolEntry) -> _Run:
    prefix = "" if entry.rootdir in ("", ".") else entry.rootdir.rstrip("/") + "/"
    files = {t: prefix + t.split("::")[0] for t in entry.collected}
    return _Run(entry.collected, dict(entry.outcomes), files, entry.exit_status, entry.collect_errors)


def _from_junit(report: JUnitReport) -> _Run:
    return _Run(list(report.outcomes), report.outcomes, report.files, None, [])


def _judged(run: _Run, path: Path, assurance: Assurance, changed_tests: list[str], notes: list[str],
            head_ids: list[str] | None = None, unseen: str = "") -> Passed:
    counts = Counter(run.outcomes.values())
    failing = [t for t, o in run.outcomes.items() if o in _BAD][:50]
    left_out = [i for i in head_ids or [] if i not in set(run.collected)]
    why = unseen or _no_evidence(run, counts, changed_tests) or (
        f"the run left out {len(left_out)} of the tree's {len(head_ids or [])} tests (a subset, or -k), for example "
        f"{left_out[0]}" if left_out else "")
    if why:
        return Passed(state="no_evidence", assurance=assurance, source=str(path), collected=len(run.collected),
                      counts=dict(counts), failing=failing, notes=[*notes, why])
    state: State = "failed" if failing or run.errors or (run.exit_status not in (None, 0)) else "passed"
    return Passed(state=state, assurance=assurance, source=str(path), collected=len(run.collected),
                  counts=dict(counts), failing=failing, notes=notes)


def _no_evidence(run: _Run, counts: Counter[str], changed_tests: list[str]) -> str:
    if not run.collected:
        return "the run collected no test"
    if run.exit_status == 0 and (any(counts[o] for o in _BAD) or run.errors):
        return "the run's exit status is 0 beside failed tests: the entry was not written by the run it describes"
    if run.exit_status == 0 and not set(run.collected) <= set(run.outcomes):
        return "the run's exit status is 0, yet collected tests have no outcome: a run cut short"
    if run.exit_status == 5:
        return "pytest collected nothing it could run (exit 5)"
    if not counts["passed"] and not any(counts[o] for o in _BAD):
        return "no test passed: every test was skipped or expected to fail"
    wanted = [f for f in changed_tests if not f.endswith("conftest.py")]
    if wanted and not any(_from_file(run.files.get(t, ""), f) for t in run.collected for f in wanted):
        return f"the change touched {', '.join(wanted[:3])}, and the run collected none of its tests"
    return ""


def _hooks(hooks: dict[str, list[str]], tree_files: set[str] | None) -> tuple[str, list[str]]:
    """Why the run's outcome hooks make it no evidence ('' when they do not), and what is disclosed about them."""
    installed = sorted(f for f in hooks if _installed(f))
    inside = sorted(f for f in hooks if f not in installed and not os.path.isabs(f) and not f.startswith("<"))
    shown = [f"{f} ({' '.join(hooks[f])})" for f in inside[:5]]
    notes = [f"outcome hooks in the tree: {', '.join(shown)}"] if inside else []
    notes += [f"outcome hooks of {len(installed)} installed plugin(s), named not judged: {', '.join(installed[:3])}"] \
        if installed else []
    outside = [f for f in hooks if f not in installed and f not in inside]
    if outside:
        return (f"{outside[0]} implements {hooks[outside[0]][0]} from outside the tree and the installed packages: "
                "the run's outcomes may come from code no evidence covers"), notes
    unseen = [f for f in inside if tree_files is not None and f not in tree_files]
    if unseen:
        return (f"{unseen[0]} implements {hooks[unseen[0]][0]}, and the tree's hash does not cover it (ignored, "
                "excluded, or in the git folder): the run's outcomes may come from code no evidence covers"), notes
    return "", notes


def _installed(path: str) -> bool:
    parts = path.replace(os.sep, "/").split("/")
    return "site-packages" in parts or "dist-packages" in parts or (
        os.path.isabs(path) and path.startswith(sysconfig.get_paths()["stdlib"] + os.sep))


def _from_file(test_file: str, changed: str) -> bool:
    """Whether a test's file (a path, or a JUnit classname as a path) is the changed file."""
    stem = changed[:-3] if changed.endswith(".py") else changed
    return test_file in (changed, stem) or test_file.startswith(stem + "/")
