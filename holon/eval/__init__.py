"""Decision evaluation: a shipped corpus of scenarios, each an event in a given world with the
outcomes that are acceptable, replayed through the controller with each decider (docs/eval.md)."""
