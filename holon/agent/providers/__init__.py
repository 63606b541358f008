"""Model providers for the built-in engine, over HTTP (`requests`): Anthropic Messages and
OpenAI-compatible Chat Completions; the recorded-session replay speaks the same interface."""
