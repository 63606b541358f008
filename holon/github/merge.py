"""The merge effect: everything re-checked right before the merge, the merge pinned to the sha
it was decided on, and never sent twice (docs/github.md, "Merging").

In order, cheapest first, each failed check an outcome naming its reason:

1. refused: an unknown method; a target outside the event's repository;
2. from one read of the pull request: already merged (nothing to do), retargeted to another
   base than the one decided for, closed, a draft, a title marked work in progress, a hold
   label (refused); the head moved off the sha, GitHub
   has not computed mergeability yet (read once more first) or it conflicts (a wait);
3. from its reviews: not approved, or the approval predates the head (refused);
4. from the rulesets, check runs and statuses on that exact sha: failed or unknown (refused),
   not finished (a wait);
5. `PUT .../merge` with `sha` and the method. 409 (the head moved meanwhile) and 405 (GitHub
   will not merge it now: protection, conflicts) are waits. A 5xx or a lost answer is not sent
   again: the pull request is read back, merged is success, not merged is a `ServerError`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from typing import Any

from holon.github.errors import Conflict, GitHubError, ServerError
from holon.github.facts import GitHubFacts
from holon.github.outcome import EffectOutcome

METHODS = ("merge", "squash", "rebase")
HOLD_LABELS = ("hold", "do-not-merge")
WIP_MARKERS = ("WIP", "Draft:", "[Draft]")
MERGEABLE_PAUSE = 2.0  # seconds before mergeability is read the second time

EFFECT = "merge"


def wip_marker(title: str, markers: Iterable[str] = WIP_MARKERS) -> str | None:
    """The marker that makes `title` work in progress: found anywhere, ignoring case, as a
    whole word (`WIP`, `[WIP]`, `wip: x`, not `Wipe`). A false alarm only holds a merge back."""
    for marker in markers:
        if not marker.strip():
            continue
        before = r"(?<![A-Za-z0-9])" if marker[0].isalnum() else ""
        after = r"(?![A-Za-z0-9])" if marker[-1].isalnum() else ""
        if re.search(before + re.escape(marker) + after, title, re.IGNORECASE):
            return marker
    return None


def _not(code: str, note: str, base: dict[str, Any], *, wait: bool = False) -> EffectOutcome:
    key = "waiting" if wait else "refused"
    return EffectOutcome(EFFECT, False, {**base, key: code}, note, note if wait else None)


def merge_pull(
    facts: GitHubFacts,
    repo: str,
    number: int,
    *,
    sha: str,
    method: str,
    event_repo: str | None,
    base_ref: str | None,
    hold_labels: Iterable[str] = HOLD_LABELS,
    wip_markers: Iterable[str] = WIP_MARKERS,
    sleep: Callable[[float], None] = time.sleep,
) -> EffectOutcome:
    """Merge pull request `number` of `repo` at `sha` into `base_ref` (the base branch it was
    decided for; None: unknown, refused), or say why not (see the module doc).
    Raises `GitHubError` when GitHub fails a read or refuses the merge (401, 403, 422).
    `sleep` is for tests: the pause before mergeability is read again."""
    base: dict[str, Any] = {"pull": number, "sha": sha}
    if method not in METHODS:
        return _not("method", f"unknown merge method {method[:20]!r}", base)
    if event_repo is None or repo.casefold() != event_repo.casefold():
        return _not("repository", "the pull request is not in the event's repository", base)
    pull = facts.read_pull(repo, number, fresh=True)
    if pull.merged:
        done = {**base, "merged": True, "merge_sha": pull.merge_commit_sha, "already": True}
        return EffectOutcome(EFFECT, False, done, "already merged")
    if pull.base_repo.casefold() != repo.casefold():
        return _not("repository", "GitHub answered for another repository", base)
    if pull.base_ref != base_ref:
        note = f"the base branch is now {pull.base_ref}; the merge was decided for {base_ref}"
        return _not("base", note, base)
    if pull.state != "open":
        return _not("closed", f"the pull request is {pull.state or 'not open'}", base)
    if pull.draft:
        return _not("draft", "the pull request is a draft", base)
    marker = wip_marker(pull.title, wip_markers)
    if marker is not None:
        return _not("wip", f"the title marks it work in progress ({marker})", base)
    hold = {name.casefold() for name in hold_labels}
    held = [label for label in pull.labels if label.casefold() in hold]
    if held:
        return _not("hold", f"the label {held[0]!r} holds it", base)
    if pull.head_sha != sha:
        note = f"head moved to {pull.head_sha[:12]}; not merging {sha[:12]}"
        return _not("head_moved", note, base, wait=True)
    if pull.mergeable is None:
        # GitHub computes mergeability in the background after a push: ask once more, after
        # a moment (a job already waiting for its turn does not mind two seconds).
        sleep(MERGEABLE_PAUSE)
        pull = facts.read_pull(repo, number, fresh=True)
        if pull.head_sha != sha:
            note = f"head moved to {pull.head_sha[:12]}; not merging {sha[:12]}"
            return _not("head_moved", note, base, wait=True)
    if pull.mergeable is None:
        return _not("mergeable", "GitHub has not computed mergeability yet", base, wait=True)
    if not pull.mergeable:
        return _not("mergeable", "it conflicts with its base branch", base, wait=True)
    approval = facts.approval(repo, pull)
    if not approval.approved:
        return _not("approval", approval.reason, base)
    if approval.stale:
        return _not("stale", approval.reason, base)
    checks = facts.checks(repo, sha, pull.base_ref)
    if checks.state == "pending":
        return _not("checks", checks.reason, base, wait=True)
    if checks.state != "green":
        return _not("checks", checks.reason, base)
    return _put(facts, repo, number, sha=sha, method=method, base=base)


def _put(
    facts: GitHubFacts, repo: str, number: int, *, sha: str, method: str, base: dict[str, Any]
) -> EffectOutcome:
    try:
        answer = facts.access.merge(repo, number, sha=sha, method=method)
        if not answer.merged:
            raise ServerError("GitHub answered pulls/merge without merging", status=200)
    except Conflict as exc:
        return _not("head_moved", f"the head moved while merging: {exc}", base, wait=True)
    except ServerError as exc:
        return _read_back(facts, repo, number, exc, base)
    except GitHubError as exc:
        if exc.status == 405:
            return _not("not_mergeable", f"GitHub will not merge it now: {exc}", base, wait=True)
        raise
    done = {**base, "merged": True, "merge_sha": answer.sha, "method": method}
    return EffectOutcome(EFFECT, True, done, f"merged {sha[:12]} ({method})")


def _read_back(
    facts: GitHubFacts, repo: str, number: int, failed: ServerError, base: dict[str, Any]
) -> EffectOutcome:
    """After an answer that may hide a merge: read, never send the merge again."""
    try:
        pull = facts.read_pull(repo, number, fresh=True)
    except GitHubError:
        raise failed from None
    if pull.merged:
        done = {**base, "merged": True, "merge_sha": pull.merge_commit_sha}
        return EffectOutcome(EFFECT, True, done, f"merged: {failed} (a re-read shows it merged)")
    what = f"a {failed.status} answer" if failed.status else "no answer"
    raise ServerError(
        f"GitHub may or may not have merged #{number}: after {what} to pulls/merge a re-read "
        "shows it not merged; the merge was not sent again",
        operation="pulls/merge",
        status=failed.status,
    )
