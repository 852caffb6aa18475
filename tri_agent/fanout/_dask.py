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
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

from .._errors import InfrastructureFailure, TamperDetected, TriAgentError, UsageError
from .._version import __version__
from ._bundle import Bundle, cached, pack
from ._executor import Task

T = TypeVar("T")
R = TypeVar("R")
RETRIES = 2  # attempts after the first, each on another worker where there is one
KEPT = 64  # bundles kept on the workers after their run: the build and exam of the last rounds, a gate's mutants
GRACE = 30.0  # seconds past a task's deadline before the orchestrator stops waiting for any answer
_LOCAL = re.compile(r"local:(\d+)")
_ADDRESS = re.compile(r"(tcp|tls|ws|wss)://\S+|[\w.-]+:\d+")


class DaskCluster:
    """The executor over a Dask client; made by ``open_cluster``."""

    ships = True

    def __init__(self, client: Any, name: str, grace: float = GRACE) -> None:
        self.client, self.name, self.grace = client, name, grace
        self.faults: list[str] = []
        self.stuck: set[str] = set()  # workers that held a task past the clock: never sent another
        self.version = __version__  # what every worker must run: its case runner is the one that runs the case
        self.submitted = 0  # tasks sent, retries included
        self._sent: dict[str, Any] = {}  # bundle digest -> its future: each folder travels once per worker
        self._packed: dict[tuple[Path, tuple[tuple[str, int, int, int], ...]], Bundle] = {}
        self._lock = threading.Lock()  # a mutation gate judges several mutants at once, each shipping its tree

    def map(self, task: Task[T, R], items: Sequence[T], *, folders: Mapping[str, Path], jobs: int,
            label: Callable[[T], str], deadline: float, check: Callable[[T, R], str | None],
            keep: Callable[[T, R], R] = lambda _item, result: result) -> list[R]:
        """``jobs`` caps the tasks in flight on the whole cluster; ``keep`` is applied to each result that checked,
        as it comes (to unpack it and let its bytes go), and its return is what is recorded."""
        run: _Run[T, R] = _Run(self, task, items, folders, label, check, keep)
        return run.until_done(deadline + self.grace, max(1, jobs))

    def ship(self, folders: Mapping[str, Path]) -> list[Any]:
        """The folders' bundles on every worker, in the order of their names; sent again where a copy was lost (its
        only holder died). The last ``KEPT`` bundles stay; older ones are let go once no run holds them."""
        with self._lock:
            wanted = [self._pack(folders[n]) for n in sorted(folders)]
            for bundle in wanted:
                held = self._sent.pop(bundle.sha256, None)
                if held is None or held.status != "finished":
                    held = self.client.scatter(bundle, broadcast=True, hash=False)
                self._sent[bundle.sha256] = held  # the most recently asked for last
            for old in list(self._sent)[:-KEPT]:
                del self._sent[old]
            return [self._sent[b.sha256] for b in wanted]

    def _pack(self, folder: Path) -> Bundle:
        """The folder's bundle, packed again only when a file in it changed (its names, sizes, modes and times): a
        mutant's replays ship the same tree case after case."""
        key = (folder, _signature(folder))
        if key not in self._packed:
            kept = [(k, v) for k, v in self._packed.items() if k[0] != folder][-KEPT:]
            self._packed = {**dict(kept), key: pack(folder)}
        return self._packed[key]


def _signature(folder: Path) -> tuple[tuple[str, int, int, int], ...]:
    found = []
    for top, _dirs, files in os.walk(folder):
        for name in files:
            st = os.lstat(os.path.join(top, name))
            found.append((os.path.relpath(os.path.join(top, name), folder), st.st_size, st.st_mtime_ns, st.st_mode))
    return tuple(sorted(found))


class _Run(Generic[T, R]):
    """One ``map`` on the cluster: the futures in flight, the results kept, the attempts of each item."""

    def __init__(self, cluster: DaskCluster, task: Task[T, R], items: Sequence[T], folders: Mapping[str, Path],
                 label: Callable[[T], str], check: Callable[[T, R], str | None], keep: Callable[[T, R], R]) -> None:
        self.cluster, self.task, self.items, self.folders = cluster, task, items, folders
        self.label, self.check, self.keep = label, check, keep
        self.names, self.shipped = sorted(folders), cluster.ship(folders)
        self.results: dict[int, R] = {}
        self.errors: dict[int, TriAgentError] = {}  # the tasks' own verdicts: the first in item order is raised
        self.attempts = [0] * len(items)
        self.avoid: list[set[str]] = [set() for _ in items]
        self.pending: dict[Any, int] = {}
        self.waiting = list(range(len(items)))[::-1]  # not submitted yet (popped from the end: in order)

    def until_done(self, quiet: float, jobs: int) -> list[R]:
        from distributed import as_completed

        done = as_completed()
        try:
            last = time.monotonic()
            while self.pending or self.waiting:
                while self.waiting and len(self.pending) < jobs:
                    done.add(self._submit(self.waiting.pop()))
                batch = done.next_batch(block=False) if done.has_ready() else []
                for future in batch:
                    self._settle(future, quiet)
                if batch:
                    last = time.monotonic()
                elif time.monotonic() - last > quiet:
                    self._overdue(quiet)
                    last = time.monotonic()
                else:
                    time.sleep(0.02)
        finally:
            self.cluster.client.cancel(list(self.pending))
        if self.errors:  # as the local pool raises: the error of the first item, in order, that raised one
            raise self.errors[min(self.errors)]
        return [self.results[i] for i in range(len(self.items))]

    def _submit(self, i: int) -> Any:
        client, avoid = self.cluster.client, self.avoid[i] | self.cluster.stuck
        where: dict[str, Any] = {}
        if avoid:  # another worker than those it failed on, where there is one (asked only then: a round trip)
            others = [w for w in client.scheduler_info(n_workers=-1)["workers"] if w not in avoid]
            where = {"workers": others, "allow_other_workers": True} if others else {}
        future = client.submit(_remote, self.cluster.version, self.task, self.items[i], self.names, *self.shipped,
                               pure=False, key=f"tri-agent-{uuid.uuid4().hex}", **where)
        self.pending[future] = i
        self.cluster.submitted += 1
        return future

    def _settle(self, future: Any, quiet: float) -> None:
        i = self.pending.pop(future, None)
        if i is None or i in self.results or i in self.errors:
            return  # cancelled past the clock, or run twice by the engine: the first result that checked is kept
        try:
            where, result = future.result(timeout=quiet)
        except TriAgentError as exc:  # the task's own verdict (a usage error, a policy violation): as locally
            self.errors[i] = exc
            return
        except Exception as exc:  # a lost worker, a dead task, a lost bundle: a fault, kept and retried
            self._worker_fault(i, exc)
            return
        problem = self.check(self.items[i], result)
        if problem is None:
            self.results[i] = self.keep(self.items[i], result)
            return
        self.avoid[i].add(where)
        self._fault(i, f"the result from {where} {problem}")

    def _worker_fault(self, i: int, exc: Exception) -> None:
        from distributed.scheduler import KilledWorker

        if isinstance(exc, WorkerFault):
            self.avoid[i].add(exc.worker)
        elif isinstance(exc, KilledWorker):
            self.avoid[i].add(getattr(exc.last_worker, "address", ""))
        elif not isinstance(exc, TimeoutError):  # cancelled: a bundle was lost with the only worker that held it
            self.shipped = self.cluster.ship(self.folders)
        self._fault(i, f"{type(exc).__name__}: {str(exc)[:200]}")

    def _overdue(self, quiet: float) -> None:
        """Nothing answered for a whole deadline: the tasks a worker holds are lost (the engine cannot stop a running
        task), their workers never get another; tasks still queued keep their place. With nothing held anywhere,
        nothing runs at all: every task in flight is lost."""
        held = {key: worker for worker, keys in self.cluster.client.processing().items() for key in keys}
        late = sorted(((f, i) for f, i in self.pending.items() if f.key in held or not held), key=lambda fi: fi[1])
        self.cluster.client.cancel([f for f, _ in late])
        for future, i in late:
            del self.pending[future]
            if future.key in held:
                self.cluster.stuck.add(held[future.key])
            self._fault(i, f"no answer within {quiet:.0f} s (the orchestrator's clock)")

    def _fault(self, i: int, why: str) -> None:
        self.attempts[i] += 1
        name = self.label(self.items[i])
        self.cluster.faults.append(f"{name}: {why} (attempt {self.attempts[i]})")
        if self.attempts[i] > RETRIES:
            raise InfrastructureFailure(f"{name} failed on the cluster {self.attempts[i]} times; last: {why}",
                                        hint=f"check the workers of {self.cluster.name} (dask's logs); every fault "
                                             f"so far is listed in the run folder's faults.json")
        self.waiting.append(i)


def _remote(version: str, task: Task[T, R], item: T, names: list[str], *bundles: Bundle) -> tuple[str, R]:
    """What runs on a worker: the bundles unpacked once per worker, checked on arrival, then the task. A fault of
    the worker's own (not the task's verdict) comes back naming the worker, so the retry goes elsewhere; so does a
    worker whose tri-agent is not the orchestrator's (another case runner would run the case)."""
    from distributed import get_worker

    worker = get_worker()
    if version != __version__:
        raise WorkerFault(worker.address, f"{worker.address} runs tri-agent {__version__}, the orchestrator {version}")
    try:
        cache = Path(worker.local_directory) / "tri-agent-bundles"
        cache.mkdir(exist_ok=True)
        folders = {name: cached(b, cache, f"the {name} folder") for name, b in zip(names, bundles, strict=True)}
        return worker.address, task(item, folders)
    except TamperDetected as exc:  # the worker's copy of a bundle, not the task
        raise WorkerFault(worker.address, f"on {worker.address}: {exc.line()}") from None
    except TriAgentError:
        raise
    except Exception as exc:  # the disk, the memory, the machine
        raise WorkerFault(worker.address, f"on {worker.address}: {type(exc).__name__}: {exc}") from None


class WorkerFault(Exception):
    """What went wrong on a worker that is not the task's verdict (a bundle changed on arrival, a full disk)."""

    def __init__(self, worker: str, message: str) -> None:
        super().__init__(worker, message)
        self.worker = worker

    def __str__(self) -> str:
        return str(self.args[1])


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
    except (TypeError, ValueError) as exc:  # a tls:// address without the TLS settings, say
        raise UsageError(f"--cluster {address!r} cannot be used: {exc}",
                         hint="for tls://, set Dask's TLS settings (distributed.comm.tls) as on the scheduler") from exc
    except OSError as exc:
        raise InfrastructureFailure(f"no Dask scheduler answered at {address} within "
                                    f"{time.monotonic() - start:.0f} s ({exc})",
                                    hint="start one with `dask scheduler` and join workers with `dask worker`") from exc
    with client:
        yield client
