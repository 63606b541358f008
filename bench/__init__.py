"""Performance benchmarks with targets from the issue; see bench/README.md."""
