"""An acceptance whose case runs go to a Dask cluster of worker processes (``accept --cluster local:2``) leaves the
trail the local pool leaves: the same records, byte for byte, so the same trail digest for the same seeds."""

from __future__ import annotations

from pathlib import Path

from conftest import toy_project

from tri_agent._api import accept
from tri_agent.acceptance._config import load_config
from tri_agent.acceptance._state import locate


def _digest(project: Path) -> str:
    return locate(project, load_config(project)).store.digest()


def test_an_acceptance_on_a_local_cluster_leaves_the_same_trail(toy_accepted: tuple[Path, object],
                                                                tmp_path: Path) -> None:
    project = toy_project(tmp_path / "toy")
    verdict = accept(project, cluster="local:2")
    assert verdict.decision == "accepted" and verdict.rounds == 5 and not verdict.certified
    assert _digest(project) == _digest(toy_accepted[0])
