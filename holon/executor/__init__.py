"""The executor: intents to effects, each result journaled."""
