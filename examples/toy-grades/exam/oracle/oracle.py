"""Independent oracle for toy-grades: pure Decimal, written from SPEC.md, never from the target's code.

usage: oracle.py VISIBLE OUT  -> OUT/answers.jsonl, OUT/behaviors.jsonl
"""

import json
import sys
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path


def parse(raw):
    text = raw.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = [line for line in text.replace("\r\n", "\n").split("\n") if line.strip()]
    header = [h.strip().lower() for h in lines[0].split(",")]
    at = {name: header.index(name) for name in ("student", "group", "score")}
    out = []
    for line in lines[1:]:
        cells = line.split(",")
        try:
            score = Decimal(cells[at["score"]].strip())
        except InvalidOperation:
            return None
        if not score.is_finite():
            return None
        out.append((cells[at["group"]].strip(), score))
    return out


def summary(case, scores):
    by_group = {}
    for group, score in scores:
        by_group.setdefault(group, []).append(score)
    rows = [(g, by_group[g]) for g in sorted(by_group)] + [("*ALL*", [s for _, s in scores])]
    for group, values in rows:
        total = sum(values, Decimal(0))
        average = (total / Decimal(len(values))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        yield {"case": case, "group": group, "count": str(len(values)),
               "total": str(total.quantize(Decimal("0.01"))), "average": str(average)}


def main():
    visible, out = Path(sys.argv[1]), Path(sys.argv[2])
    answers, behaviors = [], []
    for line in (visible / "cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        scores = parse((visible / case["inputs"] / "scores.csv").read_bytes())
        behaviors.append({"case": case["case"], "behavior": "rejected" if scores is None else "accepted"})
        if scores is not None:
            answers.extend(summary(case["case"], scores))
    (out / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    (out / "behaviors.jsonl").write_text("".join(json.dumps(b) + "\n" for b in behaviors))


if __name__ == "__main__":
    main()
