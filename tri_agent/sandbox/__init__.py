"""Sandbox: how any child process runs, and the OS sandbox around role-written code and CLI agents.

- ``_process``: child processes (process-group kill on timeout, output caps, scrubbed environment);
- ``_bubblewrap``: the bubblewrap probe and wrapper (isolation layer 3).

It sits this low because the exam's generator and oracle (``exam``) and the target (``targets``) are
code a role wrote, and must run inside it just like a CLI agent (``drivers``).

May import: ``tri_agent._errors`` only.
"""
