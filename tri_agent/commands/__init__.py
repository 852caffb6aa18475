"""Commands: the ``tri-agent`` command line as a table, each handler with its arguments beside it.

- ``_table``: a command as data (name, help, arguments, handler) and the helpers handlers print and write with;
- ``_evidence``: ``seal``, ``verify``, ``score``, ``leaks``, ``verify-trail``, ``schema``;
- ``_exams``: ``exam build``, ``exam run``, ``exam score``, ``rerun``, ``mutate``, ``presets``;
- ``_projects``: ``new``, ``init``, ``check``, ``accept``, ``install-skill``, ``contract show``, ``workspace``,
  ``doctor``;
- ``_gates``: ``gate map``, ``gate workspace``, ``gate check``;
- ``_signals``: ``evidence``, a change's own test evidence;
- ``_roles``: ``eval-roles``, the LLM roles measured on a result-blind corpus.

A handler parses nothing and decides nothing: it calls the library (``_api`` for the main job) and prints what
it returned. ``_cli`` builds the parser from the modules' ``COMMANDS``, in this order.

May import: every stage (each handler imports what it calls when it runs, so a command pays only for its own).
"""
