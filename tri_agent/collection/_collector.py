"""The collection's pytest plugin, copied beside the run and loaded with ``-p``: every collected node id and every
file that failed to collect, as one JSON document at the path ``TRI_AGENT_COLLECTED`` names.

Standalone (the standard library only): it runs in the jail, where tri_agent is not importable. The variable is
removed when the plugin is imported, before any conftest or test module, and the plugin is copied under a name
made for the run, so the code collected is told neither where the list goes nor what to import. Code that runs at
collection can still write the list (it shares the process): callers check the ids against the files.
"""

from __future__ import annotations

import json
import os
from typing import Any

# taken when pytest imports this plugin (``-p``), before any conftest or test module runs
_PATH = [os.environ.pop("TRI_AGENT_COLLECTED", "")]
_ERRORS: list[str] = []


def pytest_collectreport(report: Any) -> None:
    if report.outcome == "failed":
        _ERRORS.append(report.nodeid or "<session>")


def pytest_collection_finish(session: Any) -> None:
    if _PATH[0]:
        with open(_PATH[0], "w", encoding="utf-8") as f:
            json.dump({"collected": [item.nodeid for item in session.items], "errors": _ERRORS}, f)
