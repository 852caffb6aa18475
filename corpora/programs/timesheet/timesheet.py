"""Hours per person and ISO week, with overtime (see spec.md)."""

import datetime
from decimal import Decimal

LIMIT = Decimal(40)


def entries(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        person, day, hours = line.split(";")
        amount = Decimal(hours)
        if amount <= 0 or amount > 24:
            raise ValueError(f"invalid hours: {line}")
        out.append((person.strip(), datetime.date.fromisoformat(day.strip()), amount))
    return out


def weekly(items):
    weeks = {}
    for person, day, amount in items:
        year, week, _ = day.isocalendar()
        key = (person, year, week)
        weeks[key] = weeks.get(key, Decimal(0)) + amount
    return weeks


def run(text):
    try:
        items = entries(text)
    except ValueError as exc:
        return str(exc)
    out = []
    for (person, year, week), total in sorted(weekly(items).items()):
        line = f"{person} {year}-W{week:02d} {total:.2f}"
        if total > LIMIT:
            line += f" overtime={total - LIMIT:.2f}"
        out.append(line)
    days = {(person, day) for person, day, _ in items}
    out.append(f"days: {len(days)}")
    return "\n".join(out)
