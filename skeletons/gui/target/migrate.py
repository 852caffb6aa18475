"""Create the placeholder app's database, the snapshot every case starts from (replace it with your schema and
seed rows): python3 migrate.py notes.db"""

import sqlite3
import sys

with sqlite3.connect(sys.argv[1]) as db:
    db.execute("create table notes(id integer primary key, text text not null)")
