"""Per-group score summaries (see spec.md)."""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")


def parse(text):
    records = []
    lines = text.splitlines()
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        student, group, raw = (field.strip() for field in line.split(","))
        try:
            score = Decimal(raw)
        except InvalidOperation:
            raise ValueError(f"error: line {number}: score {raw}") from None
        if score < 0 or score > 100:
            raise ValueError(f"error: line {number}: score {raw}")
        records.append((student, group.lower(), score, raw))
    return records


def average(scores):
    total = sum(scores, Decimal(0))
    return (total / len(scores)).quantize(CENT, rounding=ROUND_HALF_UP)


def summarise(records):
    groups = {}
    for _student, group, score, raw in records:
        groups.setdefault(group, []).append((score, raw))
    lines = []
    for group in sorted(groups):
        entries = groups[group]
        best = max(entries, key=lambda entry: entry[0])[1]
        scores = [score for score, _raw in entries]
        lines.append(f"{group}: n={len(scores)} avg={average(scores)} best={best}")
    every = [score for _s, _g, score, _r in records]
    if every:
        lines.append(f"all: n={len(every)} avg={average(every)}")
    return lines


def run(text):
    try:
        return "\n".join(summarise(parse(text)))
    except ValueError as exc:
        return str(exc)


if __name__ == "__main__":
    import sys

    print(run(sys.stdin.read()))
