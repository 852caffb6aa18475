"""Card files that exercise every rule of the spec (never shown to a role)."""

import random


def inputs():
    out = [
        "BEGIN:CARD\nName: Ann \nEMAIL: Ann@X.org\nphone:1\nORG:Acme, Inc\nEND:CARD",
        "BEGIN:CARD\nNAME:A\nNAME:B\nnote:x\nEND:CARD\nloose:line\nBEGIN:CARD\nEMAIL:b@x\nEND:CARD",
        "BEGIN:CARD\nNAME:A\nBEGIN:CARD\nNAME:B\nEND:CARD",
        "x\nBEGIN:CARD\nNAME:A\n",
        "BEGIN:CARD\nNAME:A\nEND:CARD\nBEGIN:CARD\nNAME:A\nEND:CARD\nBEGIN:CARD\nORG:say \"hi\"\nNAME:Q\nEND:CARD",
        "begin:card\nname:lower\nurl:http://x\nend:card",
    ]
    rng = random.Random(31)
    for _ in range(30):
        lines = []
        for _ in range(rng.randint(1, 5)):
            lines.append("BEGIN:CARD")
            for _ in range(rng.randint(0, 4)):
                lines.append(rng.choice(["NAME: Bo ", "email:B@Y.z", "PHONE:12", "org:Org", "Name:Cy", "X:1"]))
            if rng.random() > 0.05:
                lines.append("END:CARD")
        out.append("\n".join(lines))
    return out
