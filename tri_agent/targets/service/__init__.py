"""Service targets: a program that answers HTTP requests over a database, run fresh and restored for every case.

- ``_serve``: one service case, start to end (restore, drive, read the rows), and what every in-jail driver needs;
- ``_requests``: the case's request plan (``requests.json``), its answers and the rows read from them;
- ``_databases``: the database a case restores (SQLite file or PostgreSQL template) and its side-effect rows;
- ``_client``: the request driver, copied into each case and run there alone (it imports nothing of this package).

May import: ``targets._specs``, ``targets._target`` and everything below ``targets``.
"""
