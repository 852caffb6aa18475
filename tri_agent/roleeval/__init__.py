"""Role evaluation: the project's own LLM roles measured on a result-blind corpus (docs/evaluation.md).

- ``_corpus``: the corpus contract, three locations validated apart (what the role sees, the private
  expectations, the provenance), opaque case references, names that tell nothing;
- ``_audit``: the contamination audit of every payload before any attempt, and the skill closure the role is
  given whole;
- ``_grading``: one attempt's reply graded against its case (the closed ``GRADES`` table), rulings on
  ambiguous findings reused;
- ``_examine``: the examiner's mechanical measure, its exam built, run and mutated by the engine against the case's
  private target and each planted bug;
- ``_words``: text read as words and stems, however it is spelled (the audit, names and grader share it);
- ``_stats``: rates with their denominators and 95% intervals, clustered by program;
- ``_report``: each attempt's record, the aggregate (every measure with what one trial is), Markdown, the HTML
  page with the per-case grid, and the comparison with a baseline;
- ``_run``: a run (``tri-agent eval-roles``): the audit, then K fresh attempts per case through a driver or
  recorded replies (a simulation).

It sits beside ``acceptance``, reuses ``drivers``, ``isolation``, ``targets`` and the leaves, and never imports
``acceptance``; import-linter checks both. The shipped corpora are ``corpora/review/`` (the judge) and
``corpora/examiner/`` (the examiner), made by ``corpora/build.py``.
"""

from ._audit import Closure, audit, closure
from ._corpus import Corpus, CorpusManifest, Expectation, Payload, Provenance, RootCause, load_corpus
from ._grading import GRADES, AttemptGrade, Finding, Reply, Resolution, grade
from ._stats import Rate, rate, wilson

__all__ = ["GRADES", "AttemptGrade", "Closure", "Corpus", "CorpusManifest", "Expectation", "Finding", "Payload",
           "Provenance", "Rate", "Reply", "Resolution", "RootCause", "audit", "closure", "grade", "load_corpus",
           "rate", "wilson"]
