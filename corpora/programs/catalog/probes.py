"""Queries that exercise every rule of the spec (never shown to a role)."""

import itertools


def inputs():
    out = ["q=lamp\nq= TEA \nq=\nq=zzz", "size=0\nsize=21\nsize=20\npage=0\npage=x\nsort=cost\nsize=1&page=12",
           "sort=price&size=3&page=1\nsort=price&size=3&page=2\nsort=price&size=3&page=4\nsort=price&size=3&page=5",
           "page=1000000\npage=1000001\npage=\u00b2\nsize=\u0663"]
    for size, page, sort in itertools.product([1, 2, 4, 5, 12], [1, 2, 3], ["name", "price"]):
        out.append(f"size={size}&page={page}&sort={sort}\nq=e&size={size}&page={page}&sort={sort}")
    return out
