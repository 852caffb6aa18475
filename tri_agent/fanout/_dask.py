"""A Dask distributed cluster as executor: ``local:N`` (a LocalCluster of N worker processes on loopback) or the
address of a running scheduler (``dask scheduler``, workers joined with ``dask worker``).

What each task reads travels as bundles (``_bundle``), scattered once to every worker and checked by SHA-256 on
arrival; what it made comes back inside its result, and ``check`` (the caller's) verifies it before it is kept.
The engine's two traps are designed around: it has no per-task deadline (the jail's own deadline ends a run; the
orchestrator's clock ends a task nobody answers for), and it may run a task twice (a task only reads its bundles
and writes its own scratch; the first result that checks is kept, once). Faults (a lost worker, a task past the
clock, a result that fails its check) are kept in ``faults`` and retried on another worker at most ``RETRIES``
times; then the run ends with an infrastructure failure (exit 7) naming the item.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

from .._errors import InfrastructureFailure, TamperDetected, TriAgentError, UsageError
from ._bundle import Bundle, cached, pack
from ._executor import Task

T = TypeVar("T")
R = TypeVar("R")
RETRIES = 2  # attempts after the first, each on another worker where there is one
GRACE = 30.0  # seconds past a task's deadline before the orchestrator stops waiting for any answer
_LOCAL = re.compile(r"local:(\d+)")
_ADDRESS = re.compile(r"(tcp|tls|inproc|ws|wss)://\S+|[\w.-]+:\d+")


class DaskCluster:
    """The executor over a Dask client; made by ``open_cluster``."""

    ships = True

    def __init__(self, client: Any, name: str, grace: float = GRACE) -> None:
        self.client, self.name, self.grace = client, name, grace
        self.faults: list[str] = []
        self._sent: dict[str, Any] = {}  # bundle digest -> its future: each folder travels once per worker

    def map(self, task: Task[T, R], items: Sequence[T], *, folders: Mapping[str, Path], jobs: int,
            label: Callable[[T], str], deadline: float, check: Callable[[T, R], str | None]) -> list[R]:
        names = sorted(folders)
        shipped = [self._ship(folders[n]) for n in names]
        run: _Run[T, R] = _Run(self, task, items, names, shipped, label, check)
        return run.until_done(deadline + self.grace)

    def _ship(self, folder: Path) -> Any:
        bundle = pack(folder)
        if bundle.sha256 not in self._sent:
            self._sent[bundle.sha256] = self.client.scatter(bundle, broadcast=True, hash=False)
        return self._sent[bundle.sha256]


class _Run(Generic[T, R]):
    """One ``map`` on the cluster: the futures in flight, the results kept, the attempts of each item."""

    def __init__(self, cluster: DaskCluster, task: Task[T, R], items: Sequence[T], names: list[str],
                 shipped: list[Any], label: Callable[[T], str], check: Callable[[T, R], str | None]) -> None:
        self.cluster, self.task, self.items, self.names, self.shipped = cluster, task, items, names, shipped
        self.label, self.check = label, check
        self.results: dict[int, R] = {}
        self.attempts = [0] * len(items)
        self.avoid: list[set[str]] = [set() for _ in items]
        self.pending: dict[Any, int] = {}
        for i in range(len(items)):
            self._submit(i)

    def until_done(self, quiet: float) -> list[R]:
        from distributed import wait

        try:
            while self.pending:
                try:
                    done, _ = wait(list(self.pending), timeout=quiet, return_when="FIRST_COMPLETED")
                except TimeoutError:  # nothing answered for a whole deadline: what is in flight is lost
                    self._overdue(quiet)
                    continue
                for future in done:
                    self._settle(future)
        finally:
            self.cluster.client.cancel(list(self.pending))
        return [self.results[i] for i in range(len(self.items))]

    def _submit(self, i: int) -> None:
        client = self.cluster.client
        where: dict[str, Any] = {}
        if self.avoid[i]:  # another worker than those it failed on, where there is one (asked only then: a round trip)
            others = [w for w in client.scheduler_info(n_workers=-1)["workers"] if w not in self.avoid[i]]
            where = {"workers": others, "allow_other_workers": True} if others else {}
        future = client.submit(_remote, self.task, self.items[i], self.names, *self.shipped, pure=False,
                               key=f"tri-agent-{uuid.uuid4().hex}", **where)
        self.pending[future] = i

    def _settle(self, future: Any) -> None:
        i = self.pending.pop(future)
        if i in self.results:
            return  # the engine ran it twice: the first result that checked is the one kept
        try:
            where, result = future.result()
        except TriAgentError:
            raise  # the task's own verdict (a usage error, a policy violation): as it would be locally
        except Exception as exc:  # a lost worker or a dead task is a fault, kept and retried
            self._fault(i, f"{type(exc).__name__}: {str(exc)[:200]}")
            return
        problem = self.check(self.items[i], result)
        if problem is None:
            self.results[i] = result
            return
        self.avoid[i].add(where)
        self._fault(i, f"the result from {where} {problem}")

    def _overdue(self, quiet: float) -> None:
        late = sorted(self.pending.items(), key=lambda kv: kv[1])
        # a worker that holds a lost task may hold it forever (the engine cannot stop a running task): not again
        held = {key: worker for worker, keys in self.cluster.client.processing().items() for key in keys}
        self.cluster.client.cancel([f for f, _ in late])
        self.pending.clear()
        for future, i in late:
            if future.key in held:
                self.avoid[i].add(held[future.key])
            self._fault(i, f"no answer within {quiet:.0f} s (the orchestrator's clock)")

    def _fault(self, i: int, why: str) -> None:
        self.attempts[i] += 1
        name = self.label(self.items[i])
        self.cluster.faults.append(f"{name}: {why} (attempt {self.attempts[i]})")
        if self.attempts[i] > RETRIES:
            raise InfrastructureFailure(f"{name} failed on the cluster {self.attempts[i]} times; last: {why}",
                                        hint=f"check the workers of {self.cluster.name} (dask's logs); the run "
                                             f"kept every fault in its record")
        self._submit(i)


def _remote(task: Task[T, R], item: T, names: list[str], *bundles: Bundle) -> tuple[str, R]:
    """What runs on a worker: the bundles unpacked once per worker, checked on arrival, then the task."""
    from distributed import get_worker

    worker = get_worker()
    cache = Path(worker.local_directory) / "tri-agent-bundles"
    cache.mkdir(exist_ok=True)
    try:
        folders = {name: cached(b, cache, f"the {name} folder") for name, b in zip(names, bundles, strict=True)}
    except TamperDetected as exc:  # the worker's copy, not the task: a fault, retried elsewhere
        raise ArrivalFault(f"on {worker.address}: {exc.line()}") from None
    return worker.address, task(item, folders)


class ArrivalFault(Exception):
    """A bundle that reached a worker changed on the way (or in its cache)."""


@contextmanager
def open_cluster(spec: str) -> Iterator[DaskCluster]:
    """The executor ``--cluster SPEC`` names, closed on leaving."""
    local = _LOCAL.fullmatch(spec)
    if local is None and not _ADDRESS.fullmatch(spec):
        raise UsageError(f"--cluster {spec!r} is neither local:N nor a scheduler address",
                         hint="pass local:2 for a cluster on this machine, or tcp://HOST:8786 for a scheduler")
    try:
        import distributed  # noqa: F401 - installed or not, said now
    except ImportError as exc:
        raise UsageError(f"--cluster needs Dask distributed, which is not installed ({exc})",
                         hint="pip install 'tri-agent[cluster]'") from exc
    if local is not None:
        n = int(local.group(1))
        if not 1 <= n <= 64:
            raise UsageError(f"--cluster {spec!r}: {n} workers", hint="ask for 1 to 64 local workers")
        with local_cluster(n) as cluster:
            yield cluster
        return
    with _connected(spec) as client:
        yield DaskCluster(client, spec)


@contextmanager
def local_cluster(n: int, *, processes: bool = True, grace: float = GRACE) -> Iterator[DaskCluster]:
    """A LocalCluster of ``n`` workers on loopback, one task at a time each: worker processes, or (``processes``
    false, for tests that make a worker misbehave) threads of this process, every task still pickled."""
    import dask
    from distributed import Client, LocalCluster

    # a task whose worker died comes back to the orchestrator at once, as a fault it records and retries, instead of
    # being run again by the scheduler unseen (a scheduler of one's own: set it in its config, docs/scale.md)
    settings = {"distributed.scheduler.allowed-failures": 0}
    where = {"host": "127.0.0.1"} if processes else {}  # threads of this process talk in-process, not over TCP
    with dask.config.set(settings), LocalCluster(n_workers=n, threads_per_worker=1, processes=processes,
                                                 dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR,
                                                 **where) as cluster, Client(cluster) as client:
        yield DaskCluster(client, f"local:{n}", grace)


@contextmanager
def _connected(address: str) -> Iterator[Any]:
    from distributed import Client

    start = time.monotonic()
    try:
        client = Client(address, timeout="10s")
    except OSError as exc:
        raise InfrastructureFailure(f"no Dask scheduler answered at {address} within "
                                    f"{time.monotonic() - start:.0f} s ({exc})",
                                    hint="start one with `dask scheduler` and join workers with `dask worker`") from exc
    with client:
        yield client
