"""`write_once`: a write GitHub may have done (a 5xx, an answer lost) is looked up before it is
sent again; a look-up that fails is tried once more, and when that fails too the write is
undecided: PublishError("undecided"), never sent again blindly."""

from __future__ import annotations

import pytest

from holon.github.errors import PermissionDenied, PublishError, ServerError
from holon.github.publish_api import write_once


class Calls:
    def __init__(self, lookups: list[object]) -> None:
        self.writes = 0
        self.lookups = lookups

    def write(self) -> str:
        self.writes += 1
        if self.writes == 1:
            raise ServerError("GitHub timed out during git/update-ref", operation="git/update-ref")
        return "sent again"

    def lookup(self) -> str | None:
        found = self.lookups.pop(0)
        if isinstance(found, Exception):
            raise found
        return found if isinstance(found, str) else None


def refused() -> PermissionDenied:
    return PermissionDenied(
        "GitHub refused git/get-ref (403)", operation="git/get-ref", permission="contents: read"
    )


def test_an_effect_found_is_not_written_again() -> None:
    calls = Calls(["abc"])
    assert write_once(calls.write, calls.lookup) == "abc"
    assert calls.writes == 1


def test_no_effect_found_is_written_once_more() -> None:
    calls = Calls([None])
    assert write_once(calls.write, calls.lookup) == "sent again"
    assert calls.writes == 2


def test_a_look_up_refused_once_is_tried_again() -> None:
    calls = Calls([refused(), "abc"])
    assert write_once(calls.write, calls.lookup) == "abc"
    assert calls.writes == 1


def test_a_look_up_that_keeps_failing_leaves_the_write_undecided() -> None:
    calls = Calls([refused(), refused()])
    with pytest.raises(PublishError) as raised:
        write_once(calls.write, calls.lookup)
    assert raised.value.reason == "undecided"
    assert "git/update-ref" in str(raised.value)
    assert "git/get-ref" in " ".join(raised.value.evidence)
    assert calls.writes == 1  # never sent again blindly
