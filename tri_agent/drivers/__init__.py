"""Drivers: who plays a role for one episode, and what every episode records.

- ``_episode``: limits, usage, attempts, the closed status taxonomy, secret masking, the run budget;
- ``_scripted``: the scripted driver, replaying recorded role actions (a simulation, never certifies);
- ``_command``: any CLI agent as a subprocess speaking the executor protocol;
- ``_profiles``: Claude Code and Codex adapters for the executor protocol;
- ``_llm``: tool-use loops over the official Anthropic and OpenAI SDKs;
- ``_fakes``: loopback servers speaking those APIs' wire formats (shipped: the self-test uses them);
- ``_rulings``: LLM rulings as a measuring instrument (K samples, agreement floor, fail closed).

May import: ``isolation`` and everything below it.
"""
