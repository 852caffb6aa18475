"""Inputs that exercise every rule of the spec (never shown to a role)."""

import random


def inputs():
    out = [
        "student,group,score\nann,A,2.345\nbob,a,2.34\n",
        "student,group,score\nann, Blue ,90\n   \nbob,blue,80.5\ncid,red,100\ndan,red,0\n",
        "student,group,score\nann,x,101\n",
        "student,group,score\nann,x,-0.5\n",
        "student,group,score\nann,x,abc\n",
        "student,group,score\nann,b,10\nann,b,10\nbob,a,1.005\n",
        "student,group,score\n",
        "student,group,score\nzed,Zeta,100\namy,alpha,0\nbo,Mid,50.125\n",
    ]
    rng = random.Random(7)
    for _ in range(30):
        rows = ["student,group,score"]
        for i in range(rng.randint(1, 6)):
            group = rng.choice(["a", "B", " c ", "Dd"])
            score = rng.choice(["0", "100", "99.995", "50.5", "12.345", "7", "66.665", "100.0"])
            rows.append(f"s{i},{group},{score}")
            if rng.random() < 0.2:
                rows.append("  ")
        out.append("\n".join(rows) + "\n")
    return out
