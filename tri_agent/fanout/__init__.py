"""Fan-out: where the many independent runs of an acceptance happen (every case of a run, today).

- ``_bundle``: a folder as one tar named by its SHA-256, checked before it is unpacked (what travels);
- ``_executor``: the executor interface, the local pool (the default: threads of this process) and the one in use;
- ``_dask``: a Dask distributed cluster as executor (``--cluster local:N`` or a scheduler's address): bundles
  shipped once per worker, results checked before they are kept, faults kept and retried, then exit 7.

May import: ``tri_agent._errors`` and ``tri_agent._version``; Dask itself is imported only when a cluster is asked for.
"""

from ._bundle import Bundle, digests, odd, pack, problem, unpack
from ._dask import RETRIES, DaskCluster, local_cluster, open_cluster
from ._executor import LOCAL, Executor, LocalPool, current, using

__all__ = ["LOCAL", "RETRIES", "Bundle", "DaskCluster", "Executor", "LocalPool", "current", "digests", "local_cluster",
           "odd", "open_cluster", "pack", "problem", "unpack", "using"]
