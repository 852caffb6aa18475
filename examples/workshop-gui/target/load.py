"""Load the earlier bookings a case brings into the desk's database before the app starts: python3 load.py DB DATA

DATA/bookings.csv (id,user,workshop,name,email,seats,lunch,total) replaces the bookings of the snapshot; a case
without it keeps the snapshot the build made."""

import csv
import sqlite3
import sys
from pathlib import Path

COLUMNS = ("id", "user", "workshop", "name", "email", "seats", "lunch", "total")


def main() -> None:
    db, source = sys.argv[1], Path(sys.argv[2]) / "bookings.csv"
    if not source.is_file():
        return
    with source.open(encoding="utf-8", newline="") as handle:
        rows = [tuple(row[c] for c in COLUMNS) for row in csv.DictReader(handle)]
    with sqlite3.connect(db) as conn:
        conn.execute("delete from bookings")
        conn.executemany("insert into bookings values (?, ?, ?, ?, ?, ?, ?, ?)", rows)


if __name__ == "__main__":
    main()
