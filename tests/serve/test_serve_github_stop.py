"""`holon serve` answering `/holon stop` on GitHub: the subject's one Holon comment becomes the
handoff of its closure (`userinterlude`: who stopped it, how to restart), also when nothing
was running; and no other event that ended no run writes a handoff."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.serve.github_serve import HELLO, REPO, comment_event, serve

SOLVE_MARKER = "<!-- holon:v1 subject=issue:1 workflow=holon skill=github-issue-solve -->"


def _serve(server: Any, tmp_path: Path, lines: list[dict[str, Any]], name: str = "s") -> Any:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return serve(server, tmp_path / name, lines, "--workspace", str(workspace), "--agent", HELLO)


def test_a_stop_with_nothing_running_is_answered_by_one_handoff(
    github_server: Any, tmp_path: Path
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    stop = comment_event(1, "/holon stop", "OWNER")
    done = _serve(github_server, tmp_path, [stop])
    assert done.returncode == 2, done.stderr  # waiting on the operator
    (comment,) = repo.comments.values()
    assert comment.user == "github-actions[bot]"
    assert "**Outcome:** `userinterlude`" in comment.body, comment.body
    assert "stopped by Codertocat" in comment.body, comment.body
    assert "/holon solve" in comment.body, comment.body
    assert "restart" in comment.body, comment.body
    # Stopped again (a new comment, a new event): the same comment, nothing new posted.
    again = comment_event(1, "/holon stop", "OWNER", ident=2)
    assert _serve(github_server, tmp_path, [again]).returncode == 2
    (same,) = repo.comments.values()
    assert same.id == comment.id
    assert github_server.count("issues/create-comment") == 1


def test_a_stop_after_finished_work_settles_that_works_comment(
    github_server: Any, tmp_path: Path
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    solve = comment_event(1, "/holon solve", "OWNER")
    assert _serve(github_server, tmp_path, [solve]).returncode == 0
    (finished,) = repo.comments.values()
    assert SOLVE_MARKER in finished.body
    assert "`finished`" in finished.body
    stop = comment_event(1, "/holon stop", "OWNER", ident=2)
    assert _serve(github_server, tmp_path, [stop]).returncode == 2
    (comment,) = repo.comments.values()  # one comment on the subject, agreeing with its closure
    assert comment.id == finished.id
    assert SOLVE_MARKER in comment.body
    assert "**Outcome:** `userinterlude`" in comment.body, comment.body


def test_a_stop_by_someone_without_write_access_writes_no_handoff(
    github_server: Any, tmp_path: Path
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    stop = comment_event(1, "/holon stop", "NONE")
    _serve(github_server, tmp_path, [stop])
    assert all("**Outcome:**" not in c.body for c in repo.comments.values())


def test_help_gets_only_its_usage_reply_and_a_plain_comment_nothing(
    github_server: Any, tmp_path: Path
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    plain = comment_event(1, "Thanks, looks good.", "OWNER")
    assert _serve(github_server, tmp_path, [plain]).returncode == 0
    assert not repo.comments
    help_ = comment_event(1, "/holon help", "OWNER", ident=2)
    assert _serve(github_server, tmp_path, [help_]).returncode == 0
    (usage,) = repo.comments.values()
    assert "**Outcome:**" not in usage.body, usage.body
    assert "skill=reply.usage" in usage.body  # the usage reply's own marker
