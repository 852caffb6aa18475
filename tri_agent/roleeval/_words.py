"""Text read as words, however it is spelled: the one reading the audit, the names rule and the grader share, so
what the audit lets through is exactly what the grader would not recognise.

Compatibility forms folded (NFKC: fullwidth letters, ligatures), HTML entities and URL escapes undone, invisible
format characters (zero-width spaces, soft hyphens, BOMs) dropped, camelCase and letters beside digits split,
case folded; then words are runs of letters and digits, and stems are Snowball's English ones.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

import snowballstemmer

NEGATORS = frozenset({"not", "no", "never", "nothing", "none", "neither", "nor", "without", "t", "cannot"})
STOPWORDS = frozenset({"a", "an", "the", "of", "to", "in", "on", "at", "is", "are", "was", "were", "be", "it", "its",
                       "and", "or", "by", "for", "with", "as", "that", "this", "from"})
_SPLIT = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")


def words(text: str) -> list[str]:
    """The words of ``text``, in order."""
    folded = unicodedata.normalize("NFKC", unquote(html.unescape(text)))
    visible = "".join(c for c in folded if unicodedata.category(c) != "Cf")
    return re.findall(r"[^\W_]+", _SPLIT.sub(" ", visible).casefold())


def phrase(text: str) -> str:
    """``text`` as its words, one space apart and one on each side (so a phrase is found as a whole)."""
    return " " + " ".join(words(text)) + " "


def stems(text: str) -> list[str]:
    """The stems of the words of ``text``, in order."""
    return [stem(w) for w in words(text)]


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    return snowballstemmer.stemmer("english")


def content(text: str) -> set[str]:
    """The stems of ``text`` that carry meaning (no stopwords)."""
    return {s for w, s in zip(words(text), stems(text), strict=True) if w not in STOPWORDS}
