"""Role evaluation (to come): the project's own LLM roles measured on a result-blind corpus (visible payloads,
private expectations, opaque ids), one fresh process per attempt, rates with their denominators.

Empty until it lands: this package holds the place and the rules. It sits beside ``acceptance``, reuses
``drivers``, ``isolation``, ``evidence`` and ``scoring``, and never imports ``acceptance``; import-linter checks
both.
"""
