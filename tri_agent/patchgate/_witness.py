"""The verdict's pytest plugin, copied beside the run and loaded with ``-p``: every test's outcome, phase by phase,
appended to a file outside the tree under test, one JSON line each, as pytest reports it.

Standalone (the standard library and pytest only): it runs in the jail, where tri_agent is not importable. The
file's path arrives in ``TRI_AGENT_WITNESS`` and the variable is removed before any test module is imported, so
the code under test is not told where it is. A run cut short (``os._exit`` in the code, a crash) leaves no
``finished`` line, and the verdict counts every test without a complete record as not passed. Records are
numbered, and the last one counts those before it: a file with a gap, a repeated record or anything after its end
was written by someone else too, and voids the run.
"""

from __future__ import annotations

import json
import os
from typing import IO, Any

_SINK: IO[str] | None = None
_COUNT = [0]


def _write(record: dict[str, Any]) -> None:
    """One record, numbered: the verdict takes a gap, a repeat or a record after the end for a forged file."""
    if _SINK is not None:
        _SINK.write(json.dumps({**record, "n": _COUNT[0]}) + "\n")
        _SINK.flush()
        _COUNT[0] += 1


def pytest_configure(config: Any) -> None:
    global _SINK
    path = os.environ.pop("TRI_AGENT_WITNESS", "")
    if path:
        _SINK = open(path, "a", encoding="utf-8")  # noqa: SIM115  (open for the whole session, closed at its end)


def pytest_collection_finish(session: Any) -> None:
    _write({"collected": [item.nodeid for item in session.items]})


def pytest_collectreport(report: Any) -> None:
    if report.outcome != "passed":
        _write({"collect_error": report.nodeid, "outcome": report.outcome})


def pytest_runtest_logreport(report: Any) -> None:
    _write({"id": report.nodeid, "when": report.when, "outcome": report.outcome,
            "xfail": bool(getattr(report, "wasxfail", ""))})


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    _write({"finished": int(exitstatus), "records": _COUNT[0]})
    if _SINK is not None:
        _SINK.close()
