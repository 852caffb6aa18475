"""Timesheets that exercise every rule of the spec (never shown to a role)."""

import random


def inputs():
    out = [
        "ann;2026-01-05;8\nann;2026-01-06;8\nann;2026-01-07;8\nann;2026-01-08;8\nann;2026-01-09;8\n",
        "ann;2026-01-05;24\nann;2026-01-06;17\n",
        "bob;2026-01-05;24.01\n",
        "bob;2026-01-05;0\n",
        "# note\n   \n ann ;2025-12-29;1\nann;2026-01-04;2\n",
        "Zed;2026-03-02;3\nAl;2026-03-02;3\nAl;2026-03-02;2\n",
        "ann;2026-01-05;20\nann;2026-01-06;20.01\n",
    ]
    rng = random.Random(3)
    for _ in range(25):
        lines = []
        for _ in range(rng.randint(1, 8)):
            day = datetime_text(rng)
            lines.append(f"{rng.choice(['ann', ' bob', 'Cy'])};{day};{rng.choice(['8', '9.5', '10', '12', '0.25', '24'])}")
            if rng.random() < 0.1:
                lines.append("# x")
        out.append("\n".join(lines) + "\n")
    return out


def datetime_text(rng):
    return f"2026-02-{rng.randint(1, 14):02d}"
