"""A schedule of failures for the loopback GitHub: "the Nth request (or the Nth request matching
an operation pattern and method) fails with mode M".

    server.faults.add(Fault("5xx", index=3))                                # the 4th request
    server.faults.add(Fault("accepted_then_timeout", operation="pulls/create"))
    server.faults.add(Fault("secondary_rate_limit", operation="issues/*", method="POST", nth=1))

Modes, as GitHub (or the network in front of it) fails:

- `5xx`: 502 (or `status`), nothing done;
- `accepted_then_timeout`: GitHub does the request, then the answer never arrives: the server
  stalls `stall` seconds and drops the connection (the client's read fails or times out);
- `secondary_rate_limit`: 403 with `Retry-After` and GitHub's secondary-limit message;
- `403`: a refusal (`Resource not accessible by integration`), nothing done;
- `404`: GitHub's Not Found, nothing done.

`fired` lists (request index, operation, fault) for each failure served, so a test can check
that its fault really happened.
"""

from __future__ import annotations

import fnmatch
import threading
from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["5xx", "accepted_then_timeout", "secondary_rate_limit", "403", "404"]
MODES: tuple[Mode, ...] = ("5xx", "accepted_then_timeout", "secondary_rate_limit", "403", "404")
SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
DOCS = "https://docs.github.com/rest"


@dataclass(frozen=True)
class Fault:
    """Fail `times` requests, starting at request `index` (over every request the fake got,
    from 0) or at the `nth` (from 0) request whose operation matches `operation` (an fnmatch
    pattern such as `issues/*`) and whose method is `method` (any when None)."""

    mode: Mode
    index: int | None = None
    operation: str | None = None
    method: str | None = None
    nth: int = 0
    times: int = 1
    status: int = 502  # for 5xx: 502 or 503
    retry_after: int = 1  # for secondary_rate_limit
    stall: float = 0.0  # for accepted_then_timeout: seconds before the connection drops

    @property
    def before_effect(self) -> bool:
        """Whether GitHub refuses the request without doing it."""
        return self.mode != "accepted_then_timeout"

    def reply(self) -> tuple[int, Any, dict[str, str]]:
        """What GitHub answers for a refusal (modes other than accepted_then_timeout)."""
        if self.mode == "5xx":
            return self.status, _body(self.status, "Server Error"), {}
        if self.mode == "secondary_rate_limit":
            headers = {"Retry-After": str(self.retry_after)}
            return 403, _body(403, SECONDARY_MESSAGE), headers
        if self.mode == "403":
            return 403, _body(403, "Resource not accessible by integration"), {}
        if self.mode == "404":
            return 404, _body(404, "Not Found"), {}
        raise ValueError(f"{self.mode} has no reply: GitHub answers nothing")


@dataclass(frozen=True)
class Drop:
    """The answer never comes: stall, then close the connection."""

    stall: float


@dataclass
class _Entry:
    fault: Fault
    seen: int = 0  # matching requests so far
    left: int = 0


@dataclass
class FaultSchedule:
    entries: list[_Entry] = field(default_factory=list)
    fired: list[tuple[int, str | None, Fault]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, fault: Fault) -> None:
        if fault.index is None and fault.operation is None:
            raise ValueError("a fault needs a request index or an operation pattern")
        with self.lock:
            self.entries.append(_Entry(fault, left=fault.times))

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()

    def match(self, index: int, method: str, operation: str | None) -> Fault | None:
        """The fault request `index` (`method` on `operation`) gets, if any (first added wins;
        every matching entry counts the request)."""
        chosen: Fault | None = None
        with self.lock:
            for entry in self.entries:
                fault = entry.fault
                if fault.method is not None and fault.method.upper() != method.upper():
                    continue
                if fault.operation is not None and not fnmatch.fnmatchcase(
                    operation or "", fault.operation
                ):
                    continue
                position = entry.seen
                entry.seen += 1
                start = fault.index if fault.index is not None else fault.nth
                at = index if fault.index is not None else position
                if chosen is None and entry.left > 0 and at >= start:
                    entry.left -= 1
                    chosen = fault
            if chosen is not None:
                self.fired.append((index, operation, chosen))
        return chosen


def _body(status: int, message: str) -> dict[str, str]:
    return {"message": message, "documentation_url": DOCS, "status": str(status)}
