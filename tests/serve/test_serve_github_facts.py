"""`holon serve` acting on GitHub reads its facts live (docs/github.md, "Facts"): a MEMBER's
command is decided on the permission GitHub gives, read once per actor per pass."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.serve.conftest import holon_argv, serve_env
from tests.serve.github_serve import HELLO, REPO, comment_event, journal, serve

PERMISSION = "repos/get-collaborator-permission-level"


@pytest.mark.parametrize(("level", "outcome"), [("read", "refused"), ("write", "accepted")])
def test_a_members_solve_is_decided_on_the_permission_github_gives(
    github_server: Any, tmp_path: Path, level: str, outcome: str
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    repo.permissions["Codertocat"] = level
    workspace = tmp_path / "ws"
    workspace.mkdir()
    event = comment_event(1, "/holon solve", "MEMBER")
    state = tmp_path / "s"
    run = serve(github_server, state, [event], "--workspace", str(workspace), "--agent", HELLO)
    decisions = journal(state, "decisions")
    runs = [a for a in journal(state, "actions") if a["type"] == "run_skill"]
    assert run.returncode == 0, run.stderr
    if outcome == "refused":  # nothing ran; the refusal is a reply on the issue
        assert not runs
        assert "Codertocat has read access" in str(decisions)
        assert "write access" in next(iter(repo.comments.values())).body
    else:
        assert [a["status"] for a in runs] == ["succeeded"]
    # One permission call for the one actor of the one pass, however many asked (the run's
    # context marks each author's trust through the same cached facts).
    asked = [c.path for c in github_server.calls if c.path.endswith("/permission")]
    assert asked.count(f"/repos/{REPO}/collaborators/Codertocat/permission") == 1


def test_without_a_token_holons_own_comments_still_ask_for_nothing(tmp_path: Path) -> None:
    """Offline (no token, --dry-run): Holon's login still comes from HOLON_GITHUB_LOGIN."""
    event = comment_event(1, "/holon solve", "OWNER")
    event["payload"]["sender"].update(login="github-actions[bot]", type="Bot")
    event["payload"]["comment"]["user"].update(login="github-actions[bot]", type="Bot")
    replay = tmp_path / "replay.ndjson"
    replay.write_text(json.dumps(event) + "\n")
    env = serve_env(HOLON_GITHUB_LOGIN="github-actions[bot]")
    env.pop("GITHUB_TOKEN", None)
    argv = holon_argv(
        "serve", "--state-dir", str(tmp_path / "s"), "--replay", str(replay), "--once", "--dry-run"
    )
    run = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert not journal(tmp_path / "s", "actions")
    assert "is Holon: its own writing asks no work" in str(journal(tmp_path / "s", "decisions"))
