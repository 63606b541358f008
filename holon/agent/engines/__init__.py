"""Engines behind one interface (`holon.agent.engine.Engine`): `builtin` (a tool-use loop over a
model provider), `replay` (the loop over a recorded session), `claude-code` and `codex` (their
CLIs driven headlessly)."""
