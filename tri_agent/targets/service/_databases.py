"""A service target's database: the snapshot each case starts from, and the side-effect rows read after it.

``DATABASES`` is the closed set: SQLite (the built file is the snapshot; each case gets a copy) and PostgreSQL
(each case gets a database cloned from a template and a login role of its own, both dropped afterwards).

The database is the service's, so the service may have planted anything in it (views, triggers, functions,
huge values, a link in place of the file). The side-effect queries are the exam's. Neither gets the
orchestrator's rights: SQLite queries run on a private copy opened read-only, with ATTACH and every write
refused by an authoriser; PostgreSQL queries run as the case's own role, each in a read-only transaction with
a statement timeout, through a server-side cursor. Every result is bounded in rows and bytes.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._errors import InfrastructureFailure, UsageError
from .._specs import Cell, Database, Postgres, Sqlite
from ._requests import Query, query_rows

QUERY_SECONDS = 10.0
QUERY_ROWS = 10_000
QUERY_BYTES = 16 << 20  # text of all side-effect rows of a case


Rows = list[dict[str, Cell]]


@dataclass(frozen=True)
class Restored:
    """One case's database: what {db} names, what the jail must see, and how its side-effect rows are read."""

    url: str
    readable: tuple[Path, ...]
    read: Callable[[list[Query]], Rows | str]


# --- SQLite ------------------------------------------------------------------------------------------------------

def _check_sqlite(db: Sqlite, built: Path, target_file: Path) -> None:
    if _regular(built, db.file) is None:
        raise UsageError(f"{target_file}: service.database.file {db.file!r} is not a file in the built target",
                         hint="ship the database in the baseline or create it in the build step")


@contextmanager
def _restore_sqlite(db: Sqlite, target_dir: Path, target_file: Path) -> Iterator[Restored]:
    # the case's copy of the built target holds the copy of the snapshot already
    yield Restored(str(target_dir / db.file), (), lambda queries: _sqlite_rows(target_dir, db.file, queries))


def _sqlite_rows(target_dir: Path, file: str, queries: list[Query]) -> Rows | str:
    """Side-effect rows from a private copy of the case's database (the service's own file is never opened: it
    could be a link to anything the orchestrator may read)."""
    source = _regular(target_dir, file)
    if source is None:
        return f"the database file {file} is missing, a link or a special file after the case"
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "case.db"
        shutil.copyfile(source, copy)
        for suffix in ("-wal", "-journal"):  # committed work not yet checkpointed lives beside the file
            side = _regular(target_dir, file + suffix)
            if side is not None:
                shutil.copyfile(side, Path(tmp) / f"case.db{suffix}")
        return _run_sqlite(copy, queries)


_SQLITE_READS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}


def _sqlite_authoriser(action: int, *_: object) -> int:
    """Reading only: no ATTACH (another file of the host), no PRAGMA, no write of any kind."""
    return sqlite3.SQLITE_OK if action in _SQLITE_READS else sqlite3.SQLITE_DENY


def _run_sqlite(copy: Path, queries: list[Query]) -> Rows | str:
    deadline = time.monotonic() + QUERY_SECONDS
    try:
        connection = sqlite3.connect(copy)
        connection.execute("PRAGMA trusted_schema = OFF")  # the schema's functions are the service's
        connection.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        return f"the database cannot be opened: {exc}"
    connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, QUERY_BYTES)
    connection.set_authorizer(_sqlite_authoriser)
    connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    try:
        return _collect(queries, lambda q: _sqlite_cursor(connection, q))
    except sqlite3.Error as exc:
        return f"a side-effect query failed: {exc}"
    finally:
        connection.close()


def _sqlite_cursor(connection: sqlite3.Connection, query: Query) -> tuple[list[str], Iterable[tuple[Any, ...]]]:
    cursor = connection.execute(query.sql)
    return [d[0] for d in cursor.description or ()], iter(cursor.fetchone, None)


# --- PostgreSQL --------------------------------------------------------------------------------------------------

def _check_postgres(db: Postgres, built: Path, target_file: Path) -> None:
    _password_required(db, target_file)
    with _connect(db, target_file) as connection:
        found = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db.template,)).fetchone()
        owner = connection.execute("SELECT rolsuper FROM pg_roles WHERE rolname = %s", (db.owner,)).fetchone()
        if found is not None:  # a case's role may open its own clone, never the snapshot itself
            connection.execute(f'REVOKE CONNECT ON DATABASE "{db.template}" FROM PUBLIC')
    if found is None:
        raise UsageError(f"{target_file}: template database {db.template!r} does not exist on the server",
                         hint="create it (CREATE DATABASE ... ; then load the schema and seed rows)")
    if owner is None or owner[0]:
        raise UsageError(f"{target_file}: service.database.owner {db.owner!r} "
                         f"{'does not exist' if owner is None else 'is a superuser'} on the server",
                         hint="create a role without superuser rights that owns the service's tables")


def _password_required(db: Postgres, target_file: Path) -> None:
    """The service sees the socket: if it could log in as the administrator without a secret (trust, or peer for
    the user it runs as), it could do anything the administrator can. Probed as the jail would: no password."""
    import psycopg

    try:
        with psycopg.connect(host=str(_socket_dir(db, target_file)), port=db.port, user=db.user, dbname="postgres",
                             password="", passfile=os.devnull, connect_timeout=10):
            pass
    except psycopg.Error:
        return
    raise UsageError(f"{target_file}: the PostgreSQL server at {db.socket_dir} lets anyone on its socket log in as "
                     f"{db.user!r} without a password, and every case's jail sees that socket",
                     hint="use scram-sha-256 for local connections in pg_hba.conf; give tri-agent the password "
                          "in PGPASSWORD or ~/.pgpass")


@contextmanager
def _restore_postgres(db: Postgres, target_dir: Path, target_file: Path) -> Iterator[Restored]:
    name, password = f"tri_case_{secrets.token_hex(6)}", secrets.token_hex(16)  # database and role share the name
    with _connect(db, target_file) as connection:
        connection.execute(f'CREATE ROLE "{name}" LOGIN PASSWORD \'{password}\' NOSUPERUSER NOCREATEDB NOCREATEROLE '
                           f'CONNECTION LIMIT 16 IN ROLE "{db.owner}"')
        connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{db.template}"')
        connection.execute(f'REVOKE CONNECT ON DATABASE "{name}" FROM PUBLIC')
        connection.execute(f'GRANT CONNECT ON DATABASE "{name}" TO "{name}"')
    sockets = _socket_dir(db, target_file)
    try:
        yield Restored(f"postgresql://{name}:{password}@/{name}?host={sockets}&port={db.port}",
                       (sockets / f".s.PGSQL.{db.port}",),
                       lambda queries: _postgres_rows(db, target_file, name, password, queries))
    finally:
        _drop(db, target_file, name)


def _drop(db: Postgres, target_file: Path, name: str) -> None:
    """The case's database and role, gone, whatever sessions the service left open (in other databases too)."""
    import psycopg

    try:
        with _connect(db, target_file) as connection:
            connection.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (name,))
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            connection.execute(f'DROP OWNED BY "{name}" CASCADE')  # what it made elsewhere (temporary tables)
            connection.execute(f'DROP ROLE IF EXISTS "{name}"')
    except psycopg.Error as exc:
        raise InfrastructureFailure(f"the case's database {name} could not be dropped: {_first_line(exc)}",
                                    hint="drop it by hand (DROP DATABASE, DROP ROLE) and check the server") from None


def _socket_dir(db: Postgres, target_file: Path) -> Path:
    return (target_file.parent / db.socket_dir).resolve()


@contextmanager
def _connect(db: Postgres, target_file: Path, dbname: str = "postgres", user: str | None = None,
             password: str | None = None, autocommit: bool = True) -> Iterator[Any]:
    import psycopg

    try:
        # no password: libpq's own (PGPASSWORD, ~/.pgpass) is the administrator's
        secret: dict[str, Any] = {"password": password} if password is not None else {}
        connection = psycopg.connect(host=str(_socket_dir(db, target_file)), port=db.port, user=user or db.user,
                                     dbname=dbname, autocommit=autocommit, connect_timeout=10, **secret)
    except psycopg.Error as exc:
        raise InfrastructureFailure(f"cannot reach the PostgreSQL server at {db.socket_dir} port {db.port}: "
                                    f"{_first_line(exc)}",
                                    hint="start the server, or fix service.database in the target file") from None
    with connection:
        yield connection


def _postgres_rows(db: Postgres, target_file: Path, name: str, password: str, queries: list[Query]) -> Rows | str:
    """As the case's own role, never the administrator: the database is the service's, and a view or function it
    planted runs with the rights of whoever queries it. Each query in a read-only transaction of its own, with
    a timeout the query cannot lift for itself, read through a server-side cursor."""
    import psycopg

    try:
        with _connect(db, target_file, name, name, password, autocommit=False) as connection:
            return _collect(queries, lambda q: _postgres_cursor(connection, q))
    except psycopg.Error as exc:
        return f"a side-effect query failed: {_first_line(exc)}"


def _postgres_cursor(connection: Any, query: Query) -> tuple[list[str], Iterable[tuple[Any, ...]]]:
    connection.rollback()  # the previous query's transaction, and whatever it set, is gone
    connection.execute("SET TRANSACTION READ ONLY")
    connection.execute(f"SET LOCAL statement_timeout = {int(QUERY_SECONDS * 1000)}")
    cursor = connection.cursor(name=f"q{secrets.token_hex(4)}")  # rows come from the server as they are read
    cursor.execute(query.sql)  # the exam's SQL, run as written
    return [d.name for d in cursor.description or ()], iter(cursor.fetchone, None)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# --- shared ------------------------------------------------------------------------------------------------------

def _collect(queries: list[Query], run: Callable[[Query], tuple[list[str], Iterable[tuple[Any, ...]]]]) -> Rows | str:
    """Every query's rows, at most ``QUERY_ROWS`` each and ``QUERY_BYTES`` of text in all."""
    rows: Rows = []
    size = 0
    for query in queries:
        columns, results = run(query)
        if not columns:
            return f"side-effect query {query.name} returns no rows (a statement, not a query)"
        kept: list[tuple[Any, ...]] = []
        for row in results:
            size += sum(len(str(v)) for v in row if v is not None)
            if size > QUERY_BYTES or len(kept) >= QUERY_ROWS:
                return f"side-effect query {query.name} returns more than {QUERY_ROWS} rows or {QUERY_BYTES} bytes"
            kept.append(row)
        try:
            rows += query_rows("", query.name, columns, kept)
        except ValueError as exc:
            return str(exc)
    return rows


def _regular(folder: Path, relative: str) -> Path | None:
    """``folder/relative`` when it is a regular file inside ``folder`` reached without any link."""
    path = folder / relative
    try:
        inside = Path(os.path.normpath(folder.resolve() / relative))
        if path.resolve() != inside or not inside.is_relative_to(folder.resolve()):
            return None
        return path if stat.S_ISREG(os.lstat(path).st_mode) else None
    except OSError:
        return None


@dataclass(frozen=True)
class _Kind:
    check: Callable[[Any, Path, Path], None]
    restore: Callable[[Any, Path, Path], Any]


DATABASES: dict[str, _Kind] = {
    "sqlite": _Kind(_check_sqlite, _restore_sqlite),
    "postgresql": _Kind(_check_postgres, _restore_postgres),
}


def check_snapshot(db: Database | None, built: Path, target_file: Path) -> None:
    """Before any case: the snapshot exists (a built SQLite file; a PostgreSQL template, asking for passwords)."""
    if db is not None:
        DATABASES[db.kind].check(db, built, target_file)


@contextmanager
def restored(db: Database | None, target_dir: Path, target_file: Path) -> Iterator[Restored | None]:
    """The case's database, restored from the snapshot (None without one), cleaned up when the case is over."""
    if db is None:
        yield None
        return
    with DATABASES[db.kind].restore(db, target_dir, target_file) as found:
        yield found
