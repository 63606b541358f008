"""What the process remembers of Holon's own items: ids by key, what was last written as a
digest, and a bounded number of entries."""

from __future__ import annotations

from holon.github.known import Known


def test_an_item_is_remembered_with_what_it_says() -> None:
    known = Known()
    known.remember(("comment", 1, "key"), 7, "Working.")
    written = known.get(("comment", 1, "key"))
    assert written is not None
    assert written.id == 7
    assert written.says("Working.")
    assert not written.says("Done.")
    assert known.get(("comment", 2, "key")) is None


def test_a_forgotten_item_is_unknown() -> None:
    known = Known()
    known.remember("a", 1, "x")
    known.forget("a")
    known.forget("never known")
    assert known.get("a") is None


def test_the_oldest_items_go_past_the_limit() -> None:
    known = Known(limit=2)
    known.remember("a", 1, "x")
    known.remember("b", 2, "x")
    known.remember("a", 1, "y")  # written again: now the newest
    known.remember("c", 3, "x")
    assert len(known) == 2
    assert known.get("b") is None
    assert known.get("a") is not None
    assert known.get("c") is not None
