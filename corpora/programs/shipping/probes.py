"""Parcels that exercise every rule of the spec (never shown to a role)."""

import random


def inputs():
    out = [
        "1.2 domestic\n1.5 EU\n2 world\n2.01 world\n10 eu\n10.1 eu express\n30 world\n30.01 world",
        "0 eu\n-1 eu\nabc eu\n1 mars\n1 eu fast\n\n  \n0.001 domestic express",
        "2.5 domestic express\n9.99 eu\n3 world express",
    ]
    rng = random.Random(37)
    for _ in range(30):
        lines = []
        for _ in range(rng.randint(1, 6)):
            weight = rng.choice(["0.3", "2", "2.2", "5", "9.6", "10", "10.2", "17", "29.9", "31"])
            line = f"{weight} {rng.choice(['domestic', 'EU', 'world', 'moon'])}"
            lines.append(line + (" express" if rng.random() < 0.3 else ""))
        out.append("\n".join(lines))
    return out
