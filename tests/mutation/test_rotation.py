"""Which instances a round judges: every class, new ones first, the share of new ones between rounds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tri_agent.mutation._operators import Instance
from tri_agent.mutation._rotation import Selection, select


def _found(per_class: dict[str, int]) -> list[Instance]:
    return [Instance(id=f"op:{c}:{n}", operator="op", bug_class=c, file="a.py", start=(1, 1), end=(1, 2),
                     original="a", replacement="b", mutated="b", reach=(1, 1))
            for c, k in per_class.items() for n in range(k)]


@given(sizes=st.lists(st.integers(0, 6), min_size=1, max_size=5), per_class=st.integers(1, 4),
       used=st.integers(0, 30), seed=st.text(max_size=4))
def test_calibration_and_final_rounds_cover_every_class_up_to_the_cap(sizes: list[int], per_class: int, used: int,
                                                                     seed: str) -> None:
    classes = [f"c{i}" for i in range(len(sizes))]
    found = _found(dict(zip(classes, sizes, strict=True)))
    taken = frozenset(i.id for i in found[:used])
    rot = select(found, classes, Selection(per_class=per_class, used=taken, seed=seed), "d")
    for cls, size in zip(classes, sizes, strict=True):
        mine = [i for i in rot.chosen if f":{cls}:" in i]
        assert len(mine) == min(size, per_class)
        fresh = [i.id for i in found if i.bug_class == cls and i.id not in taken]
        assert set(fresh[:0]) <= set(mine) and (len(set(mine) & set(fresh)) == min(len(fresh), len(mine)))
    assert rot.empty_classes == [c for c, s in zip(classes, sizes, strict=True) if s == 0]
    assert rot == select(found, classes, Selection(per_class=per_class, used=taken, seed=seed), "d")


@given(sizes=st.lists(st.integers(1, 6), min_size=1, max_size=5), total=st.integers(1, 8), used=st.integers(0, 30),
       red=st.booleans())
def test_rounds_between_take_new_instances_first_and_say_when_they_are_short(sizes: list[int], total: int,
                                                                            used: int, red: bool) -> None:
    classes = [f"c{i}" for i in range(len(sizes))]
    found = _found(dict(zip(classes, sizes, strict=True)))
    taken = frozenset(i.id for i in found[:used])
    rot = select(found, classes, Selection(per_class=1, total=total, used=taken, red=red), "d")
    fresh = [i.id for i in found if i.id not in taken]
    assert len(rot.chosen) == min(total, len(found)) == len(set(rot.chosen))
    assert len(rot.new) == min(len(fresh), len(rot.chosen))  # new ones first, always
    assert rot.need == -(-(5 if red else 3) * len(rot.chosen) // 10)
    assert rot.short == (len(rot.new) < rot.need)


def test_a_retired_instance_is_never_sampled_on_the_code_it_was_proven_on() -> None:
    found = _found({"c": 3})
    retired = frozenset({f"{found[0].id}@digest-1"})
    assert found[0].id not in select(found, ["c"], Selection(per_class=3, retired=retired), "digest-1").chosen
    assert found[0].id in select(found, ["c"], Selection(per_class=3, retired=retired), "digest-2").chosen


def test_a_full_sample_lists_its_new_instances_and_is_never_short() -> None:
    found = _found({"a": 2, "b": 1, "e": 0})
    rot = select(found, ["a", "b", "e"], Selection(per_class=5, used=frozenset({"op:a:0"})), "d")
    assert rot.chosen == ["op:a:0", "op:a:1", "op:b:0"] and rot.new == ["op:a:1", "op:b:0"]
    assert (rot.need, rot.short, rot.empty_classes) == (0, False, ["e"])


def test_a_sample_between_rounds_names_its_empty_classes_and_the_share_it_needs() -> None:
    found = _found({"a": 3, "b": 3})
    rot = select(found, ["a", "b", "none"], Selection(per_class=1, total=4, used=frozenset({"op:a:0"})), "d")
    assert rot.empty_classes == ["none"] and rot.need == 2 and len(rot.chosen) == 4  # 30% of 4, rounded up
    assert select(found, ["a", "b"], Selection(per_class=1, total=4, red=True), "d").need == 2
