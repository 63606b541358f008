"""The hidden marker on every comment, review and check run Holon writes:

    <!-- holon:v1 subject=<kind>:<id> workflow=<name> skill=<name> -->

It lets Holon find its own items again (to update a comment instead of posting a second one).
Values come from one safe alphabet (letters, digits, `_ . : / -`); any other character becomes
`_`, as in the handoff comment's marker (`holon.closure.handoff`), so both spell it alike.
`skill=none` means no skill.

A marker proves nothing by itself: anyone can type one, in a comment or inside a code block.
It counts only on an item whose author is Holon's own login (`GitHubConfig.login`); that check
belongs to the caller, which has the author. `parse_marker` only reads, strictly: a marker must
be well formed as a whole, and a body holding two different markers has none, so hostile text
can neither crash it nor make it pick one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_VALUE = 256
_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/-]")
_VALUE = rf"[A-Za-z0-9_.:/-]{{1,{MAX_VALUE}}}"
_KIND = rf"[A-Za-z0-9_./-]{{1,{MAX_VALUE}}}"  # the kind ends at the first colon
_MARKER = re.compile(
    rf"<!-- holon:v1 subject=(?P<kind>{_KIND}):(?P<id>{_VALUE}) "
    rf"workflow=(?P<workflow>{_VALUE}) skill=(?P<skill>{_VALUE}) -->"
)


@dataclass(frozen=True)
class Marker:
    kind: str
    id: str
    workflow: str
    skill: str | None = None

    @property
    def subject(self) -> str:
        return f"{self.kind}:{self.id}"


def safe(value: str) -> str:
    """`value` in the marker's alphabet; ValueError when it is empty or too long for one."""
    reduced = _UNSAFE.sub("_", value)
    if not reduced or len(reduced) > MAX_VALUE:
        raise ValueError(f"a marker value must have 1 to {MAX_VALUE} characters")
    return reduced


def format_marker(kind: str, id: str, workflow: str, skill: str | None = None) -> str:
    """The marker line for an item about subject `kind:id`."""
    return (
        f"<!-- holon:v1 subject={safe(kind).replace(':', '_')}:{safe(id)} "
        f"workflow={safe(workflow)} skill={safe(skill or 'none')} -->"
    )


def parse_marker(body: object) -> Marker | None:
    """The marker in `body`, or None: when there is none, when `body` is not text, or when it
    holds two markers that disagree."""
    if not isinstance(body, str) or "<!-- holon:v1 " not in body:
        return None
    found = {
        Marker(m["kind"], m["id"], m["workflow"], None if m["skill"] == "none" else m["skill"])
        for m in _MARKER.finditer(body)
    }
    return found.pop() if len(found) == 1 else None
