"""The `holon` command line: a thin adapter over the library."""
