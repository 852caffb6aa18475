"""Create the ledger's database with its starting accounts and transfers: python3 migrate.py ledger.db"""

import sqlite3
import sys

SCHEMA = """
create table accounts(id text primary key, owner text not null, secret text not null, balance text not null);
create table transfers(id integer primary key, from_account text not null, to_account text not null,
                       amount text not null, fee text not null, memo text not null);
create table sessions(token text primary key, account text not null, expires text not null);
create table replays(account text not null, key text not null, answer text not null, primary key (account, key));
"""
ACCOUNTS = [("acc-ana", "Ana", "ana-secret", "100.00"), ("acc-ben", "Ben", "ben-secret", "50.00"),
            ("acc-cai", "Cai", "cai-secret", "0.00")]
TRANSFERS = [(1, "acc-ana", "acc-ben", "5.00", "0.08", ""), (2, "acc-ana", "acc-cai", "2.50", "0.04", ""),
             (3, "acc-ben", "acc-ana", "1.00", "0.02", "")]

with sqlite3.connect(sys.argv[1]) as db:
    db.executescript(SCHEMA)
    db.executemany("insert into accounts values (?, ?, ?, ?)", ACCOUNTS)
    db.executemany("insert into transfers values (?, ?, ?, ?, ?, ?)", TRANSFERS)
