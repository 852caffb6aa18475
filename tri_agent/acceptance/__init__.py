"""Acceptance: the round loop that composes every stage into a verdict.

- ``_config``: the survey, ``acceptance.yaml`` and the preflight checks;
- ``_check``: ``check``: everything a run will need, read before any evidence is written, every problem at once;
- ``_scaffold``: ``new``: a preset's skeleton project, which checks out and runs at once;
- ``_state``: the run's state folder outside the project, the pinned trail head, the seed secret;
- ``_preflight``: the sealed configuration and the exam's import into the run;
- ``_rounds``: the orchestrator, the one module that composes a hard acceptance;
- ``_live``: the live bar of a long stage on a terminal (nothing on a pipe);
- ``_audit``: the contamination audit before every launch, and the scan of every reply;
- ``_cast``: which driver plays each role, one audited episode;
- ``_judging``: the judge's mechanical work on one round;
- ``_gate``: the round gate, the green counter, the fuse and certification;
- ``_tickets``: tickets from a red score, routed by attribution, leak-guarded;
- ``_smells``: test-quality smells in what the builder changed (one table);
- ``_probes``: code that reads how it is run, and code built at run time (two smells of the table);
- ``_collected``: the builder's own tests as pytest collects them, and which a round lost;
- ``_pages``: a document target's failing first pages, rendered, beside the golden ones;
- ``_scoreboard``: ``SCOREBOARD.md``, ``ACCEPTANCE.json`` and ``REPORT.html``;
- ``_verify``: ``verify-trail``: the chain, the pin, and what the records claim;
- ``_session``: the in-session builder's fence (Claude Code settings);
- ``_skill``: ``install-skill``.

May import every stage below it; nothing imports it but the CLI and the schema export.
"""
