"""tri_agent: hard acceptance of software that AI agents built.

Public API (everything else is private and may change):

- sealing: :func:`seal`, :func:`verify`, :func:`preview`, :class:`VerifyReport`
- scoring: :func:`score`, :class:`ScoreInputs`, :class:`ScoreReport`, :class:`Caliber`, :func:`load_caliber`
- leaks: :func:`scan_leaks`, :class:`LeakReport`
- errors: :class:`ExitCode` and the exception tree rooted at :class:`TriAgentError`
"""

from ._caliber import Caliber, load_caliber
from ._errors import (
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

__version__ = "0.1.0"

__all__ = [
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
