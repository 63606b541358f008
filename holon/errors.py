"""Holon's own small exception hierarchy.

Vendor exceptions (docker, yaml, pydantic, OSError) are translated into these at the edge where they
happen; the CLI maps each class to one exit code and one line (docs/cli.md, "Exit codes").
"""

from __future__ import annotations


class HolonError(Exception):
    """A failure with a one-line, user-facing message.

    This base class keeps exit 70: raised as itself it means Holon broke an invariant of its own,
    and the CLI logs its traceback like any other internal error.
    """

    exit_code = 70


class InvalidInput(HolonError):
    """Bad flags, a malformed document, a bad path: the caller must fix the input (exit 64)."""

    exit_code = 64


class Unavailable(InvalidInput):
    """Something the request names does not exist here: a Docker engine, an image, a runtime.

    Exit 64 like other bad input: the request cannot be carried out as written.
    """


class OperationalError(HolonError):
    """A step Holon depends on failed for a reason outside the input: git, a workspace copy, the
    filesystem, a damaged installation (exit 74, sysexits' EX_IOERR). The message names the step.
    """

    exit_code = 74


class Interrupted(HolonError):
    """The user interrupted the command (exit 130)."""

    exit_code = 130
