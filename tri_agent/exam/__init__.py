"""The exam: what an examiner writes, and the sealed build made of it.

- ``_formats``: ``exam.yaml``, cases, relation pairs and the build record;
- ``_canaries``: canary cases, planted against the spec at build, sealed apart, and judged passed or gamed;
- ``_build``: ``exam build``: generator and oracle each run twice, the answer key sealed, and the
  self-checks (the gold key passes, a corrupted key fails) before anyone trusts the build.

May import: ``evidence``, ``scoring``, ``sandbox``, ``tri_agent._errors``, ``tri_agent._yamldoc``.
"""
