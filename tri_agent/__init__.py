"""tri_agent: hard acceptance of software that AI agents built.

Public API (everything else is private and may change; ``docs/api.md`` shows it at work):

- the main job: :func:`accept` (a project's hard acceptance to a :class:`Verdict`), :func:`build_exam`
  (:class:`BuildRecord`), :func:`run_exam` (:class:`RunRecord`), :func:`score_run` (:class:`ScoreReport`),
  :func:`mutate` (:class:`MutationSummary`), :func:`verify_trail` (:class:`TrailReport`)
- sealing: :func:`seal`, :func:`verify`, :func:`preview`, :class:`VerifyReport`
- scoring any key against any table: :func:`score`, :class:`ScoreInputs`, :class:`ScoreReport`, :class:`Caliber`,
  :func:`load_caliber`, :func:`render_markdown`
- leaks: :func:`scan_leaks`, :class:`LeakReport`
- errors: :class:`ExitCode` and the exception tree rooted at :class:`TriAgentError` (see ``_errors``)

The surface is listed once, in ``_EXPORTS`` (``__all__`` is made from it; the block for type checkers below is
tested against it), and ``tests/test_api.py`` pins it name by name. Names are imported on first use, so
``tri-agent seal`` or a hashing worker never pays for polars.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

_EXPORTS = {  # public name -> the private module that defines it
    "accept": "_api",
    "build_exam": "_api",
    "mutate": "_api",
    "run_exam": "_api",
    "score_run": "_api",
    "verify_trail": "_api",
    "Verdict": "acceptance._gate",
    "TrailReport": "acceptance._verify",
    "BuildRecord": "exam._formats",
    "MutationSummary": "mutation._verdict",
    "RunRecord": "targets._gateway",
    "VerifyReport": "evidence._seal",
    "preview": "evidence._seal",
    "seal": "evidence._seal",
    "verify": "evidence._seal",
    "Caliber": "scoring._caliber",
    "load_caliber": "scoring._caliber",
    "ScoreInputs": "scoring._grading",
    "score": "scoring._grading",
    "LeakReport": "scoring._leaks",
    "scan_leaks": "scoring._leaks",
    "ScoreReport": "scoring._report",
    "render_markdown": "scoring._report",
    "BuilderTurn": "_errors",
    "Escalation": "_errors",
    "ExitCode": "_errors",
    "GateRefusal": "_errors",
    "InfrastructureFailure": "_errors",
    "LeakDetected": "_errors",
    "MalformedInput": "_errors",
    "NotDeterministic": "_errors",
    "NotReady": "_errors",
    "PolicyViolation": "_errors",
    "TamperDetected": "_errors",
    "TriAgentError": "_errors",
    "UsageError": "_errors",
}

__all__ = sorted([*_EXPORTS, "__version__"])

if TYPE_CHECKING:  # the same names, for type checkers (tests/test_api.py checks the two agree)
    from ._api import accept, build_exam, mutate, run_exam, score_run, verify_trail
    from ._errors import (
        BuilderTurn,
        Escalation,
        ExitCode,
        GateRefusal,
        InfrastructureFailure,
        LeakDetected,
        MalformedInput,
        NotDeterministic,
        NotReady,
        PolicyViolation,
        TamperDetected,
        TriAgentError,
        UsageError,
    )
    from .acceptance._gate import Verdict
    from .acceptance._verify import TrailReport
    from .evidence._seal import VerifyReport, preview, seal, verify
    from .exam._formats import BuildRecord
    from .mutation._verdict import MutationSummary
    from .scoring._caliber import Caliber, load_caliber
    from .scoring._grading import ScoreInputs, score
    from .scoring._leaks import LeakReport, scan_leaks
    from .scoring._report import ScoreReport, render_markdown
    from .targets._gateway import RunRecord


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tri_agent' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
