"""Isolation: what each role may see and write, enforced rather than requested.

- ``_contract``: role charters, their visibility contracts and the iron rules no charter may break;
- ``_workspace``: workspaces assembled by physical omission, the write audit, harvest and quarantine;
- ``_tools``: the tool set the engine implements for a role, its only access to anything.

The OS sandbox itself is in ``tri_agent.sandbox``, below, because role-written code needs it too.

May import: ``evidence``, ``sandbox``, ``tri_agent._errors``, ``tri_agent._resources``. Independent of
``mutation``, ``targets`` and ``exam``: the tool set reaches the engine only through callbacks.
"""
