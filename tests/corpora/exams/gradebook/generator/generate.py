"""Cases for gradebook, from its spec alone: seed -> cases.jsonl and inputs/<case>/input.txt."""

import hashlib
import json
import random
import sys
from pathlib import Path

GROUPS = ["Red", "blue", "Green", "teal"]
HALVES = ["2.345", "10.005", "66.665", "0.125"]  # a mean of one of these alone sits on a half cent


def case_id(seed, name):
    return "c-" + hashlib.sha256(f"{seed}:{name}".encode()).hexdigest()[:12]


def sheet(rng, rows=None, blank=False, spaces=False, bom=False):
    lines = ["student,group,score"]
    for n in range(rows if rows is not None else rng.randint(2, 9)):
        group = rng.choice(GROUPS)
        if rng.random() < 0.3:
            group = group.upper() if rng.random() < 0.5 else group.lower()
        if spaces:
            group = " " + group + "  "
        score = rng.choice(["0", "100", "55.5", "72", "99.99", *HALVES])
        lines.append(f"s{n}, {group},{score}" if spaces else f"s{n},{group},{score}")
        if blank and rng.random() < 0.4:
            lines.append("   ")
    return ("\ufeff" if bom else "") + "\n".join(lines) + "\n"


def main():
    seed, out = sys.argv[1], Path(sys.argv[2])
    rng = random.Random(seed)
    texts = {
        "half-up": "student,group,score\na,x,2.345\n",
        "half-up-mean": "student,group,score\na,x,2.34\nb,x,2.35\n",
        "empty": "student,group,score\n",
        "top": "student,group,score\na,x,100\n",
        "bottom": "student,group,score\na,x,0\n",
        "above": "student,group,score\na,x,55\nb,x,100.01\n",
        "below": "student,group,score\na,x,-0.01\n",
        "word": "student,group,score\n\na,x,ten\n",
        "twice": "student,group,score\na,x,50\na,x,50\nb,y,1\n",
        "case": "student,group,score\na,Mixed,10\nb,MIXED,20\nc,mixed,31\n",
        "best": "student,group,score\na,x,9.50\nb,x,10.25\nc,x,3\n",
    }
    for n in range(12):
        texts[f"sheet-{n}"] = sheet(rng, blank=n % 3 == 0, spaces=n % 4 == 1)
    cases = []
    for name, text in texts.items():
        cid = case_id(seed, name)
        folder = out / "inputs" / cid
        folder.mkdir(parents=True)
        (folder / "input.txt").write_text(text, encoding="utf-8")
        cases.append({"case": cid, "inputs": f"inputs/{cid}"})
    (out / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")


if __name__ == "__main__":
    main()
