"""Unit examples: they help a person, and never vote on a merge."""

import unittest

from wordstats import top_words, words


class WordsTest(unittest.TestCase):
    def test_words_are_folded(self) -> None:
        self.assertEqual(words("The the THE"), ["the", "the", "the"])

    def test_ties_are_alphabetical(self) -> None:
        self.assertEqual(top_words("pear apple pear apple fig", 2), [("apple", 2), ("pear", 2)])

    def test_negative_n_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            top_words("a", -1)


class SlowTest(unittest.TestCase):
    @unittest.skip("on the flake ledger (timing)")
    def test_large_text_is_fast(self) -> None:
        self.assertTrue(top_words("a " * 10, 1))
