"""Test signals (to come): what a repository's own test runs say, read as evidence and never re-run: tests
passed (harvested from a report bound to the tree or the commit), tests reduced (collected at the base, gone at
the head) and tests weakened (a sampled judge). Named apart from ``evidence``, which is sealing.

Empty until it lands: this package holds the place and the rules. It sits beside ``acceptance``, reuses
``evidence``, ``sandbox``, ``drivers`` and ``scoring``, and never imports ``acceptance``; import-linter checks both.
"""
