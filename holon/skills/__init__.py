"""The skill catalog: what skills exist and what they declare."""
