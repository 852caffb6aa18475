"""Acceptance: the round loop that composes every stage into a verdict.

- ``_config``: the survey, ``acceptance.yaml`` and the preflight checks;
- ``_rounds``: the orchestrator, the one module that composes a hard acceptance;
- ``_cast``: which driver plays each role, one audited episode;
- ``_judging``: the judge's mechanical work on one round;
- ``_gate``: the round gate, the green counter, the fuse and certification;
- ``_tickets``: tickets from a red score, routed by attribution, leak-guarded;
- ``_smells``: test-quality smells in what the builder changed (one table);
- ``_scoreboard``: ``SCOREBOARD.md``, ``ACCEPTANCE.json`` and ``REPORT.html``;
- ``_skill``: ``install-skill``.

May import every stage below it; nothing imports it but the CLI and the schema export.
"""
