"""Wilson intervals, and their widening when the trials come from few programs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tri_agent.roleeval._stats import rate, wilson


def test_wilson_matches_published_values() -> None:
    low, high = wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson(15, 50)
    assert (low, high) == (pytest.approx(0.1910, abs=1e-4), pytest.approx(0.4375, abs=1e-4))
    assert wilson(0, 0) == (0.0, 1.0)


@given(st.integers(min_value=1, max_value=500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_holds_the_observed_rate(kn: tuple[int, int]) -> None:
    k, n = kn
    low, high = wilson(k, n)
    assert 0.0 <= low <= k / n <= high <= 1.0


def test_clusters_that_agree_keep_the_plain_interval() -> None:
    trials = [(program, i % 2 == 0) for program in "abcdefghij" for i in range(10)]  # every program at 50%
    found = rate(trials)
    assert (found.k, found.n, found.clusters, found.design_effect) == (50, 100, 10, 1.0)
    assert (found.low, found.high) == wilson(50, 100, 2.262)  # Student's t on 9 degrees of freedom
    assert found.high - found.low > wilson(50, 100)[1] - wilson(50, 100)[0]


def test_clusters_that_disagree_widen_it() -> None:
    trials = [(p, True) for p in "abcde" for _ in range(10)] + [(p, False) for p in "fghij" for _ in range(10)]
    found = rate(trials)
    assert found.value == 0.5 and found.design_effect > 5
    assert found.high - found.low > 2 * (wilson(50, 100)[1] - wilson(50, 100)[0])


def test_two_programs_that_both_always_pass_are_still_two() -> None:
    found = rate([("a", True)] * 100 + [("b", True)] * 100)
    assert found.value == 1.0 and found.high == 1.0 and found.low < 0.6  # not [0.98, 1]: two programs


@pytest.mark.parametrize(("k", "n"), [(5, 3), (-1, 10), (float("nan"), 10), (1, float("inf"))])
def test_an_impossible_count_has_no_interval(k: float, n: float) -> None:
    with pytest.raises(ValueError, match="no interval"):
        wilson(k, n)


def test_one_program_is_one_piece_of_evidence() -> None:
    found = rate([("only", True)] * 99 + [("only", False)])
    assert found.clusters == 1 and (found.low, found.high) == pytest.approx(wilson(0.99, 1))
    assert rate([]).value is None and (rate([]).low, rate([]).high) == (0.0, 1.0)


def test_the_design_effect_and_quantile_of_three_programs_by_hand() -> None:
    trials = [("a", True)] * 10 + [("b", False)] * 10 + [("c", i < 5) for i in range(10)]
    found = rate(trials)
    p = 15.5 / 31  # the shrunk rate
    robust = 3 / 2 * ((10 - p * 10) ** 2 + (0 - p * 10) ** 2 + (5 - p * 10) ** 2) / 30 ** 2
    deff = robust / (p * (1 - p) / 30)
    assert found.design_effect == pytest.approx(deff) and deff > 9
    assert (found.low, found.high) == pytest.approx(wilson(0.5 * 30 / deff, 30 / deff, 4.303))  # t on 2 df


def test_one_success_in_one_or_ten_trials() -> None:
    assert wilson(1, 1)[0] == pytest.approx(0.2065, abs=1e-4) and wilson(1, 1)[1] == 1.0
    assert 0.0 < wilson(1, 10)[0] < 0.02 and wilson(1, 10)[1] < 1.0
    assert rate([]).design_effect == 1.0
    with pytest.raises(ValueError):
        wilson(1, 0)


@pytest.mark.parametrize(("programs", "z"), [(29, 2.048), (30, 1.959963984540054)])
def test_the_quantile_turns_normal_at_thirty_programs(programs: int, z: float) -> None:
    found = rate([(str(i), i % 2 == 0) for i in range(programs) for _ in range(2)])
    assert (found.low, found.high) == pytest.approx(wilson(found.k / found.design_effect,
                                                           found.n / found.design_effect, z))


def test_two_programs_by_hand() -> None:
    found = rate([("a", i < 8) for i in range(10)] + [("b", i < 2) for i in range(10)])
    p = 10.5 / 21
    deff = 2 * ((8 - p * 10) ** 2 + (2 - p * 10) ** 2) / 20 ** 2 / (p * (1 - p) / 20)
    assert found.design_effect == pytest.approx(deff) and 1 < deff < 20
