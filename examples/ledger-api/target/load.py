"""Load the rows a case brings into the ledger's database before the service starts: python3 load.py DB DATA

DATA/accounts.csv (id,balance) sets balances; DATA/transfers.csv (id,from_account,to_account,amount,fee,memo)
replaces the history of transfers. A case without them keeps the snapshot the build made."""

import csv
import sqlite3
import sys
from pathlib import Path

COLUMNS = ("id", "from_account", "to_account", "amount", "fee", "memo")


def main() -> None:
    db, data = sys.argv[1], Path(sys.argv[2])
    with sqlite3.connect(db) as conn:
        if (data / "accounts.csv").is_file():
            with (data / "accounts.csv").open(newline="") as handle:
                conn.executemany("update accounts set balance = ? where id = ?",
                                 [(row["balance"], row["id"]) for row in csv.DictReader(handle)])
        if (data / "transfers.csv").is_file():
            with (data / "transfers.csv").open(newline="") as handle:
                rows = [tuple(row[c] for c in COLUMNS) for row in csv.DictReader(handle)]
            conn.execute("delete from transfers")
            conn.executemany("insert into transfers values (?, ?, ?, ?, ?, ?)", rows)


if __name__ == "__main__":
    main()
