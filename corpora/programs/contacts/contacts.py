"""Address-book cards to CSV (see spec.md)."""

import csv
import io

KEPT = ("name", "email", "phone", "org")


def cards(text):
    found = []
    card = None
    opened = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().upper() == "BEGIN:CARD":
            if card is not None:
                raise ValueError(f"error: unclosed card at line {opened}")
            card, opened = {}, number
        elif line.strip().upper() == "END:CARD" and card is not None:
            found.append(card)
            card = None
        elif card is not None and ":" in line:
            field, value = line.split(":", 1)
            field = field.strip().lower()
            if field in KEPT and field not in card:
                card[field] = value.strip()
    if card is not None:
        raise ValueError(f"error: unclosed card at line {opened}")
    return found


def run(text):
    try:
        found = cards(text)
    except ValueError as exc:
        return str(exc)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(KEPT)
    skipped = 0
    for card in found:
        if not card.get("name"):
            skipped += 1
            continue
        card["email"] = card.get("email", "").lower()
        writer.writerow([card.get(field, "") for field in KEPT])
    buffer.write(f"skipped: {skipped}")
    return buffer.getvalue()
