"""Orders that exercise every rule of the spec (never shown to a role)."""

import json
import random


def inputs():
    fixed = [
        {"customer": " Ada ", "lines": [{"item": "pen", "qty": 3, "price": "0.335"}], "vat": "20"},
        {"customer": "Bo", "lines": [], "vat": "20"},
        {"customer": "Bo", "lines": [{"item": "a", "qty": 0, "price": "1"}], "vat": "20"},
        {"customer": "Bo", "lines": [{"item": "a", "qty": 1, "price": "-1"}], "vat": "20"},
        {"customer": "Bo", "lines": [{"item": "a", "qty": 1, "price": "0"}], "vat": "20"},
        {"customer": "Cy", "lines": [{"item": "a", "qty": 1, "price": "10.005"},
                                     {"item": "a", "qty": 1, "price": "10.005"}], "vat": "5.5"},
        {"customer": "Di", "lines": [{"item": "b", "qty": 2, "price": "0.125"}], "vat": "10"},
        {"customer": "Ed", "lines": [{"item": "z", "qty": 1, "price": "9.99"}, {"item": "y", "qty": 1,
                                                                               "price": "0.01"}], "vat": "0"},
        {"customer": "Fi", "lines": [{"item": "q", "qty": 1.5, "price": "2"}], "vat": "20"},
    ]
    rng = random.Random(11)
    for _ in range(25):
        lines = [{"item": rng.choice(["tea", "cup", "pot"]), "qty": rng.randint(1, 4),
                  "price": rng.choice(["0.005", "1.115", "2.50", "0.335", "19.99", "3"])}
                 for _ in range(rng.randint(1, 4))]
        fixed.append({"customer": rng.choice(["Ann", " Ben", "Col "]), "lines": lines,
                      "vat": rng.choice(["20", "5.5", "7", "12.5"])})
    return [json.dumps(order) for order in fixed]
