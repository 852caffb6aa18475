"""Evidence: what was sealed, and proof that it has not changed since.

- ``_manifest``: the manifest format (``sha256sum -c`` compatible) and tree hashing;
- ``_seal``: seal, verify and the hash-chained seal log;
- ``_trail``: the evidence store, every record sealed and chained into ``TRAIL.jsonl``.

May import: ``tri_agent._errors`` only. Everything else in the package stands on this.
"""
