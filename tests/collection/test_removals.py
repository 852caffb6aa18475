"""The reduced signal from both sides' ids: each state, the ids added, and how the removals file is read."""

from __future__ import annotations

import pytest

from tri_agent.collection import REMOVALS, parse_removals, reduced

BASE = ["t.py::a", "t.py::b", "t.py::c"]


@pytest.mark.parametrize(("base", "head", "removals", "state", "removed"), [
    ((BASE, []), (BASE, []), "", "none", []),
    ((BASE, []), (["t.py::a", "t.py::c"], []), "", "reduced", ["t.py::b"]),
    ((BASE, []), (["t.py::a", "t.py::c"], []), "t.py::b\tmerged into a", "disclosed", []),
    ((BASE, ["u.py"]), (BASE, []), "", "inconclusive", []),  # a file of the base did not collect
    ((BASE, ["u.py"]), (["t.py::a"], []), "", "reduced", ["t.py::b", "t.py::c"]),  # a removal outranks it
])
def test_each_state(base: tuple[list[str], list[str]], head: tuple[list[str], list[str]], removals: str, state: str,
                    removed: list[str]) -> None:
    found = reduced(base, head, removals)
    assert (found.state, found.removed) == (state, removed)
    assert (found.base_collected, found.head_collected) == (len(base[0]), len(head[0]))
    assert found.collect_errors == {"base": base[1], "head": head[1]}


def test_a_rename_is_a_removal_and_an_addition() -> None:
    found = reduced((BASE, []), (["t.py::a", "t.py::b", "t.py::c2"], ["v.py"]), "")
    assert (found.removed, found.added) == (["t.py::c"], ["t.py::c2"])


def test_the_removals_file_is_read_line_by_line() -> None:
    text = ("\ufeff# why each test went\n\n"
            "t.py::a\tabc\n"                       # three letters: a reason, just
            "t.py::b\tab\n"                        # two: none
            "t.py::c[x y]\tsplit by tab\tkept whole\n"
            "t.py::d   reasons after spaces\n"
            "t.py::e\t\u200b\u200b\u200b...\n")   # invisible characters and dots are no letters
    entries, bare = parse_removals(text)
    assert {i: (d.reason, d.line) for i, d in entries.items()} == {
        "t.py::a": ("abc", 3), "t.py::c[x y]": ("split by tab\tkept whole", 5), "t.py::d": ("reasons after spaces", 6)}
    assert bare == [f"{REMOVALS}:4 t.py::b", f"{REMOVALS}:7 t.py::e"]
