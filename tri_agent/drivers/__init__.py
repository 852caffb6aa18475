"""Drivers: who plays a role for one episode, and what every episode records.

- ``_episode``: limits, usage, attempts, the closed status taxonomy, secret masking, the run budget;
- ``_scripted``: the scripted driver, replaying recorded role actions (a simulation, never certifies);
- ``_command``: any CLI agent as a subprocess speaking the executor protocol;
- ``_profiles``: Claude Code and Codex adapters for the executor protocol;
- ``_llm``: tool-use loops over the official Anthropic and OpenAI SDKs;
- ``_fakes``: loopback servers speaking those APIs' wire formats (shipped: the self-test uses them);
- ``_rulings``: LLM rulings as a measuring instrument (K samples, agreement floor, fail closed);
- ``_weakening``: the weakened-test question (masked, retried, 4 of 5 samples), shared by the acceptance's
  ruling and ``tri-agent evidence``;
- ``_socket``: a server on a unix socket in a CLI agent's HOME, the one thing its sandbox shares with us;
- ``_mcp``: the engine's tools for CLI agents over the Model Context Protocol, served on such a socket;
- ``_relay``: the bridge a CLI agent starts as its MCP server, copied into its sandbox and run there alone;
- ``_egress``: the allow-list proxy a CLI agent's model API is reached through;
- ``_egress_relay``: the agent's way out inside its jail, to that proxy (run there alone, like ``_relay``).

May import: ``isolation`` and everything below it.
"""
