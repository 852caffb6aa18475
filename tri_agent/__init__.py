"""tri_agent: hard acceptance of software that AI agents built.

Public API (everything else is private and may change):

- sealing: :func:`seal`, :func:`verify`, :func:`preview`, :class:`VerifyReport`
- scoring: :func:`score`, :class:`ScoreInputs`, :class:`ScoreReport`, :class:`Caliber`, :func:`load_caliber`,
  :func:`render_markdown`
- leaks: :func:`scan_leaks`, :class:`LeakReport`
- errors: :class:`ExitCode` and the exception tree rooted at :class:`TriAgentError` (see ``_errors``)

Names are imported on first use, so ``tri-agent seal`` or a hashing worker never pays for polars.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

_EXPORTS = {
    "Caliber": "scoring._caliber",
    "load_caliber": "scoring._caliber",
    "BuilderTurn": "_errors",
    "Escalation": "_errors",
    "ExitCode": "_errors",
    "InfrastructureFailure": "_errors",
    "LeakDetected": "_errors",
    "MalformedInput": "_errors",
    "NotReady": "_errors",
    "PolicyViolation": "_errors",
    "TamperDetected": "_errors",
    "TriAgentError": "_errors",
    "UsageError": "_errors",
    "ScoreInputs": "scoring._grading",
    "score": "scoring._grading",
    "LeakReport": "scoring._leaks",
    "scan_leaks": "scoring._leaks",
    "ScoreReport": "scoring._report",
    "render_markdown": "scoring._report",
    "VerifyReport": "evidence._seal",
    "preview": "evidence._seal",
    "seal": "evidence._seal",
    "verify": "evidence._seal",
}

__all__ = [
    "BuilderTurn",
    "Caliber",
    "Escalation",
    "ExitCode",
    "InfrastructureFailure",
    "LeakDetected",
    "LeakReport",
    "MalformedInput",
    "NotReady",
    "PolicyViolation",
    "ScoreInputs",
    "ScoreReport",
    "TamperDetected",
    "TriAgentError",
    "UsageError",
    "VerifyReport",
    "__version__",
    "load_caliber",
    "preview",
    "render_markdown",
    "scan_leaks",
    "score",
    "seal",
    "verify",
]

if TYPE_CHECKING:
    from ._errors import (
        BuilderTurn,
        Escalation,
        ExitCode,
        InfrastructureFailure,
        LeakDetected,
        MalformedInput,
        PolicyViolation,
        TamperDetected,
        TriAgentError,
        UsageError,
    )
    from .evidence._seal import VerifyReport, preview, seal, verify
    from .scoring._caliber import Caliber, load_caliber
    from .scoring._grading import ScoreInputs, score
    from .scoring._leaks import LeakReport, scan_leaks
    from .scoring._report import ScoreReport, render_markdown


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tri_agent' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
