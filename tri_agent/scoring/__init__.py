"""Scoring: the three channels, judged by code, never by a model.

- ``_tables``: answer and actual tables (CSV/JSONL), every cell kept as its literal text;
- ``_caliber``: the scoring contract (key, tolerance class per field, behaviours, relations, drift);
- ``_tolerance``: the closed table of tolerance classes;
- ``_channels``: channel 1 (sealed answers, with the drift audit) and channel 2 (behaviours);
- ``_relations``: channel 3, metamorphic relations;
- ``_parts``: large delimited tables scored a part at a time (windows of keys in key order, else split by a hash
  of the key), the same channel 1;
- ``_grading``: one call that reads the inputs, runs the channels and composes the verdict;
- ``_report``: the canonical score report and its Markdown;
- ``_leaks``: the leak scan, sealed values found where they must not be.

May import: ``tri_agent._errors`` and ``tri_agent._yamldoc``. Independent of ``evidence`` and ``sandbox``.
"""
