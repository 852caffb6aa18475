"""Scoring properties of wordstats: over the corpus and the fixtures."""

import json
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from wordstats import top_words

DATA = Path(__file__).parents[1] / "data" / "cases.jsonl"
TEXTS = st.lists(st.sampled_from(["ant", "bee", "cat", "dog", "eel", "Ant", "BEE"]), max_size=30).map(" ".join)


@settings(derandomize=True, max_examples=80, database=None)
@given(text=TEXTS, n=st.integers(0, 8))
def test_ties_by_word(text: str, n: int) -> None:
    got = top_words(text, n)
    counts = Counter(w.lower() for w in text.split())
    assert got == sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def test_the_fixture_cases() -> None:
    for line in DATA.read_text().splitlines():
        case = json.loads(line)
        assert [list(p) for p in top_words(case["text"], case["n"])] == case["top"], case
