"""The tests a tree collects, and which a change lost: shared by ``tri-agent evidence`` (its *reduced* signal) and an
acceptance's view of its builder's own tests, so both count a removed test the same way (docs/evidence.md).

- ``_collect``: ``pytest --collect-only`` on a tree, in the OS sandbox (``_collector`` is the standalone plugin it
  runs with there);
- ``_reduced``: the ids gone since the base, cleared only by a reasoned line of the removals file.

Above ``sandbox`` (where the collection runs) and below the wings that use it.
"""

from ._collect import collect
from ._reduced import MIN_REASON_LETTERS, REMOVALS, Disclosed, Reduced, parse_removals, reduced

__all__ = ["MIN_REASON_LETTERS", "REMOVALS", "Disclosed", "Reduced", "collect", "parse_removals", "reduced"]
