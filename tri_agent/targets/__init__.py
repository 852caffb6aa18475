"""Targets: the software under acceptance, and the one gateway every case run goes through.

- ``_target``: target files (how a case is run, how rows and behaviour are read back);
- ``_gateway``: the case runner behind the tester, the judge's re-runs and every mutant replay;
- ``_trace``: which lines of a Python target each case executes (a traced run), and a run's coverage file;
- ``_batch``: a fork server running many inputs through a Python target in one jail (difference hunts);
- ``_presets``: target presets (warehouse, document...): what changes between kinds of target.

New target kinds join this package.

May import: ``exam`` and everything below it (``evidence``, ``scoring``, ``sandbox``, ``_errors``, ``_yamldoc``).
"""
