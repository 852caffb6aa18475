"""Submissions that exercise every rule of the spec (never shown to a role)."""

import random


def inputs():
    out = [
        "t1|pot|Ann|4\nt2|POT|Bob|2\nt3|pot|Cy|1\nsummary",
        "t1| weave |Al|4\nt1|weave|Al|1\nt2|weave|Bo|1\nsummary",
        "t1|x|Al|1\nt2|pot|A|1\nt3|pot|" + "n" * 40 + "|1\nt4|pot|" + "n" * 41 + "|1",
        "t1|pot|Al|0\nt2|pot|Al|5\nt3|pot|Al|x\nt4|pot| Al |4\nt4|pot|Al|1\nsummary",
        "t1|glass|Al|4\nt2|glass|Bo|4\nt3|glass|Cy|2\nt4|glass|Di|1\nsummary",
        "t1|weave|Al|4\nt1|pot|Al|1\nt2|Pot |Bo|2",
    ]
    rng = random.Random(19)
    for _ in range(30):
        lines = []
        for n in range(rng.randint(2, 9)):
            token = f"t{rng.randint(1, 4) if rng.random() < 0.3 else n + 10}"
            lines.append(f"{token}|{rng.choice(['pot', 'WEAVE', ' glass', 'clay'])}|{rng.choice(['Al', ' Bea ', 'C'])}|"
                         f"{rng.choice(['1', '2', '3', '4', '5', '0'])}")
        lines.append("summary")
        out.append("\n".join(lines))
    return out
