"""Approval from reviews (holon/github/approval.py): each reviewer's latest verdict, trusted
reviewers only, fresh when an approval is on the current head."""

from __future__ import annotations

from collections.abc import Callable

from holon.github.access import Review
from holon.github.approval import approval

HEAD, OLD = "a" * 40, "b" * 40


def _r(id: int, login: str, state: str, commit: str | None = HEAD) -> Review:
    return Review(id=id, login=login, bot=False, association="OWNER", state=state, commit_id=commit)


def _trust(
    untrusted: frozenset[str] = frozenset(), unknown: frozenset[str] = frozenset()
) -> Callable[[Review], bool | None]:
    def trusted(review: Review) -> bool | None:
        if review.login in unknown:
            return None
        return review.login not in untrusted

    return trusted


def test_one_fresh_approval_approves() -> None:
    found = approval([_r(1, "ann", "APPROVED")], HEAD, _trust())
    assert (found.approved, found.stale, found.reason) == (True, False, "")


def test_no_review_or_only_comments_is_not_approved() -> None:
    for reviews in ([], [_r(1, "ann", "COMMENTED")], [_r(1, "ann", "PENDING")]):
        found = approval(reviews, HEAD, _trust())
        assert not found.approved
        assert found.reason == "no approval from a reviewer with write access"


def test_the_latest_verdict_of_each_reviewer_counts() -> None:
    # Approved, then changes requested: blocked. Changes requested, then approved: approved.
    blocked = approval(
        [_r(1, "ann", "APPROVED"), _r(2, "ann", "CHANGES_REQUESTED")], HEAD, _trust()
    )
    assert (blocked.approved, blocked.reason) == (False, "ann requested changes")
    fixed = approval([_r(1, "ann", "CHANGES_REQUESTED"), _r(2, "ann", "APPROVED")], HEAD, _trust())
    assert fixed.approved
    # Order is by review id, not by the order the list came in.
    assert not approval(
        [_r(2, "ann", "CHANGES_REQUESTED"), _r(1, "ann", "APPROVED")], HEAD, _trust()
    ).approved


def test_a_comment_after_an_approval_keeps_it_and_a_dismissal_withdraws_it() -> None:
    kept = approval([_r(1, "ann", "APPROVED"), _r(2, "ann", "COMMENTED")], HEAD, _trust())
    assert kept.approved
    gone = approval([_r(1, "ann", "APPROVED"), _r(2, "ann", "DISMISSED")], HEAD, _trust())
    assert not gone.approved
    # A dismissed request for changes no longer blocks another reviewer's approval.
    unblocked = approval(
        [_r(1, "bob", "CHANGES_REQUESTED"), _r(2, "bob", "DISMISSED"), _r(3, "ann", "APPROVED")],
        HEAD,
        _trust(),
    )
    assert unblocked.approved


def test_logins_are_one_reviewer_whatever_their_case() -> None:
    found = approval([_r(1, "Ann", "APPROVED"), _r(2, "ann", "CHANGES_REQUESTED")], HEAD, _trust())
    assert not found.approved


def test_any_trusted_request_for_changes_blocks_other_approvals() -> None:
    found = approval([_r(1, "ann", "APPROVED"), _r(2, "bob", "CHANGES_REQUESTED")], HEAD, _trust())
    assert (found.approved, found.reason) == (False, "bob requested changes")


def test_untrusted_reviewers_count_neither_way() -> None:
    outsider = frozenset({"eve"})
    assert not approval([_r(1, "eve", "APPROVED")], HEAD, _trust(outsider)).approved
    found = approval(
        [_r(1, "ann", "APPROVED"), _r(2, "eve", "CHANGES_REQUESTED")], HEAD, _trust(outsider)
    )
    assert found.approved


def test_unknown_trust_blocks_but_never_approves() -> None:
    unknown = frozenset({"kim"})
    assert not approval([_r(1, "kim", "APPROVED")], HEAD, _trust(unknown=unknown)).approved
    found = approval(
        [_r(1, "ann", "APPROVED"), _r(2, "kim", "CHANGES_REQUESTED")], HEAD, _trust(unknown=unknown)
    )
    assert not found.approved


def test_stale_when_no_approval_is_on_the_head() -> None:
    old = approval([_r(1, "ann", "APPROVED", OLD)], HEAD, _trust())
    assert (old.approved, old.stale) == (True, True)
    assert old.reason == f"every approval predates the head {HEAD[:12]}"
    assert approval([_r(1, "ann", "APPROVED", None)], HEAD, _trust()).stale
    one_fresh = approval(
        [_r(1, "ann", "APPROVED", OLD), _r(2, "bob", "APPROVED", HEAD)], HEAD, _trust()
    )
    assert (one_fresh.approved, one_fresh.stale) == (True, False)
