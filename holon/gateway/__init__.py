"""Gateway: every input becomes one EventEnvelope."""
