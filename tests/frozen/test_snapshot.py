"""The trigger snapshot, taken at intake from GitHub's own example payloads (octokit's): which
object, its author and time, and a hash of its exact text that any edit changes."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pytest

from holon.gateway.github import normalize
from holon.gateway.trigger import (
    BODY_CHARS,
    TriggerSnapshot,
    compare,
    refusal,
    snapshot_from,
    snapshot_of,
    snapshot_of_envelope,
    text_digest,
)
from tests.gateway.conftest import example

AT = datetime(2026, 1, 1, tzinfo=UTC)


def test_an_issue_comment_freezes_the_comment() -> None:
    payload = example("issue_comment", "created")
    snap = snapshot_of("issue_comment", payload)
    assert snap is not None
    comment = payload["comment"]
    assert (snap.kind, snap.id, snap.number) == ("comment", comment["id"], 1)
    assert snap.author == "Codertocat"
    assert snap.url == comment["html_url"]
    assert snap.updated_at == comment["updated_at"]
    assert snap.body == comment["body"]
    assert snap.title is None
    assert snap.sha256 == text_digest(None, comment["body"])
    assert not snap.truncated


def test_an_opened_issue_freezes_its_title_and_body() -> None:
    payload = example("issues", "opened")
    snap = snapshot_of("issues", payload)
    assert snap is not None
    issue = payload["issue"]
    assert (snap.kind, snap.id, snap.number) == ("issue", issue["number"], issue["number"])
    assert (snap.title, snap.body) == (issue["title"], issue["body"])
    assert snap.sha256 == text_digest(issue["title"], issue["body"])


def test_a_submitted_review_freezes_the_review_with_its_pull_request() -> None:
    payload = example("pull_request_review", "submitted")
    snap = snapshot_of("pull_request_review", payload)
    assert snap is not None
    review = payload["review"]
    assert (snap.kind, snap.id, snap.number) == ("review", review["id"], 2)
    # A review has no updated_at: its submitted_at stands for it. Its null body is empty text.
    assert snap.updated_at == review["submitted_at"]
    assert review["body"] is None
    assert snap.body == ""
    assert snap.sha256 == text_digest(None, "")


def test_a_review_comment_and_a_pull_request_are_frozen_too() -> None:
    comment = snapshot_of(
        "pull_request_review_comment", example("pull_request_review_comment", "created")
    )
    assert comment is not None
    assert (comment.kind, comment.number) == ("review_comment", 2)
    pull = snapshot_of("pull_request", example("pull_request", "opened"))
    assert pull is not None
    assert (pull.kind, pull.id) == ("pull_request", 2)
    assert pull.title == "Update the README with new information."


@pytest.mark.parametrize(
    ("event", "action"), [("check_run", "completed"), ("push", None), ("workflow_dispatch", None)]
)
def test_events_without_such_text_have_no_snapshot(event: str, action: str | None) -> None:
    assert snapshot_of(event, example(event, action)) is None


def test_the_hash_is_stable_and_any_edit_changes_it() -> None:
    payload = example("issue_comment", "created")
    first = snapshot_of("issue_comment", payload)
    again = snapshot_of("issue_comment", example("issue_comment", "created"))
    assert first is not None
    assert again is not None
    assert first.sha256 == again.sha256  # the same text, the same hash, every time
    # The canonical form, pinned: a change to it would break every snapshot in saved state.
    expected = hashlib.sha256(b'[null,"/holon solve"]').hexdigest()
    assert text_digest(None, "/holon solve") == expected
    assert len(first.sha256) == 64
    body = payload["comment"]["body"]
    assert compare(first, None, body) is None
    for edited in (body + " ", body.replace("!", "."), "", "\u200b" + body):
        assert compare(first, None, edited) == "edited"
    # Text moved between an issue's title and body is an edit, as is an emptied body.
    assert text_digest("a b", "c") != text_digest("a", "b c")
    assert text_digest("t", None) == text_digest("t", "")


def test_a_long_body_is_kept_bounded_but_hashed_whole() -> None:
    payload = example("issue_comment", "created")
    payload["comment"]["body"] = "x" * (BODY_CHARS + 10)
    snap = snapshot_of("issue_comment", payload)
    assert snap is not None
    assert len(snap.body) == BODY_CHARS
    assert snap.truncated
    assert snap.sha256 == text_digest(None, "x" * (BODY_CHARS + 10))
    assert compare(snap, None, "x" * BODY_CHARS) == "edited"


def test_the_envelope_names_the_command_and_the_state_reads_it_back() -> None:
    payload = example("issue_comment", "created")
    payload["comment"]["body"] = "/holon solve please"
    env = normalize("issue_comment", payload, via="actions", received_at=AT)
    snap = snapshot_of_envelope(env)
    assert snap is not None
    assert snap.command == "/holon solve"
    assert snap.named() == "the /holon solve comment by Codertocat"
    recorded = snap.model_dump(mode="json")
    assert snapshot_from(recorded) == snap
    assert snapshot_from({**recorded, "sha256": "not a hash"}) is None  # never made up
    assert snapshot_from(None) is None


def test_the_refusal_says_what_changed_and_how_to_continue() -> None:
    snap = TriggerSnapshot(
        kind="comment", id=5, number=1, author="alice", command="/holon solve",
        sha256=text_digest(None, "/holon solve"), body="/holon solve",
    )  # fmt: skip
    edited = refusal(snap, "edited", "2026-01-01T00:10:00Z")
    assert edited.startswith(
        "the /holon solve comment by alice was edited after it triggered this run "
        "(at 2026-01-01T00:10:00Z)"
    )
    assert edited.endswith("re-issue the command to continue")
    assert "was deleted after it triggered this run" in refusal(snap, "deleted")
