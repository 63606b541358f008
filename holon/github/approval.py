"""Whether a pull request is approved, and freshly, from its reviews (pure).

Each reviewer's verdict is their latest review that gives one: APPROVED, CHANGES_REQUESTED or
DISMISSED (a dismissed review withdraws its verdict). COMMENTED and PENDING reviews say nothing
about the merge and leave the earlier verdict standing, as on GitHub.

Only trusted reviewers count (`trusted`: write access or better, see `facts.py`): on a public
repository anyone can submit an "Approve" review. An approval counts only when trust is
established (True); a request for changes blocks unless the reviewer is known to be untrusted
(False), so a reviewer whose permission cannot be read holds the merge back.

Approved: at least one trusted approval and no blocking request for changes. Stale: approved,
but no approval was given on the current head (each predates a later push).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from holon.github.access import Review

VERDICTS = frozenset({"APPROVED", "CHANGES_REQUESTED", "DISMISSED"})


@dataclass(frozen=True)
class Approval:
    approved: bool
    stale: bool
    reason: str  # why it is not (freshly) approved; "" when it is


def approval(
    reviews: Iterable[Review], head_sha: str, trusted: Callable[[Review], bool | None]
) -> Approval:
    latest: dict[str, Review] = {}
    for review in sorted(reviews, key=lambda r: r.id):
        if review.state in VERDICTS:
            latest[review.login.casefold()] = review  # logins are case-insensitive
    approvals: list[Review] = []
    for review in latest.values():
        if review.state == "CHANGES_REQUESTED" and trusted(review) is not False:
            return Approval(False, False, f"{review.login} requested changes")
        if review.state == "APPROVED" and trusted(review) is True:
            approvals.append(review)
    if not approvals:
        return Approval(False, False, "no approval from a reviewer with write access")
    if not any(review.commit_id == head_sha for review in approvals):
        return Approval(True, True, f"every approval predates the head {head_sha[:12]}")
    return Approval(True, False, "")
