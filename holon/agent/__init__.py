"""The reference agent (Agent Contract section 3): `holon agent [--probe]`, the container
entrypoint that reads Holon's inputs, drives an engine headlessly and writes honest outputs."""
