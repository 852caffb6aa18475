"""Browser targets: a web app started as a service target is, driven through a real browser in every case.

- ``_drive``: one browser case's driver (the chromium binary, the pilot's plan, the screenshots it vouched for);
- ``_pages``: the case's page plan (``ui.json``) and the rows read from what the pilot saw;
- ``_pilot``: the Playwright pilot, copied into each case and run there alone;
- ``_trees``: accessibility trees made comparable (run inside the pilot, and by the rows it reports).

May import: ``targets.service`` (the app starts, is restored and stops as a service), ``targets._specs``,
``targets._target`` and everything below ``targets``.
"""
