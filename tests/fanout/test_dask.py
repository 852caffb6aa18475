"""The Dask executor: bundles shipped once per worker and checked on arrival, results checked before they are kept,
faults kept, retried on another worker a bounded number of times, then exit 7 naming the item. Workers here are
threads of this process (a LocalCluster without processes), so a test can make one misbehave; the case runs on
worker processes are tested in tests/targets/test_cluster.py."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator, Mapping
from itertools import pairwise
from pathlib import Path

import pytest

from tri_agent._errors import ExitCode, InfrastructureFailure, UsageError
from tri_agent.fanout import RETRIES, Bundle, DaskCluster, local_cluster, open_cluster
from tri_agent.fanout import _dask as dask_executor


@pytest.fixture(scope="module")
def cluster() -> Iterator[DaskCluster]:
    with local_cluster(2, processes=False, grace=1.0) as cluster:
        yield cluster


@pytest.fixture
def fresh(cluster: DaskCluster) -> DaskCluster:
    cluster.faults.clear()
    cluster.stuck.clear()
    return cluster


def _read(item: int, folders: Mapping[str, Path]) -> tuple[int, str, str]:
    return item, (folders["data"] / "value").read_text(), str(folders["data"])


def _label(item: int) -> str:
    return f"item {item}"


def _fine(_item: object, _result: object) -> str | None:
    return None


def _folder(tmp_path: Path, value: str) -> Path:
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "value").write_text(value)
    return tmp_path / "data"


def test_results_come_in_item_order_from_folders_shipped_once(fresh: DaskCluster, tmp_path: Path) -> None:
    folder = _folder(tmp_path, "v1")
    got = fresh.map(_read, list(range(12)), folders={"data": folder}, jobs=2, label=_label, deadline=30,
                    check=_fine)
    assert [(i, v) for i, v, _ in got] == [(i, "v1") for i in range(12)]
    places = {where for _, _, where in got}
    assert all(Path(p).name == next(iter(fresh._sent)) for p in places)  # unpacked under its digest
    assert not any(Path(p).is_relative_to(tmp_path) for p in places)  # never read in place
    assert len(fresh._sent) == 1 and fresh.faults == []
    fresh.map(_read, [0], folders={"data": folder}, jobs=2, label=_label, deadline=30, check=_fine)
    assert len(fresh._sent) == 1  # the same bytes are not shipped again
    (folder / "value").write_text("v2")
    assert fresh.map(_read, [0], folders={"data": folder}, jobs=2, label=_label, deadline=30,
                     check=_fine)[0][1] == "v2"


def test_a_result_that_fails_its_check_is_retried_on_another_worker_and_kept_once(fresh: DaskCluster,
                                                                                    tmp_path: Path) -> None:
    seen: list[str] = []

    def where(item: int, folders: Mapping[str, Path]) -> str:
        from distributed import get_worker

        return get_worker().address

    def check(_item: int, worker: str) -> str | None:
        seen.append(worker)
        return "failed its hashes" if len(seen) == 1 else None

    got = fresh.map(where, [7], folders={"data": _folder(tmp_path, "x")}, jobs=2, label=_label, deadline=30,
                    check=check)
    assert got == [seen[1]] and seen[0] != seen[1]  # the second attempt ran elsewhere
    assert fresh.faults == [f"item 7: the result from {seen[0]} failed its hashes (attempt 1)"]


def test_a_result_that_never_checks_ends_the_run_naming_the_item(fresh: DaskCluster, tmp_path: Path) -> None:
    with pytest.raises(InfrastructureFailure, match=rf"item 3 failed on the cluster {RETRIES + 1} times; last: the "
                                                    r"result from .* lies") as err:
        fresh.map(_read, [1, 3], folders={"data": _folder(tmp_path, "x")}, jobs=2, label=_label, deadline=30,
                  check=lambda item, _r: "lies" if item == 3 else None)
    assert err.value.exit_code == ExitCode.INFRASTRUCTURE == 7
    assert len(fresh.faults) == RETRIES + 1 and all(f.startswith("item 3:") for f in fresh.faults)


# tasks travel pickled even to a worker in this process: a module-level task is pickled by name, so what it counts
# here is what the test reads
CALLS: list[int] = []
WHERE: list[str] = []
RELEASE = threading.Event()


@pytest.fixture
def calls() -> Iterator[list[int]]:
    CALLS.clear()
    WHERE.clear()
    RELEASE.clear()
    yield CALLS
    RELEASE.set()


def _refuses(item: int, folders: Mapping[str, Path]) -> None:
    CALLS.append(item)
    raise UsageError(f"case {item} names no output", hint="say which")


def _dies_once(item: int, folders: Mapping[str, Path]) -> int:
    from distributed import get_worker

    CALLS.append(item)
    WHERE.append(get_worker().address)
    if len(CALLS) == 1:
        raise MemoryError("the worker ran out of memory")
    return item * 2


def _timed(item: int, folders: Mapping[str, Path]) -> tuple[float, float]:
    start = time.monotonic()
    time.sleep(0.2)
    return start, time.monotonic()


def _hangs_once(item: int, folders: Mapping[str, Path]) -> int:
    CALLS.append(item)
    if len(CALLS) == 1:
        RELEASE.wait(20)  # a lost task: the engine itself never gives up on it
    return item


def test_the_tasks_own_error_is_raised_as_it_would_be_locally_never_retried(fresh: DaskCluster, tmp_path: Path,
                                                                              calls: list[int]) -> None:
    with pytest.raises(UsageError, match="case 5 names no output"):
        fresh.map(_refuses, [5], folders={"data": _folder(tmp_path, "x")}, jobs=2, label=_label, deadline=30,
                  check=_fine)
    assert calls == [5] and fresh.faults == []


def _refuses_in_turn(item: int, folders: Mapping[str, Path]) -> None:
    if item == 0:
        time.sleep(0.5)  # the second item's error comes back first
    raise UsageError(f"case {item} names no output", hint="say which")


def test_of_several_errors_the_first_items_is_raised_as_the_local_pool_raises_it(fresh: DaskCluster,
                                                                                  tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="case 0 names no output"):
        fresh.map(_refuses_in_turn, [0, 1], folders={"data": _folder(tmp_path, "x")}, jobs=2, label=_label,
                  deadline=30, check=_fine)


def test_a_worker_that_runs_another_tri_agent_is_never_given_a_case(fresh: DaskCluster, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fresh, "version", "0.0.0-elsewhere")
    with pytest.raises(InfrastructureFailure, match=r"item 2 failed on the cluster 3 times; last: WorkerFault: "
                                                    r"\S+ runs tri-agent .*, the orchestrator 0.0.0-elsewhere"):
        fresh.map(_read, [2], folders={"data": _folder(tmp_path, "x")}, jobs=2, label=_label, deadline=30,
                  check=_fine)


def test_a_task_that_dies_is_a_fault_and_is_retried(fresh: DaskCluster, tmp_path: Path, calls: list[int]) -> None:
    assert fresh.map(_dies_once, [4], folders={"data": _folder(tmp_path, "x")}, jobs=2, label=_label,
                     deadline=30, check=_fine) == [8]
    assert calls == [4, 4] and len(fresh.faults) == 1 and WHERE[0] != WHERE[1]  # the retry ran elsewhere
    assert re.fullmatch(r"item 4: WorkerFault: on \S+: MemoryError: the worker ran out of memory \(attempt 1\)",
                        fresh.faults[0])


def test_the_orchestrators_clock_ends_a_task_nobody_answers_for(fresh: DaskCluster, tmp_path: Path,
                                                               calls: list[int]) -> None:
    start = time.monotonic()
    assert fresh.map(_hangs_once, [9], folders={"data": _folder(tmp_path, "x")}, jobs=2, label=_label,
                     deadline=0.5, check=_fine) == [9]
    assert time.monotonic() - start < 10 and calls == [9, 9]
    assert fresh.faults == ["item 9: no answer within 2 s (the orchestrator's clock) (attempt 1)"]
    assert len(fresh.stuck) == 1  # the worker that holds the lost task is sent nothing more, in this map or the next
    places = fresh.map(_where, list(range(6)), folders={"data": _folder(tmp_path, "x")}, jobs=6, label=_label,
                       deadline=30, check=_fine)
    assert not set(places) & fresh.stuck


def _where(item: int, folders: Mapping[str, Path]) -> str:
    from distributed import get_worker

    return str(get_worker().address)


def test_the_targets_jobs_caps_the_cases_in_flight_on_the_whole_cluster(fresh: DaskCluster, tmp_path: Path) -> None:
    spans = sorted(fresh.map(_timed, list(range(4)), folders={"data": _folder(tmp_path, "x")}, jobs=1, label=_label,
                             deadline=30, check=_fine))
    assert all(a[1] <= b[0] for a, b in pairwise(spans))  # one after another
    spans = sorted(fresh.map(_timed, list(range(4)), folders={"data": _folder(tmp_path, "x")}, jobs=4, label=_label,
                             deadline=30, check=_fine))
    assert any(a[1] > b[0] for a, b in pairwise(spans))  # side by side on the two workers


def test_a_bundle_changed_on_the_way_is_a_fault_then_exit_7(fresh: DaskCluster, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    real = dask_executor.pack

    def corrupted(folder: Path) -> Bundle:
        bundle = real(folder)
        return Bundle(bundle.sha256, bundle.data[:-1] + b"\x01")

    monkeypatch.setattr(dask_executor, "pack", corrupted)
    with pytest.raises(InfrastructureFailure, match=r"item 0 failed on the cluster .* WorkerFault: on .*: the "
                                                    r"data folder did not arrive as sent"):
        fresh.map(_read, [0], folders={"data": _folder(tmp_path, "x")}, jobs=2, label=_label, deadline=30,
                  check=_fine)


@pytest.mark.parametrize(("spec", "message"), [
    ("local:0", "0 workers"),
    ("local:65", "65 workers"),
    ("everywhere", "is neither local:N nor a scheduler address"),
    ("local:two", "is neither local:N nor a scheduler address"),
    ("inproc://192.0.2.2/1/1", "is neither local:N nor a scheduler address"),  # in-process only: no cluster
    ("tls://127.0.0.1:1", "cannot be used: .*TLS"),  # TLS without its settings
])
def test_a_cluster_spec_that_names_nothing_runnable_is_a_usage_error(spec: str, message: str) -> None:
    with pytest.raises(UsageError, match=message), open_cluster(spec):
        pass


def test_a_scheduler_that_does_not_answer_is_an_infrastructure_failure() -> None:
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(InfrastructureFailure, match=f"no Dask scheduler answered at tcp://127.0.0.1:{port}"), \
            open_cluster(f"tcp://127.0.0.1:{port}"):
        pass


def _cached_at(item: str, folders: Mapping[str, Path]) -> str:
    return str(folders[item])


def test_a_bundle_lost_with_the_only_worker_that_held_it_is_shipped_again(tmp_path: Path) -> None:
    import os
    import signal
    import sys

    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # a worker process cannot import this test file
    folder = _folder(tmp_path, "v1")
    with local_cluster(1) as one:  # a worker process: killing it loses every bundle it held
        first = one.map(_cached_at, ["data"], folders={"data": folder}, jobs=1, label=str, deadline=60,
                        check=_fine)
        (worker, pid), = one.client.run(os.getpid).items()
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and set(one.client.scheduler_info()["workers"]) in (set(), {worker}):
            time.sleep(0.2)  # until its nanny has started another in its place
        again = one.map(_cached_at, ["data"], folders={"data": folder}, jobs=1, label=str, deadline=60,
                        check=_fine)
    assert Path(again[0]).name == Path(first[0]).name  # the same bytes, unpacked again on the new worker
    assert len(one.faults) <= 1  # at most the one task that found its bundle gone
