"""Sandbox: how any child process runs, and the OS sandbox around role-written code and CLI agents.

- ``_process``: child processes (output read as it comes and cut at the cap, the whole tree killed at the
  deadline without waiting on pipes, scrubbed environment);
- ``_bubblewrap``: the bubblewrap probe and the wrapper for CLI-agent roles (isolation layer 3);
- ``_limits``: the resource limits of every jailed run (memory, processes, open files, CPU time: cgroups where
  they can be had, rlimits else);
- ``_scratch``: the scratch root of one command (every temporary folder in it; removed however the command
  ends, SIGKILL included: the next command's start sweeps it);
- ``_jail``: the jail every piece of role-written code runs in (bubblewrap, else Landlock, else refused);
- ``_confine``: the Landlock launcher and subreaper, run as ``python -m tri_agent.sandbox._confine`` (it also
  kills what a fork server's job left, when the server asks: ``--sweep``).

It sits this low because the exam's generator and oracle (``exam``) and the target (``targets``) are
code a role wrote, and must run inside it just like a CLI agent (``drivers``).

May import: ``tri_agent._errors`` and ``tri_agent._model`` (the limits are a format).
"""
