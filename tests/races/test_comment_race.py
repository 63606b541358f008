"""Two processes writing the one comment of a subject at the same moment (one event delivered to
two jobs): both list, find none, and both post. The oldest comment with the marker is the one:
the process whose comment is newer deletes it and edits the oldest to say its body, so the
subject keeps one Holon comment. Before, the subject kept two, each process editing its own."""

from __future__ import annotations

from typing import Any

import pytest

from holon.github.comments import upsert_comment
from holon.github.marker import format_marker
from tests.github.effect_scope import HOLON, ISSUE, REPO, scope_on
from tests.support.github_fake import LoopbackGitHub

MARK = format_marker("issue", "1", "holon", "github-issue-solve")


def test_two_processes_posting_at_once_leave_one_comment(
    github_server: LoopbackGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    with scope_on(github_server.url) as scope:
        real = scope.repo.create_comment

        def create(number: int, body: str) -> Any:
            # The other process posted between this one's look-up and its post.
            repo.add_comment(number, MARK + "\nWorking on it (the other job).", HOLON)
            return real(number, body)

        monkeypatch.setattr(scope.repo, "create_comment", create)
        outcome = upsert_comment(scope, ISSUE, "Working on it.", skill="github-issue-solve")
        monkeypatch.undo()
        (only,) = [c for c in repo.comments.values() if c.issue == 1]
        assert only.body == MARK + "\nWorking on it."
        assert outcome.output["comment_id"] == only.id
        assert github_server.count("issues/delete-comment") == 1
        # This process goes on editing the one comment (it remembers the one that stands).
        upsert_comment(scope, ISSUE, "Done.", skill="github-issue-solve")
        (only,) = [c for c in repo.comments.values() if c.issue == 1]
        assert only.body == MARK + "\nDone."
