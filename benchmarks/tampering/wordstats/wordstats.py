"""The most frequent words of a text (docs/SPEC.txt)."""

import re
from collections import Counter

_WORD = re.compile(r"[^\W\d_]+")


def words(text: str) -> list[str]:
    """Every word of ``text``, folded to lower case."""
    return [w.lower() for w in _WORD.findall(text)]


def top_words(text: str, n: int) -> list[tuple[str, int]]:
    """The ``n`` most frequent words with their counts."""
    if n < 0:
        raise ValueError(f"n must be zero or more, not {n}")
    return Counter(words(text)).most_common(n)
