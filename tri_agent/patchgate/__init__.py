"""The patch gate (to come): an agent's pull request to a repository with its own test suite, scored on a frozen
surface it cannot edit and a held-out suite it never saw, policy before verdict.

Empty until it lands: this package holds the place and the rules. It sits beside ``acceptance`` (the same row of
the layers), reuses ``evidence`` (sealing), ``sandbox`` (the jail), ``drivers`` and ``scoring``, and never imports
``acceptance``; import-linter checks both.
"""
