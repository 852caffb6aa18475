"""Create the booking desk's database with its users, workshops and earlier bookings: python3 migrate.py desk.db"""

import sqlite3
import sys

SCHEMA = """
create table users(id text primary key, password text not null);
create table sessions(token text primary key, user text not null, expires text not null);
create table workshops(id text primary key, title text not null, price_cents integer not null,
                       capacity integer not null);
create table bookings(id integer primary key, user text not null, workshop text not null, name text not null,
                      email text not null, seats integer not null, lunch text not null, total text not null);
create table form_tokens(token text primary key, user text not null, booking integer);
create table drafts(user text primary key, token text not null, fields text not null);
"""
USERS = [("ana", "ana-pass"), ("ben", "ben-pass")]
WORKSHOPS = [("pottery", "Pottery", 1250, 6), ("weaving", "Weaving", 900, 10), ("printing", "Printing", 1500, 3)]
BOOKINGS = [(1, "ben", "pottery", "Ben Ode", "ben@example.org", 4, "regular", "€50.00"),
            (2, "ben", "printing", "Ben Ode", "ben@example.org", 3, "vegetarian", "€45.00")]

with sqlite3.connect(sys.argv[1]) as db:
    db.executescript(SCHEMA)
    db.executemany("insert into users values (?, ?)", USERS)
    db.executemany("insert into workshops values (?, ?, ?, ?)", WORKSHOPS)
    db.executemany("insert into bookings values (?, ?, ?, ?, ?, ?, ?, ?)", BOOKINGS)
