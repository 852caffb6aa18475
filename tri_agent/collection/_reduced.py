"""Which collected test ids a change lost, and which of those it disclosed with a reason.

A rename shows as a removal and an addition. A removal is cleared only by a line of the removals file
(``.tri-agent/test-removals``) naming the id *and* a reason: ``<id><TAB or spaces><reason>``; a bare id clears
nothing, and is listed as such. Pure: the ids come from ``_collect``, the file's text from the caller.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .._model import Record

REMOVALS = ".tri-agent/test-removals"
MIN_REASON_LETTERS = 3  # a reason is words: fewer letters than this is no reason


class Disclosed(Record):
    """A removal on record: the id and the reason given for it."""

    id: str = Field(description="The node id removed.")
    reason: str = Field(description="Why, as the removals file says it.")
    line: int = Field(description="Its line in the removals file.")


class Reduced(Record):
    """The ids collected at the base and not at the head, and which of them were disclosed."""

    state: Literal["reduced", "disclosed", "none", "inconclusive"] = Field(
        description="reduced: some removal is not on record; disclosed: every removal is, with a reason; none; "
                    "inconclusive: a file of the base did not collect, so its tests cannot be counted.")
    removed: list[str] = Field(description="Ids gone since the base with no reasoned entry: each fires the signal.")
    disclosed: list[Disclosed] = Field(description="Ids gone since the base, cleared by an entry with a reason.")
    bare: list[str] = Field(description="Removals-file entries without a reason ('file:line id'): they clear nothing.")
    added: list[str] = Field(description="Ids collected at the head and not at the base (a rename's other half).")
    base_collected: int = Field(description="Ids collected at the base.")
    head_collected: int = Field(description="Ids collected at the head.")
    collect_errors: dict[str, list[str]] = Field(description="Files that failed to collect, per side: their tests "
                                                             "count as gone.")


def reduced(base: tuple[list[str], list[str]], head: tuple[list[str], list[str]], removals: str) -> Reduced:
    """The signal from both sides' (ids, collection errors) and the head's removals file text."""
    entries, bare = parse_removals(removals)
    gone = [i for i in base[0] if i not in set(head[0])]
    cleared = [entries[i] for i in gone if i in entries]
    removed = [i for i in gone if i not in entries]
    state: Literal["reduced", "disclosed", "none", "inconclusive"] = \
        "reduced" if removed else "inconclusive" if base[1] else "disclosed" if gone else "none"
    return Reduced(state=state, removed=removed, disclosed=cleared, bare=bare,
                   added=[i for i in head[0] if i not in set(base[0])], base_collected=len(base[0]),
                   head_collected=len(head[0]), collect_errors={"base": base[1], "head": head[1]})


def parse_removals(text: str) -> tuple[dict[str, Disclosed], list[str]]:
    """Reasoned entries by id, and the bare ones (``REMOVALS:line id``). Comments start with ``#``. A reason needs
    letters (of any script): punctuation, digits and invisible characters are none."""
    entries: dict[str, Disclosed] = {}
    bare: list[str] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.lstrip("\ufeff").strip()  # a BOM before the first id is not part of it
        if not line or line.startswith("#"):
            continue
        test, reason = [*line.split("\t" if "\t" in line else None, 1), ""][:2]
        if sum(c.isalpha() for c in reason) < MIN_REASON_LETTERS:  # "", ".", "-": no reason at all
            bare.append(f"{REMOVALS}:{n} {test.strip()}")
        else:
            entries[test.strip()] = Disclosed(id=test.strip(), reason=reason.strip(), line=n)
    return entries, bare
