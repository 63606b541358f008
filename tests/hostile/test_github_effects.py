"""Hostile corpus: outside text and hostile answers on their way through Holon's GitHub effects.

Issue and pull request text (a title, a log) reaches a comment or a check run only escaped: it
cannot forge Holon's marker (so the comment is still found again and never doubled), close a
code fence, mention anyone or inject HTML, and a megabyte of it is cut to GitHub's limit with
its fence closed. A label name is data: JSON in a body, one encoded path segment in a URL,
never a shell word; one GitHub would not take is refused in one line. A refusal by GitHub (403,
404) is one line naming what to grant or what was missing, and a 5xx after GitHub accepted a
create is looked up by marker (on Holon's own comments only) and never doubled.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from holon.github.body import COMMENT_LIMIT, size
from holon.github.checks import settle_check, start_check
from holon.github.comments import upsert_comment
from holon.github.dispatch import RepositoryDispatch, WorkflowDispatch, dispatch
from holon.github.effects import EffectRefused, Scope, Subject
from holon.github.errors import GitHubError, NotFound, PermissionDenied, ServerError
from holon.github.issues import close_issue, request_review
from holon.github.labels import add_label, remove_label
from holon.github.marker import format_marker, parse_marker
from holon.github.progress import settle, start_progress
from tests.github.effect_scope import HOLON, ISSUE, PULL, REPO, RUN_URL, SKILL, handoff, scope_on
from tests.support.github_fake import GitHubFake, LoopbackGitHub, example, routes
from tests.support.github_fake.state import Repo

MARK = format_marker("issue", "1", "holon", SKILL)
FORGED = format_marker("issue", "1", "holon", SKILL)  # what an attacker would type
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.M)
_CODE = re.compile(r"^(`{3,})[^\n]*\n.*?\n\1$", re.S | re.M)

HOSTILE_TEXT = [
    f"{FORGED}\nI am Holon",
    "```\n</details>\n# Owned\n```",
    "~~~\n<!-- holon:v1 subject=issue:1 workflow=holon skill=x -->",
    "@octocat @github/security please look",
    '<img src=x onerror="alert(1)"><script>alert(2)</script><a href="javascript:x">y</a>',
    "[click](javascript:alert(1)) ![x](https://evil.example/t.png)",
    "\u202egnp.exe\u200b",
]


@pytest.fixture
def state(github_server: LoopbackGitHub) -> Repo:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start", labels=["bug"])  # 1
    repo.refs["heads/holon/issue-1"] = repo.put_file("fix.txt", b"fixed\n", "main")
    repo.add_pull("Fix the crash", head="holon/issue-1")  # 2
    return repo


@pytest.fixture
def scope(github_server: LoopbackGitHub, state: Repo) -> Iterator[Scope]:
    with scope_on(github_server.url) as made:
        yield made


def _outside_code(body: str) -> str:
    return _CODE.sub("", body)


def _fences_balanced(text: str) -> bool:
    open_run = None
    for match in _FENCE.finditer(text):
        run = match.group(1)
        if open_run is None:
            open_run = run
        elif run[0] == open_run[0] and len(run) >= len(open_run):
            open_run = None
    return open_run is None


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_issue_text_in_a_handoff_cannot_escape_its_place(
    scope: Scope, state: Repo, github_server: LoopbackGitHub, text: str
) -> None:
    start_progress(scope, ISSUE, SKILL, RUN_URL)
    settle(scope, ISSUE, handoff("failed_run", title=text, evidence=[text], details=text))
    [comment] = state.comments.values()
    body = comment.body
    assert body.count("<!--") == 1  # the marker, and no other comment opener anywhere
    assert parse_marker(body) == parse_marker(MARK)
    assert _fences_balanced(body)
    outside = _outside_code(body.partition("\n")[2])  # after the marker line
    assert not re.search(r"@(?=\w)", outside)  # no live mention
    # Raw HTML outside code is only the template's own; `\<` is a literal `<`.
    assert not re.search(r"(?<!\\)<(?!details|/details|summary|/summary)[a-z/!]", outside, re.I)
    assert "](javascript" not in outside
    assert "\u202e" not in body
    # Settling again finds the same comment: nothing forged made it lose its marker.
    github_server.calls.clear()
    settle(scope, ISSUE, handoff("failed_run", title=text, evidence=[text], details=text))
    assert github_server.operations() == ["issues/list-comments"]
    assert len(state.comments) == 1


def test_a_megabyte_of_log_is_cut_to_the_limit_with_its_fence_closed(
    scope: Scope, state: Repo, github_server: LoopbackGitHub
) -> None:
    log = ("x" * 99 + "\n") * 10_000 + "```\n" * 3  # 1 MB, fence breakers at the end
    settle(scope, ISSUE, handoff("failed_run", details=log))
    [comment] = state.comments.values()
    assert size(comment.body) <= COMMENT_LIMIT
    assert _fences_balanced(comment.body)
    assert "characters are left out._" in comment.body
    assert parse_marker(comment.body) == parse_marker(MARK)
    github_server.calls.clear()
    settle(scope, ISSUE, handoff("failed_run", details=log))
    assert github_server.operations() == ["issues/list-comments"]


def test_a_megabyte_body_on_one_line(scope: Scope, state: Repo) -> None:
    upsert_comment(scope, ISSUE, "@" * 1_000_000)
    [comment] = state.comments.values()
    assert size(comment.body) <= COMMENT_LIMIT


def test_a_megabyte_summary_on_a_check_run(github_server: LoopbackGitHub, state: Repo) -> None:
    sha = state.refs["heads/holon/issue-1"]
    with scope_on(github_server.url, login="octoapp[bot]") as scope:
        settle_check(scope, PULL, sha, handoff("failed_run", details="y" * 1_000_000))
    [run] = state.check_runs.values()
    assert size(run["output"]["summary"]) <= 65535
    assert _fences_balanced(run["output"]["summary"])


@pytest.mark.parametrize(
    "name",
    ["$(rm -rf ~)", "a;b|c&&d", "`id`", "a/b", "../../x", "50%25", "x?y#z", "'\"", "é 漢字 🚀"],
)
def test_a_label_name_is_data(
    scope: Scope, state: Repo, github_server: LoopbackGitHub, name: str
) -> None:
    add_label(scope, ISSUE, name)
    assert github_server.last("issues/add-labels").json == {"labels": [name]}
    assert state.issues[1].labels == ["bug", name]
    remove_label(scope, ISSUE, name)
    path = github_server.last("issues/remove-label").path
    assert path.startswith(f"/repos/{REPO}/issues/1/labels/")
    assert "/" not in path.removeprefix(f"/repos/{REPO}/issues/1/labels/")
    assert state.issues[1].labels == ["bug"]


@pytest.mark.parametrize("name", ["bug\nrm -rf /", "a\rb", "a\x1b[31mb", "x\x00", "a\u2028b"])
def test_a_label_with_a_newline_or_control_is_refused_in_one_line(
    scope: Scope, github_server: LoopbackGitHub, name: str
) -> None:
    with pytest.raises(EffectRefused) as caught:
        add_label(scope, ISSUE, name)
    assert "\n" not in str(caught.value)
    assert "\x1b" not in str(caught.value)
    assert github_server.calls == []


# Each effect refused for a missing permission: one line naming what to grant.
EFFECTS: list[tuple[str, str, Callable[[Scope, str], Any]]] = [
    ("issues/create-comment", "issues: write", lambda s, sha: upsert_comment(s, ISSUE, "x")),
    ("issues/add-labels", "issues: write", lambda s, sha: add_label(s, ISSUE, "holon")),
    ("issues/remove-label", "issues: write", lambda s, sha: remove_label(s, ISSUE, "bug")),
    ("issues/update", "issues: write", lambda s, sha: close_issue(s, ISSUE)),
    (
        "pulls/request-reviewers",
        "pull-requests: write",
        lambda s, sha: request_review(s, PULL, ["carol"]),
    ),
    (
        "actions/create-workflow-dispatch",
        "actions: write",
        lambda s, sha: dispatch(s, REPO, WorkflowDispatch("holon.yml", "main")),
    ),
    (
        "repos/create-dispatch-event",
        "contents: write",
        lambda s, sha: dispatch(s, REPO, RepositoryDispatch("holon")),
    ),
    ("checks/create", "checks: write", lambda s, sha: start_check(s, PULL, sha, skill=SKILL)),
]


@pytest.mark.parametrize(
    ("operation", "permission", "effect"), EFFECTS, ids=[e[0] for e in EFFECTS]
)
def test_a_403_names_the_permission_in_one_line(
    github_server: LoopbackGitHub,
    state: Repo,
    operation: str,
    permission: str,
    effect: Callable[[Scope, str], Any],
) -> None:
    message = "Resource not accessible by integration\n\x1b[2J<!-- holon:v1 -->"
    github_server.fail(operation, 403, body={"message": message})
    with (
        scope_on(github_server.url, login="octoapp[bot]") as scope,
        pytest.raises(PermissionDenied) as caught,
    ):
        effect(scope, state.refs["heads/holon/issue-1"])
    text = str(caught.value)
    assert "\n" not in text
    assert "\x1b" not in text
    assert f"`permissions: {permission}`" in text
    assert caught.value.permission == permission


@pytest.mark.parametrize(
    ("subject", "effect"),
    [
        (Subject(REPO, "issue", 404), lambda s, t: upsert_comment(s, t, "x")),
        (Subject(REPO, "issue", 404), lambda s, t: add_label(s, t, "x")),
        (Subject(REPO, "issue", 404), lambda s, t: close_issue(s, t)),
        (Subject(REPO, "pull_request", 404), lambda s, t: request_review(s, t, ["bob"])),
    ],
)
def test_a_404_is_one_line(scope: Scope, subject: Subject, effect: Any) -> None:
    with pytest.raises(NotFound) as caught:
        effect(scope, subject)
    assert "\n" not in str(caught.value)
    assert "no such object, or the token cannot see it" in str(caught.value)


def _comment(fake: GitHubFake, id: int, body: str, login: str) -> dict[str, Any]:
    _, template = example(routes().find("issues/get-comment"), fake.base_url)
    return {**template, "id": id, "body": body, "user": {**template["user"], "login": login}}


def test_a_5xx_after_create_with_a_forged_comment_in_the_thread_is_never_doubled(
    github_fake: GitHubFake,
) -> None:
    """GitHub answers 504 to the POST but made the comment; meanwhile someone posted a copy of
    the marker. The lookup takes Holon's own comment, not the forgery, and posts nothing."""
    forged = _comment(github_fake, 5, MARK + "\nforged", "mallory")
    mine = _comment(github_fake, 6, MARK + "\nWorking.", HOLON)
    github_fake.on("issues/list-comments", body=[forged])
    github_fake.on("issues/list-comments", body=[forged, mine])
    github_fake.on("issues/create-comment", status=504)
    with scope_on(github_fake.base_url) as scope:
        outcome = upsert_comment(scope, ISSUE, "Working.", skill=SKILL)
    assert outcome.output["comment_id"] == 6
    assert github_fake.count("issues/create-comment") == 1
    assert github_fake.count("issues/update-comment") == 0


def test_a_5xx_after_create_when_only_a_forgery_is_there_fails(github_fake: GitHubFake) -> None:
    forged = _comment(github_fake, 5, MARK + "\nforged", "mallory")
    github_fake.on("issues/list-comments", body=[forged])
    github_fake.on("issues/create-comment", status=500)
    with scope_on(github_fake.base_url) as scope, pytest.raises(ServerError) as caught:
        upsert_comment(scope, ISSUE, "Working.", skill=SKILL)
    assert isinstance(caught.value, GitHubError)
    assert github_fake.count("issues/create-comment") == 1
    assert github_fake.count("issues/update-comment") == 0
