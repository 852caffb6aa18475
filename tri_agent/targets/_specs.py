"""What a target file holds beyond the command: the service and browser blocks, the database a service case
restores, and the placeholders every argv is expanded with. A leaf: the target file's model (``_target``) and the
kinds that run these blocks (``service/``, ``browser/``) all import it, and it imports none of them.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import ConfigDict, Field

from .._model import Written

Kind = Literal["command", "service", "browser"]  # how the gateway drives a target
KINDS: tuple[str, ...] = get_args(Kind)
Cell = str | None
PLACEHOLDERS = ("{target}", "{input}", "{output}", "{case}")


def expand(arg: str, values: dict[str, str]) -> str:
    """``arg`` with every placeholder of ``values`` (``{target}`` -> its path, ...) filled in."""
    for name, value in values.items():
        arg = arg.replace(name, value)
    return arg


class _Strict(Written):
    model_config = ConfigDict(frozen=True)


class Sqlite(_Strict):
    """An SQLite database file inside the target folder; the built file is the snapshot, copied per case."""

    kind: Literal["sqlite"] = Field(description="Database kind: sqlite.")
    file: str = Field(description="Database file, relative to the target folder ({db} is its path).")


class Postgres(_Strict):
    """A PostgreSQL server reached by its Unix socket; each case gets a new database cloned from ``template`` and
    a login role of its own (a password only the case knows), a member of ``owner``, allowed to connect to that
    database only. The server must ask for a password on its socket: the case's jail sees the socket."""

    kind: Literal["postgresql"] = Field(description="Database kind: postgresql.")
    socket_dir: str = Field(description="Folder of the server's Unix socket (relative to the target file); the "
                            "case's jail sees the socket file, nothing else of it.")
    port: int = Field(default=5432, ge=1, le=65535, description="Server port (names the socket file).")
    user: str = Field(default="postgres", description="Administrator role of the orchestrator (its password from "
                      "PGPASSWORD or ~/.pgpass, which no jail sees): clones and drops. Never given to the service.")
    owner: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Role owning the service's tables in the "
                       "template; each case's role is a member of it. It may not be a superuser.")
    template: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="Template database: the snapshot.")


Database = Sqlite | Postgres


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


class ServiceSpec(_Strict):
    """How a service target is started, probed, restored and stopped."""

    start: list[str] = Field(min_length=1, description="argv: {port} {db} {target} {tmp} {data}.")
    env: dict[str, str] = Field(default_factory=dict, description="The service's environment (same placeholders).")
    seed: list[str] | None = Field(default=None, min_length=1, description="argv run in the case's jail before the "
                                   "service first starts, to load the case's own data (the files the generator "
                                   "wrote in the case's data/ folder, {data}) into its fresh database ({db}); same "
                                   "placeholders but {port}, under the case's deadline and limits. A seed that fails "
                                   "leaves the case unready, with its exit code and stderr.")
    ready: Ready = Field(default_factory=Ready, description="Readiness probe.")
    database: Database | None = Field(default=None, discriminator="kind",
                                               description="The database restored before each case.")
    clock: EnvClock | EndpointClock | None = Field(default=None, description="How a case sets the service's clock.")
    stop_grace: float = Field(default=2, ge=0, le=30, description="Seconds between SIGTERM and SIGKILL at stop.")
    request_timeout: float = Field(default=10, gt=0, description="Seconds one request may take.")
    body_cap: int = Field(default=1 << 20, ge=1024, description="Bytes of each response body kept.")


class Viewport(_Strict):
    """The page's size in CSS pixels."""

    width: int = Field(default=1024, ge=200, le=4096, description="Width.")
    height: int = Field(default=768, ge=200, le=4096, description="Height.")


class BrowserSpec(_Strict):
    """How a browser target's cases drive the browser."""

    executable: str | None = Field(default=None, description="The chromium binary (default: Debian's, "
                                   "/usr/lib/chromium/chromium).")
    viewport: Viewport = Field(default_factory=Viewport, description="Page size.")
    step_timeout: float = Field(default=5, gt=0, le=120, description="Seconds one step may wait for its element, "
                                "its navigation or its state.")
    shots: Literal["reads", "each", "end"] = Field(default="reads", description="Screenshots kept as evidence: "
                                                   "after every reading step, after every step, or only at the end "
                                                   "(a stuck step and the end are always shot). Never scored.")
