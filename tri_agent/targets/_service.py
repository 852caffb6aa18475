"""Service targets: a program that answers HTTP requests over a database, run fresh and restored for every case.

A service target file::

    schema_version: 1
    kind: service
    preset: api
    baseline: ../target
    build: [python3, "{target}/migrate.py", "{target}/ledger.db"]   # once; its database is the snapshot
    timeout: 30                                                       # the whole case: start, steps, stop
    service:
      start: [python3, -m, uvicorn, "app:app", --port, "{port}"]
      env: {LEDGER_DB: "{db}"}
      ready: {path: /health, status: 200, deadline: 10}
      database: {kind: sqlite, file: ledger.db}
      clock: {env: LEDGER_NOW}

Each case runs in its own jail (its own loopback network, so parallel cases never share a port): the database
is restored (``DATABASES``: a copy of the built snapshot file for SQLite; a new database cloned from a template
for PostgreSQL), the request driver (``_client``) starts the service, waits for readiness, sends the case's
steps and stops it; then the orchestrator reads the side-effect rows from the database itself.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sqlite3
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .._errors import InfrastructureFailure, UsageError
from ..sandbox._jail import Jail
from ..sandbox._process import Completed
from . import _client
from ._requests import Cell, Query, RequestPlan, load_plan, query_rows, read_answers, step_rows

if TYPE_CHECKING:
    from ._target import TargetConfig

QUERY_SECONDS = 10.0
QUERY_ROWS = 10_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Ready(_Strict):
    """The readiness probe: the service is ready once this path answers with this status."""

    path: str = Field(default="/", pattern=r"^/", description="Path probed with GET.")
    status: int = Field(default=200, ge=100, le=599, description="Status that means ready.")
    deadline: float = Field(default=10, gt=0, description="Seconds the service has to become ready.")


class EnvClock(_Strict):
    """The service reads its clock from an environment variable (a move restarts it; the database stays)."""

    env: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Variable holding the current time.")


class EndpointClock(_Strict):
    """The service has an admin endpoint that sets its clock."""

    path: str = Field(pattern=r"^/", description="Endpoint path.")
    method: Literal["POST", "PUT"] = Field(default="POST", description="Method.")
    field: str = Field(default="now", description="JSON body field holding the new time.")


class Sqlite(_Strict):
    """An SQLite database file inside the target folder; the built file is the snapshot, copied per case."""

    kind: Literal["sqlite"] = Field(description="Database kind: sqlite.")
    file: str = Field(description="Database file, relative to the target folder ({db} is its path).")


class Postgres(_Strict):
    """A PostgreSQL server reached by its Unix socket; each case gets a new database cloned from ``template`` and
    a login role of its own, a member of ``owner``, allowed to connect to that database only."""

    kind: Literal["postgresql"] = Field(description="Database kind: postgresql.")
    socket_dir: str = Field(description="Folder of the server's Unix socket (relative to the target file); the "
                            "case's jail sees it, nothing else of the server's machine.")
    port: int = Field(default=5432, ge=1, le=65535, description="Server port (names the socket file).")
    user: str = Field(default="postgres", description="Administrator role of the orchestrator: clones, drops, and "
                      "runs the side-effect queries. Never given to the service.")
    owner: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Role owning the service's tables in the "
                       "template; each case's role is a member of it. It may not be a superuser.")
    template: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Template database: the snapshot.")


class ServiceSpec(_Strict):
    """How a service target is started, probed, restored and stopped."""

    start: list[str] = Field(min_length=1, description="argv: {port} {db} {target} {tmp}.")
    env: dict[str, str] = Field(default_factory=dict, description="The service's environment (same placeholders).")
    ready: Ready = Field(default_factory=Ready, description="Readiness probe.")
    database: Sqlite | Postgres | None = Field(default=None, discriminator="kind",
                                               description="The database restored before each case.")
    clock: EnvClock | EndpointClock | None = Field(default=None, description="How a case sets the service's clock.")
    stop_grace: float = Field(default=2, ge=0, le=30, description="Seconds between SIGTERM and SIGKILL at stop.")
    request_timeout: float = Field(default=10, gt=0, description="Seconds one request may take.")
    body_cap: int = Field(default=1 << 20, ge=1024, description="Bytes of each response body kept.")


@dataclass(frozen=True)
class Restored:
    """One case's database: what {db} names, what the jail must see, and who reads it afterwards."""

    url: str
    readable: tuple[Path, ...]
    read: Any  # (queries) -> rows


def check_snapshot(spec: ServiceSpec, built: Path, target_file: Path) -> None:
    """Before any case: the snapshot exists (a built SQLite file; a PostgreSQL template reachable)."""
    db = spec.database
    if isinstance(db, Sqlite):
        if _regular(built, db.file) is None:
            raise UsageError(f"{target_file}: service.database.file {db.file!r} is not a file in the built target",
                             hint="ship the database in the baseline or create it in the build step")
    elif isinstance(db, Postgres):
        with _admin(db, target_file) as connection:
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


@contextmanager
def restored(spec: ServiceSpec, target_dir: Path, target_file: Path) -> Iterator[Restored | None]:
    """The case's database, restored from the snapshot; a PostgreSQL clone is dropped when the case is over."""
    db = spec.database
    if db is None:
        yield None
    elif isinstance(db, Sqlite):
        yield Restored(str(target_dir / db.file), (), lambda queries: _sqlite_rows(target_dir, db.file, queries))
    else:
        name = f"tri_case_{secrets.token_hex(6)}"  # the case's database and its role share the name
        with _admin(db, target_file) as connection:
            connection.execute(f'CREATE ROLE "{name}" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE IN ROLE "{db.owner}"')
            connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{db.template}"')
            connection.execute(f'REVOKE CONNECT ON DATABASE "{name}" FROM PUBLIC')
            connection.execute(f'GRANT CONNECT ON DATABASE "{name}" TO "{name}"')
        try:
            sockets = _socket_dir(db, target_file)
            yield Restored(f"postgresql://{name}@/{name}?host={sockets}&port={db.port}", (sockets,),
                           lambda queries: _postgres_rows(db, target_file, name, queries))
        finally:
            with _admin(db, target_file) as connection:
                connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                connection.execute(f'DROP ROLE IF EXISTS "{name}"')


def _socket_dir(db: Postgres, target_file: Path) -> Path:
    return (target_file.parent / db.socket_dir).resolve()


@contextmanager
def _admin(db: Postgres, target_file: Path, dbname: str = "postgres", user: str | None = None) -> Iterator[Any]:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - a dependency of the package
        raise InfrastructureFailure("psycopg is not installed", hint="pip install 'psycopg[binary]'") from None
    try:
        connection = psycopg.connect(host=str(_socket_dir(db, target_file)), port=db.port, user=user or db.user,
                                     dbname=dbname, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise InfrastructureFailure(f"cannot reach the PostgreSQL server at {db.socket_dir} port {db.port}: "
                                    f"{str(exc).strip().splitlines()[0] if str(exc).strip() else exc}",
                                    hint="start the server, or fix service.database in the target file") from None
    with connection:
        yield connection


def _sqlite_rows(target_dir: Path, file: str, queries: list[Query]) -> list[dict[str, Cell]] | str:
    """Side-effect rows from a private copy of the case's database (the service's own file is never opened: it
    could be a link to anything the orchestrator may read)."""
    source = _regular(target_dir, file)
    if source is None:
        return f"the database file {file} is missing, a link or a special file after the case"
    with tempfile.TemporaryDirectory(prefix="tri-sqlite-") as tmp:
        copy = Path(tmp) / "case.db"
        shutil.copyfile(source, copy)
        for suffix in ("-wal", "-journal"):  # committed work not yet checkpointed lives beside the file
            side = _regular(target_dir, file + suffix)
            if side is not None:
                shutil.copyfile(side, Path(tmp) / f"case.db{suffix}")
        return _run_sqlite(copy, queries)


def _run_sqlite(copy: Path, queries: list[Query]) -> list[dict[str, Cell]] | str:
    deadline = time.monotonic() + QUERY_SECONDS
    try:
        connection = sqlite3.connect(copy)
    except sqlite3.Error as exc:
        return f"the database cannot be opened: {exc}"
    try:
        connection.execute("PRAGMA trusted_schema = OFF")
        connection.execute("PRAGMA query_only = ON")
        connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        rows: list[dict[str, Cell]] = []
        for query in queries:
            cursor = connection.execute(query.sql)
            columns = [d[0] for d in cursor.description or ()]
            rows += query_rows("", query.name, columns, cursor.fetchmany(QUERY_ROWS))
        return rows
    except sqlite3.Error as exc:
        return f"a side-effect query failed: {exc}"
    finally:
        connection.close()


def _postgres_rows(db: Postgres, target_file: Path, name: str, queries: list[Query]) -> list[dict[str, Cell]] | str:
    import psycopg

    rows: list[dict[str, Cell]] = []
    # as the case's own role, never the administrator: the database is the service's, and a view or function it
    # planted runs with the rights of whoever queries it
    with _admin(db, target_file, name, user=name) as connection:
        connection.execute(f"SET statement_timeout = {int(QUERY_SECONDS * 1000)}")
        connection.execute("SET default_transaction_read_only = on")
        for query in queries:
            try:
                cursor = connection.execute(query.sql)  # the exam's SQL, in a read-only session
            except psycopg.Error as exc:
                return f"a side-effect query failed: {str(exc).strip().splitlines()[0]}"
            columns = [d.name for d in cursor.description or ()]
            rows += query_rows("", query.name, columns, cursor.fetchmany(QUERY_ROWS))
    return rows


def _regular(folder: Path, relative: str) -> Path | None:
    """``folder/relative`` when it is a regular file inside ``folder`` reached without any link."""
    path = folder / relative
    try:
        if not path.resolve().is_relative_to(folder.resolve()) or path.resolve() != path.absolute():
            return None
        return path if stat.S_ISREG(os.lstat(path).st_mode) else None
    except OSError:
        return None


@dataclass(frozen=True)
class Ran:
    """One case's run as the gateway records it: how it ended, its rows and what went wrong reading them."""

    done: Completed
    layers: list[str]
    rows: list[dict[str, Cell]]
    error: str | None = None
    stray: str | None = None
    logs: tuple[Path, ...] = ()


def serve_case(target_file: Path, config: TargetConfig, work: Path, values: dict[str, str],
               env: dict[str, str]) -> Ran:
    """Restore the database, run the request driver in the case's jail, then read the rows: the answers the
    driver reported and the side-effect queries against the database."""
    spec = config.service
    assert spec is not None
    target_dir, input_dir, output_dir = work / "target", work / "input", work / "output"
    plan, case = load_plan(input_dir), values["{case}"]
    with restored(spec, target_dir, target_file) as db:
        values = {**values, "{db}": db.url if db else ""}
        argv, readable = _driver(work, spec, plan, values, env, config.output_cap)
        jail = Jail(readable=(input_dir, *readable, *(db.readable if db else ())),
                    writable=(target_dir, work / "home", work / "tmp", work / "log"))
        done, layers = jail.run(argv, cwd=target_dir, env=env, timeout=config.timeout, cap=config.output_cap,
                                file_cap=config.write_cap)
        answers = read_answers(done.stdout)
        rows, error = step_rows(case, plan, answers), _driver_error(answers, done)
        side = db.read(plan.queries) if db is not None and plan.queries else []
    _record(output_dir / "responses.jsonl", answers)
    if isinstance(side, str):
        error = error or side
    else:
        rows += [{**row, "case": case} for row in side]
    logs = tuple(p for p in sorted((work / "log").iterdir()) if stat.S_ISREG(p.lstat().st_mode))
    return Ran(done, layers, rows, error, logs=logs)


def _driver(work: Path, spec: ServiceSpec, plan: RequestPlan, values: dict[str, str], env: dict[str, str],
            output_cap: int) -> tuple[list[str], tuple[Path, ...]]:
    """The driver's argv and what it needs to read: its own copy and its plan (the jail does not show this
    package)."""
    folder = work / "driver"
    folder.mkdir()
    (work / "log").mkdir()
    shutil.copyfile(_client.__file__, folder / "client.py")
    wire = {
        "start": [_expand(a, values) for a in spec.start],
        "env": {**env, **{k: _expand(v, values) for k, v in spec.env.items()}},
        "cwd": values["{target}"], "ready": spec.ready.model_dump(), "stop_grace": spec.stop_grace,
        "clock": spec.clock.model_dump() if spec.clock else None, "initial_clock": plan.clock,
        "steps": [s.wire() for s in plan.steps], "body_cap": min(spec.body_cap, output_cap),
        "request_timeout": spec.request_timeout, "log": str(work / "log"),
    }
    (folder / "plan.json").write_text(json.dumps(wire, ensure_ascii=False), encoding="utf-8")
    return [sys.executable, "-I", str(folder / "client.py"), str(folder / "plan.json")], (folder,)


def _expand(arg: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        arg = arg.replace(name, value)
    return arg


def _driver_error(answers: list[dict[str, Any]], done: Completed) -> str | None:
    if done.timed_out:
        return "the case ran out of time"
    problems = [a for a in answers if a.get("error")]
    if problems:
        step = problems[0].get("step")
        return f"{'step ' + str(step) + ': ' if step else ''}{problems[0]['error']}"
    return None


def _record(path: Path, answers: list[dict[str, Any]]) -> None:
    """The answers as received (headers left out: dates and server names would make every run differ)."""
    kept = [{k: v for k, v in a.items() if k != "headers"} for a in answers]
    path.write_text("".join(json.dumps(a, ensure_ascii=False, sort_keys=True) + "\n" for a in kept),
                    encoding="utf-8")
