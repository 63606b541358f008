"""Running `holon serve` against the loopback GitHub as its own process, acting for real."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.gateway.conftest import example
from tests.serve.conftest import holon_argv, serve_env

REPO = "octocat/Hello-World"
TOKEN = "ghs_" + "f" * 36  # the loopback GitHub's token
HELLO = f"{sys.executable} -m holon.examples.hello_agent"


def comment_event(number: int, body: str, association: str, *, ident: int = 1) -> dict[str, Any]:
    """`body` commented on issue `number` by Codertocat with `association`."""
    payload = example("issue_comment", "created")
    payload["comment"].update(id=ident, body=body, author_association=association)
    payload["issue"]["number"] = number
    payload["issue"].pop("pull_request", None)
    payload["repository"]["full_name"] = REPO
    return {"event": "issue_comment", "delivery": f"d-{ident}", "payload": payload}


def review_event(
    number: int, sha: str, state: str, body: str | None = None, *, ident: int = 237895671
) -> dict[str, Any]:
    """A review (`ident`) by Codertocat (OWNER) of pull request `number` at `sha`."""
    payload = example("pull_request_review", "submitted")
    payload["review"].update(id=ident, state=state, body=body, commit_id=sha)
    payload["pull_request"]["number"] = number
    payload["pull_request"]["head"]["sha"] = sha
    payload["pull_request"]["base"]["ref"] = "main"  # the fake's pull requests merge into main
    payload["repository"]["full_name"] = REPO
    return {"event": "pull_request_review", "delivery": f"r-{ident}", "payload": payload}


def hold_triggers(server: Any, lines: list[dict[str, Any]]) -> None:
    """GitHub holds what each event says was written (its comment, its review), as it would:
    a write of the work reads its trigger again first (frozen inputs, docs/security.md)."""
    repo = server.state.repos[REPO]
    for line in lines:
        payload = line["payload"]
        if line["event"] == "issue_comment":
            repo.hold_comment(payload)
        elif line["event"] == "pull_request_review":
            r, number = payload["review"], payload["pull_request"]["number"]
            pull = repo.issue(number, pull=True).pull
            if not any(x["id"] == r["id"] for x in pull.reviews):
                pull.reviews.append(
                    {"id": r["id"], "user": r["user"]["login"], "body": r["body"] or "",
                     "state": str(r["state"]).upper(), "commit_id": r["commit_id"]}
                )  # fmt: skip


def holon_comments(repo: Any, login: str) -> list[Any]:
    """The comments `login` (Holon) wrote on the fake."""
    return [c for c in repo.comments.values() if c.user == login]


def without_publishing(directory: Path) -> Path:
    """The built-in policy without its publishing rule: for tests of what a run does on GitHub
    before publishing (facts, progress, checks), whose scratch workspaces have no commit to
    publish from (tests/serve/test_serve_publish.py covers publishing)."""
    text = (
        Path(__file__).resolve().parents[2] / "holon/controller/default_policy.yaml"
    ).read_text()
    start = text.index("  - name: publish-settled-run")
    end = text.index("  - name: ", start + 1)
    path = directory / "no-publish-policy.yaml"
    path.write_text(text[:start] + text[end:])
    return path


def serve(
    server: Any,
    state: Path,
    lines: list[dict[str, Any]],
    *extra: str,
    login: str = "github-actions[bot]",
    env_extra: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    replay = state.parent / f"{state.name}-replay.ndjson"
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    env = serve_env(
        GITHUB_TOKEN=TOKEN,
        GITHUB_API_URL=server.url,
        HOLON_GITHUB_LOGIN=login,
        HOLON_GITHUB_WRITE_SPACING="0",
        **(env_extra or {}),
    )
    argv = holon_argv(
        "serve", "--state-dir", str(state), "--replay", str(replay), "--once", "--repo", REPO
    )
    if "--policy" not in extra:
        argv += ["--policy", str(without_publishing(state.parent))]
    return subprocess.run([*argv, *extra], env=env, capture_output=True, text=True, timeout=120)


def journal(state: Path, name: str) -> list[dict[str, Any]]:
    path = state / f"{name}.ndjson"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
