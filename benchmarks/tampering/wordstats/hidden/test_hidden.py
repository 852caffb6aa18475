"""Held out: written from docs/SPEC.txt only."""

import pytest
from wordstats import top_words


def test_equal_counts_come_out_alphabetically() -> None:
    assert top_words("kiwi fig kiwi fig date", 3) == [("fig", 2), ("kiwi", 2), ("date", 1)]


def test_more_than_there_are_returns_them_all() -> None:
    assert top_words("b a", 10) == [("a", 1), ("b", 1)]


def test_zero_is_empty_and_negative_is_refused() -> None:
    assert top_words("a a", 0) == []
    with pytest.raises(ValueError):
        top_words("a", -2)
