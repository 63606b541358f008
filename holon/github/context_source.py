"""The one narrow interface the context collector reads through, and what it returns.

Two sources implement it: the event payload alone (`context_payload.PayloadReader`, no token)
and GitHub's REST API through the edge's client (`context_api.ApiReader`). Each method returns
records (`context_records.py`) or raises `PartMissing` with a one-line reason; a list read only
in part says why in `Part.gap`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from holon.contract.context import PartSource
from holon.github.context_records import Item

NO_TOKEN = "no token: read from the event payload only"  # noqa: S105 (a reason, not a token)


class PartMissing(Exception):
    """One part of the context could not be read; `reason` is one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Part:
    """Records of one list; `gap` says why there may be more than these (a bound, no token)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    gap: str | None = None


@dataclass(frozen=True)
class LogTail:
    text: bytes  # the last bytes of the log, at most the limit asked for
    cut: bool  # the log was longer than that


class ContextReader(Protocol):
    source: PartSource

    def item(self, kind: str, number: int) -> Item:
        """The issue or pull request itself."""
        ...

    def comments(self, number: int) -> Part:
        """The conversation's comments, oldest first."""
        ...

    def reviews(self, number: int) -> Part: ...

    def review_comments(self, number: int) -> Part:
        """Every review comment of the pull request (threads are made of them)."""
        ...

    def files(self, number: int) -> Part: ...

    def diff(self, number: int, limit: int) -> tuple[bytes, int]:
        """The pull request's diff, at most `limit` bytes, and how long it was."""
        ...

    def commits(self, number: int) -> Part: ...

    def check_runs(self, sha: str) -> Part:
        """The latest check runs of the head commit."""
        ...

    def log_tail(self, job_id: int, limit: int) -> LogTail:
        """The end of a GitHub Actions job's log."""
        ...
