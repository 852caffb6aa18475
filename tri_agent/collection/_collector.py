"""The collection's pytest plugin, copied beside the run and loaded with ``-p``: every collected node id and every
file that failed to collect, as one JSON document at the path ``TRI_AGENT_COLLECTED`` names.

Standalone (the standard library only): it runs in the jail, where tri_agent is not importable. The variable is
removed before any test module is imported, so the code collected is not told where the list goes.
"""

from __future__ import annotations

import json
import os
from typing import Any

_PATH = [""]
_ERRORS: list[str] = []


def pytest_configure(config: Any) -> None:
    _PATH[0] = os.environ.pop("TRI_AGENT_COLLECTED", "")


def pytest_collectreport(report: Any) -> None:
    if report.outcome == "failed":
        _ERRORS.append(report.nodeid or "<session>")


def pytest_collection_finish(session: Any) -> None:
    if _PATH[0]:
        with open(_PATH[0], "w", encoding="utf-8") as f:
            json.dump({"collected": [item.nodeid for item in session.items], "errors": _ERRORS}, f)
