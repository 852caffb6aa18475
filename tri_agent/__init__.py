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

__version__ = "0.1.0"

_EXPORTS = {
    "Caliber": "_caliber",
    "load_caliber": "_caliber",
    "BuilderTurn": "_errors",
    "Escalation": "_errors",
    "ExitCode": "_errors",
    "InfrastructureFailure": "_errors",
    "LeakDetected": "_errors",
    "MalformedInput": "_errors",
    "PolicyViolation": "_errors",
    "TamperDetected": "_errors",
    "TriAgentError": "_errors",
    "UsageError": "_errors",
    "ScoreInputs": "_grading",
    "score": "_grading",
    "LeakReport": "_leaks",
    "scan_leaks": "_leaks",
    "ScoreReport": "_report",
    "render_markdown": "_report",
    "VerifyReport": "_seal",
    "preview": "_seal",
    "seal": "_seal",
    "verify": "_seal",
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
    from ._caliber import Caliber, load_caliber
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
    from ._grading import ScoreInputs, score
    from ._leaks import LeakReport, scan_leaks
    from ._report import ScoreReport, render_markdown
    from ._seal import VerifyReport, preview, seal, verify


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tri_agent' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
