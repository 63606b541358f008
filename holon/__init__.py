"""Holon: repository events in, autonomous agent work out, every run closed with a truthful outcome.

Importing this package has no side effects; the library surface lives in the subpackages
(`holon.contract`, `holon.runner`, ...).
"""

__version__ = "0.1.0"
