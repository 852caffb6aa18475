"""Targets: the software under acceptance, and the one gateway every case run goes through.

- ``_specs``: what a target file holds beyond its command (the service and browser blocks, the database a
  service case restores) and the placeholders of every argv; a leaf every other module here may import;
- ``documents/``: the document reader a case whose output is a PDF, HTML, DOCX or Markdown file is scored through
  (run in a jail of its own); a leaf beside ``_specs``;
- ``_trace``: which lines of a Python target each case executes (a traced run), and a run's coverage file;
- ``_presets``: target presets (warehouse, document, api, gui): what changes between kinds of target;
- ``_target``: target files (how a case is run, how rows and behaviour are read back);
- ``service/``: service targets (an HTTP program over a database, restored for every case);
- ``browser/``: browser targets (a web app driven through a real browser), built on the service kind;
- ``_batch``: a fork server running many inputs through a Python target in one jail (difference hunts);
- ``_pages``: the first page of a case's PDF, rendered in a jail for a report;
- ``_gateway``: the case runner behind the tester, the judge's re-runs and every mutant replay.

Inside the package the order above is the layering, checked by import-linter: a module imports only the ones
listed before it (``_trace`` and ``_presets`` not each other, nor ``_specs`` and ``documents``, nor ``_batch`` and
``_pages``). A new target kind gets a folder of its own beside ``service/`` and ``browser/``, and the gateway a line
in its table of kinds.

May import: ``exam`` and everything below it (``evidence``, ``scoring``, ``sandbox``, ``_errors``, ``_yamldoc``).
"""
