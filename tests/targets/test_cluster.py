"""Case runs on a Dask cluster of worker processes (``--cluster local:2``): the records byte-identical to the local
pool's, a worker killed mid-run costs a retry and nothing else, a result whose outputs are not the ones its
provenance fingerprints is never recorded."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tri_agent import _progress as progress
from tri_agent import fanout
from tri_agent._api import run_exam
from tri_agent._errors import InfrastructureFailure
from tri_agent.targets import _gateway
from tri_agent.targets._gateway import run_exam as gateway_run

ROOT = Path(__file__).resolve().parents[2]
TOY = ROOT / "examples" / "toy-grades"
RECORDS = ("actual.jsonl", "observed_behaviors.jsonl", "run.json", "coverage.json")


def _provenance(run: Path) -> list[dict[str, object]]:
    # the wall time of each run is kept but is no fingerprint: it differs between any two runs
    return [{k: v for k, v in json.loads(line).items() if k != "seconds"}
            for line in (run / "provenance.jsonl").read_text().splitlines()]


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _same_records(local: Path, cluster: Path) -> None:
    for name in RECORDS:
        assert (local / name).read_bytes() == (cluster / name).read_bytes(), name
    assert _provenance(local) == _provenance(cluster)
    assert _tree(local / "outputs") == _tree(cluster / "outputs")


def test_a_run_on_a_local_cluster_records_what_the_local_pool_records(toy_build: Path, tmp_path: Path) -> None:
    local = run_exam(toy_build, TOY / "target.yaml", tmp_path / "local", twice=True)
    with progress.watching(progress.Meter()) as meter:
        cluster = run_exam(toy_build, TOY / "target.yaml", tmp_path / "cluster", twice=True, cluster="local:2")
    assert cluster == local and local.twice and local.faults == []
    assert meter.done["cases"] == meter.total["cases"] == 2 * local.cases  # each case counted as it came back
    _same_records(tmp_path / "local", tmp_path / "cluster")


def _slow_toy(dest: Path) -> Path:
    """The toy target with every case a second long: time to kill a worker while it runs one."""
    import shutil

    shutil.copytree(TOY / "target", dest / "target")
    script = dest / "target" / "grades.py"
    script.write_text("import time\ntime.sleep(1)\n" + script.read_text())
    (dest / "target.yaml").write_text((TOY / "target.yaml").read_text())
    return dest / "target.yaml"


def _kill_a_busy_worker(cluster: fanout.DaskCluster, stop: threading.Event, killed: list[str]) -> None:
    pids = cluster.client.run(os.getpid)
    while not stop.is_set() and not killed:
        busy = [w for w, keys in cluster.client.processing().items() if keys]
        if busy and cluster.client.run(lambda: 0, workers=busy[:1]):
            time.sleep(0.3)  # inside its case, not between two
            os.kill(pids[busy[0]], signal.SIGKILL)
            killed.append(busy[0])
        time.sleep(0.05)


def test_a_worker_killed_mid_run_costs_a_retry_and_the_records_are_the_same(toy_build: Path,
                                                                             tmp_path: Path) -> None:
    target = _slow_toy(tmp_path / "slow")
    local = gateway_run(toy_build, target, tmp_path / "local")
    stop, killed = threading.Event(), []
    with fanout.open_cluster("local:2") as cluster, fanout.using(cluster):
        killer = threading.Thread(target=_kill_a_busy_worker, args=(cluster, stop, killed))
        killer.start()
        try:
            record = gateway_run(toy_build, target, tmp_path / "cluster")
        finally:
            stop.set()
            killer.join()
    assert killed, "no worker was killed while it ran a case"
    assert record.faults and all(f.startswith("case c-") and "(attempt 1)" in f for f in record.faults)
    assert record.model_copy(update={"faults": []}) == local
    for name in ("actual.jsonl", "observed_behaviors.jsonl"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "cluster" / name).read_bytes()
    assert _provenance(tmp_path / "local") == _provenance(tmp_path / "cluster")


FORGED = {  # what a lying worker changes in a true result, and what the orchestrator says of it
    "outputs": ("fingerprints of other bytes", "does not match its fingerprint at summary.csv"),
    "case": ("another case's result", "is the result of case c-000000000000"),
}


@pytest.mark.parametrize("lie", sorted(FORGED))
def test_a_result_that_is_not_the_one_asked_for_is_never_recorded(toy_build: Path, tmp_path: Path, lie: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    real = _gateway._case_task

    def lying(task: _gateway._CaseTask, folders: dict[str, Path]) -> _gateway._Shipped:
        shipped = real(task, folders)
        forged = {name: "0" * 64 for name in shipped.provenance.outputs} if lie == "outputs" else "c-000000000000"
        return replace(shipped, provenance=shipped.provenance.model_copy(update={lie: forged}))

    monkeypatch.setattr(_gateway, "_case_task", lying)
    with fanout.local_cluster(2, processes=False) as lying, fanout.using(lying), \
            pytest.raises(InfrastructureFailure, match=rf"failed on the cluster 3 times; last: the result from .* "
                                                       rf"{FORGED[lie][1]}") as err:
        gateway_run(toy_build, TOY / "target.yaml", tmp_path / "run")
    assert err.value.exit_code == 7
    assert not (tmp_path / "run" / "run.json").exists()  # nothing recorded but the faults, the run's evidence
    faults = json.loads((tmp_path / "run" / "faults.json").read_text())
    assert len(faults) >= 3 and all(FORGED[lie][1] in f for f in faults)
