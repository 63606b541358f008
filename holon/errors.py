"""Holon's own small exception hierarchy.

Vendor exceptions (docker, yaml, pydantic, OSError) are translated into these at the edge where they
happen; the CLI maps each class to one exit code and one line (DESIGN.md section 5).
"""

from __future__ import annotations


class HolonError(Exception):
    """An expected failure with a one-line, user-facing message."""

    exit_code = 70


class InvalidInput(HolonError):
    """Bad flags, a malformed document, a bad path: the caller must fix the input (exit 64)."""

    exit_code = 64


class Unavailable(InvalidInput):
    """Something the request names does not exist here: a Docker engine, an image, a runtime.

    Exit 64 like other bad input: the request cannot be carried out as written.
    """


class Interrupted(HolonError):
    """The user interrupted the command (exit 130)."""

    exit_code = 130
