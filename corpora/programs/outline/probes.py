"""Documents that exercise every rule of the spec (never shown to a role)."""

import random


def inputs():
    out = [
        "\ufeff# Intro\ntext\n## Café  \n### Deep ##\n#### Too deep\n#NoSpace",
        "# A\n```\n# not a heading\n```\n# A\n# a\n## A!",
        "# Fish & Chips\n#  \n## x_y z\n# Cafe\u0301",
        "",
        "## Über uns\n## über-uns\n# ---\n# End",
    ]
    rng = random.Random(29)
    titles = ["Intro", " Setup ", "Usage", "Usage", "Café", "A & B", "FAQ ##", "x", ""]
    for _ in range(30):
        lines = []
        for _ in range(rng.randint(1, 8)):
            level = rng.choice([1, 2, 3, 4])
            lines.append("#" * level + " " + rng.choice(titles))
            if rng.random() < 0.2:
                lines += ["```", "# code", "```"]
        out.append(("\ufeff" if rng.random() < 0.3 else "") + "\n".join(lines))
    return out
