"""`holon serve` acting on GitHub for real (a token set, no --dry-run), as its own process,
against the loopback GitHub: the usage reply is one comment by Holon, edited on a redelivery."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.conftest import example
from tests.serve.conftest import holon_argv, serve_env

REPO = "octocat/Hello-World"
TOKEN = "ghs_" + "f" * 36  # the github_server fixture's token
HOLON = "github-actions[bot]"


def _help_comment(comment_id: int, repo: str = REPO) -> dict[str, Any]:
    payload = example("issue_comment", "created")
    payload["comment"].update(id=comment_id, body="/holon help", author_association="OWNER")
    payload["repository"]["full_name"] = repo
    payload["issue"]["number"] = 1
    return {"event": "issue_comment", "delivery": f"d-{comment_id}", "payload": payload}


def _serve(
    server: Any, state: Path, lines: list[dict[str, Any]], *extra: str, **env_extra: str
) -> Any:
    replay = state.parent / f"{state.name}-replay.ndjson"
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    env = serve_env(
        GITHUB_TOKEN=TOKEN,
        GITHUB_API_URL=server.url,
        HOLON_GITHUB_LOGIN=HOLON,
        HOLON_GITHUB_WRITE_SPACING="0",
    )
    env.pop("GITHUB_REPOSITORY", None)  # Actions sets it: only a test's own counts
    env.update(env_extra)
    argv = holon_argv("serve", "--state-dir", str(state), "--replay", str(replay), "--once")
    return subprocess.run([*argv, *extra], env=env, capture_output=True, text=True, timeout=120)


def test_serve_with_a_token_comments_once_and_edits_on_redelivery(
    github_server: Any, tmp_path: Path
) -> None:
    github_server.state.repos[REPO].add_issue("Bug")
    first = _serve(github_server, tmp_path / "s", [_help_comment(1)], "--repo", REPO)
    assert first.returncode == 0, first.stderr
    # A second /holon help on the same issue: the same usage comment, edited in place.
    again = _serve(github_server, tmp_path / "s", [_help_comment(2)], "--repo", REPO)
    assert again.returncode == 0, again.stderr
    comments = list(github_server.state.repos[REPO].comments.values())
    assert [(c.issue, c.user) for c in comments] == [(1, HOLON)]
    assert github_server.count("issues/create-comment") == 1
    assert TOKEN not in first.stdout + first.stderr + again.stdout + again.stderr
    journals = "".join(p.read_text() for p in (tmp_path / "s").glob("*.ndjson"))
    assert TOKEN not in journals
    actions = [json.loads(x) for x in (tmp_path / "s" / "actions.ndjson").read_text().splitlines()]
    assert actions[0]["output"]["comment_id"] == comments[0].id


def test_serve_with_a_token_needs_the_repository(github_server: Any, tmp_path: Path) -> None:
    run = _serve(github_server, tmp_path / "s", [_help_comment(1)])
    assert run.returncode == 64
    assert run.stderr.strip().endswith("(or set GITHUB_REPOSITORY)")
    assert github_server.count() == 0


def test_an_event_from_another_repository_acts_nowhere(github_server: Any, tmp_path: Path) -> None:
    event = _help_comment(1, repo="attacker/elsewhere")
    run = _serve(github_server, tmp_path / "s", [event], "--repo", REPO)
    assert run.returncode == 0, run.stderr  # refused, journaled with why: nothing failed
    state = tmp_path / "s"
    (decision,) = [json.loads(x) for x in (state / "decisions.ndjson").read_text().splitlines()]
    assert decision["outcome"] == "refused"
    served = f"attacker/elsewhere is not the repository Holon serves ({REPO})"
    assert decision["rationale"] == served
    actions = state / "actions.ndjson"
    assert not actions.exists() or actions.read_text() == ""  # not even decided: nothing done
    assert github_server.count() == 0  # refused before any call


def test_without_repo_github_repository_is_the_only_repository_served(
    github_server: Any, tmp_path: Path
) -> None:
    github_server.state.repos[REPO].add_issue("Bug")
    events = [_help_comment(1, repo="attacker/elsewhere"), _help_comment(2)]
    run = _serve(github_server, tmp_path / "s", events, GITHUB_REPOSITORY=REPO)
    assert run.returncode == 0, run.stderr
    state = tmp_path / "s"
    foreign, served = [json.loads(x) for x in (state / "decisions.ndjson").read_text().splitlines()]
    assert foreign["outcome"] == "refused"
    assert foreign["rationale"] == (
        f"attacker/elsewhere is not the repository Holon serves ({REPO})"
    )
    assert served["rule"] == "usage"
    # Only the served repository's event was acted on: one usage comment, on its issue.
    comments = list(github_server.state.repos[REPO].comments.values())
    assert [(c.issue, c.user) for c in comments] == [(1, HOLON)]
    assert github_server.operations() == [
        "issues/list-comments",
        "issues/create-comment",
        "issues/list-comments",  # the one comment, after posting (a racing job's?)
    ]


@pytest.mark.parametrize(
    "value", ["a/b/c", "../x", "octocat/..", "octocat/Hello-World\nattacker/elsewhere", "/x"]
)
def test_a_malformed_github_repository_is_a_one_line_error(
    github_server: Any, tmp_path: Path, value: str
) -> None:
    run = _serve(github_server, tmp_path / "s", [_help_comment(1)], GITHUB_REPOSITORY=value)
    assert run.returncode == 64, run.stderr
    (said,) = run.stderr.splitlines()
    assert (
        said
        == f"holon: error: GITHUB_REPOSITORY must name a repository as OWNER/NAME, not {value!r}"
    )
    assert "Traceback" not in run.stderr
    assert github_server.count() == 0
    # --repo is held to the same, and named as the source.
    flag = _serve(github_server, tmp_path / "f", [_help_comment(1)], "--repo", value)
    assert flag.returncode == 64, flag.stderr
    assert flag.stderr.splitlines() == [
        f"holon: error: --repo must name a repository as OWNER/NAME, not {value!r}"
    ]
