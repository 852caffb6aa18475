"""Expected lines for gradebook, from its spec alone (fractions, rounding by hand): CASES OUT."""

import json
import sys
from fractions import Fraction
from pathlib import Path


def cents(value):
    """Two decimals, halves away from zero (the spec's rule); never negative here."""
    hundredths = value * 100
    whole = int(hundredths)
    if hundredths - whole >= Fraction(1, 2):
        whole += 1
    return f"{whole // 100}.{whole % 100:02d}"


def number(text):
    try:
        return Fraction(text)
    except ValueError:
        return None


def expected(text):
    records = []
    for n, line in enumerate(text.lstrip("\ufeff").split("\n")[1:], start=2):
        if not line.strip():
            continue
        _student, group, raw = [part.strip() for part in line.split(",")]
        score = number(raw)
        if score is None or not 0 <= score <= 100:
            return [f"error: line {n}: score {raw}"]
        records.append((group.lower(), score, raw))
    if not records:
        return [""]
    out = []
    for group in sorted({r[0] for r in records}):
        mine = [r for r in records if r[0] == group]
        best = mine[0]
        for r in mine:
            if r[1] > best[1]:
                best = r
        mean = sum(r[1] for r in mine) / len(mine)
        out.append(f"{group}: n={len(mine)} avg={cents(mean)} best={best[2]}")
    out.append(f"all: n={len(records)} avg={cents(sum(r[1] for r in records) / len(records))}")
    return out


def main():
    cases, out = Path(sys.argv[1]), Path(sys.argv[2])
    answers, behaviors = [], []
    for line in (cases / "cases.jsonl").read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        text = (cases / case["inputs"] / "input.txt").read_text(encoding="utf-8")
        for n, got in enumerate(expected(text), start=1):
            if got:
                answers.append({"case": case["case"], "n": str(n), "line": got})
        behaviors.append({"case": case["case"], "behavior": "accepted"})
    (out / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
    (out / "behaviors.jsonl").write_text("".join(json.dumps(b) + "\n" for b in behaviors), encoding="utf-8")


if __name__ == "__main__":
    main()
