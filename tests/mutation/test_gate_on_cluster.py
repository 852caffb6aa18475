"""The mutation gate with its case runs on a Dask cluster of worker processes (the clean run, every mutant's
replays, every hunted input run for real): the same verdicts, for the same reasons, as on the local pool."""

from __future__ import annotations

from pathlib import Path

from conftest import toy_copy

from tri_agent import fanout
from tri_agent.mutation import _gate
from tri_agent.mutation._gate import run_gate


def _verdicts(summary: object) -> list[tuple[str, str, str, list[str], int]]:
    # the wall time of each verdict differs between any two runs; everything else must not
    return [(m.id, m.status, m.reason, m.killed_by, m.cases_run) for m in summary.mutants]  # type: ignore[attr-defined]


def test_a_gate_on_a_local_cluster_reaches_the_local_pools_verdicts(toy_build: Path, tmp_path: Path) -> None:
    toy = toy_copy(tmp_path / "toy", fixed=True)

    def gate(out: str) -> object:
        return run_gate(toy / "target.yaml", toy_build, toy / "exam" / "mutations.yaml", tmp_path / out,
                        selection=_gate.Selection(per_class=1), exam_dir=toy / "exam", hunt_seeds=2).summary

    local = gate("local")
    with fanout.open_cluster("local:2") as cluster, fanout.using(cluster):
        shipped = gate("cluster")
    assert _verdicts(shipped) == _verdicts(local) and len(_verdicts(local)) >= 7
    assert cluster.faults == [] and cluster.submitted >= 2 * len(_verdicts(local))  # the clean run and replays
