"""A tick reconciles with a cursor: what a dropped run missed is handled once, what was handled
live is not handled again, and nothing at the cursor's boundary is missed or repeated.

Payload shapes against GitHub's real webhook examples (the reconciled event's dedupe key is the
live one's); the listing against the loopback GitHub over real HTTP; exactly-once through the
controller with the policy decider."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import github
import pytest

from holon.actions import reconcile_payloads as shape
from holon.actions.cursor import KEY, LOOKBACK, MAX_SEEN, SETTLE, read_cursor
from holon.actions.reconcile import reconcile
from holon.controller.facts import PullFacts
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.github.client import GitHubConfig, make_client
from holon.state.model import Record, ServeState
from tests.controller.conftest import decisions, make_controller
from tests.gateway.conftest import example
from tests.github.effect_scope import HOLON, TOKEN
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.state import Repo

REPO = "octocat/Hello-World"
NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)  # the controller tests' clock
CURSOR = NOW - timedelta(minutes=30)


def iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def live(event: str, payload: dict[str, Any]) -> EventEnvelope:
    return normalize(event, payload, via="actions", received_at=NOW, run_id="9", repository=REPO)


# -- the payloads: the live event's dedupe key --------------------------------------------------


def _same(a: EventEnvelope, b: EventEnvelope, *, actor: bool = True) -> None:
    assert a.dedupe_key == b.dedupe_key
    assert a.id == b.id
    assert a.type == b.type
    assert a.subject == b.subject
    assert a.command == b.command
    assert a.at == b.at
    if not actor:
        return
    assert (a.actor and a.actor.login, a.actor and a.actor.authority) == (
        b.actor and b.actor.login,
        b.actor and b.actor.authority,
    )


@pytest.mark.parametrize("index", range(5))
def test_a_reconciled_comment_has_the_live_events_key(index: int) -> None:
    payload = [p for p in example_all("issue_comment") if p["action"] == "created"][index]
    payload["comment"]["body"] = "/holon solve now"
    repo, number = payload["repository"]["full_name"], payload["issue"]["number"]
    pull = isinstance(payload["issue"].get("pull_request"), dict)
    # The REST listing's comment object is the webhook's comment object.
    rebuilt = shape.comment_created(repo, payload["comment"], number, pull=pull)
    assert rebuilt is not None
    _same(live("issue_comment", payload), live("issue_comment", rebuilt))
    assert len(json.dumps(rebuilt)) < len(json.dumps(payload)) / 3  # only what decisions need


def example_all(event: str) -> list[dict[str, Any]]:
    from tests.gateway.conftest import examples

    return json.loads(json.dumps(examples()[event]))


@pytest.mark.parametrize("index", [0, 1, 2])
def test_a_reconciled_review_has_the_live_events_key(index: int) -> None:
    payload = [p for p in example_all("pull_request_review") if p["action"] == "submitted"][index]
    repo = payload["repository"]["full_name"]
    review = {**payload["review"], "state": payload["review"]["state"].upper()}  # REST's case
    rebuilt = shape.review_submitted(repo, payload["pull_request"], review)
    assert rebuilt is not None
    a, b = live("pull_request_review", payload), live("pull_request_review", rebuilt)
    _same(a, b)
    assert b.payload["review"]["state"] == payload["review"]["state"]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_a_reconciled_check_run_has_the_live_events_key(index: int) -> None:
    payload = [p for p in example_all("check_run") if p["action"] == "completed"][index]
    run = payload["check_run"]
    numbers = [pr["number"] for pr in run["pull_requests"]] or [7]
    rebuilt = shape.check_run_completed(payload["repository"]["full_name"], run, numbers[0])
    assert rebuilt is not None
    a, b = live("check_run", payload), live("check_run", rebuilt)
    assert a.dedupe_key == b.dedupe_key
    assert b.subject is not None
    assert b.subject.pull_requests == sorted(set(numbers))
    assert b.payload["check_run"]["conclusion"] == run["conclusion"]


@pytest.mark.parametrize("action", ["opened", "synchronize"])
def test_a_reconciled_pull_request_has_the_live_events_key(action: str) -> None:
    payload = example("pull_request", action)
    pull = payload["pull_request"]
    if action == "synchronize":
        payload["after"] = pull["head"]["sha"]
    rebuilt = shape.pull_request_event(payload["repository"]["full_name"], pull, action)
    assert rebuilt is not None
    # Who pushed is not in the listing: a synchronize asks nothing of its sender's authority.
    _same(live("pull_request", payload), live("pull_request", rebuilt), actor=action == "opened")


def test_items_missing_what_their_event_needs_are_left_out() -> None:
    assert shape.comment_created(REPO, {"id": "1", "user": {"login": "a"}}, 1, pull=False) is None
    assert shape.comment_created(REPO, {"id": 1, "created_at": "x"}, 1, pull=False) is None
    assert shape.review_submitted(REPO, {"number": 1}, {"id": 2}) is None
    assert (
        shape.check_run_completed(REPO, {"id": 1, "head_sha": "a", "status": "queued"}, 1) is None
    )
    assert shape.pull_request_event(REPO, {"number": 1, "head": "x"}, "opened") is None


# -- the listing against the loopback GitHub ----------------------------------------------------


@pytest.fixture
def client(github_server: LoopbackGitHub) -> Iterator[github.Github]:
    config = GitHubConfig(api_url=github_server.url, token=TOKEN, write_spacing=0.0)  # type: ignore[arg-type]
    made = make_client(config, sleep=lambda seconds: None)
    yield made
    made.close()


@pytest.fixture
def repo(github_server: LoopbackGitHub) -> Repo:
    found = github_server.state.repos[REPO]
    found.add_issue("Crash on start")  # 1
    found.permissions["octocat"] = "write"
    return found


def comment(repo: Repo, body: str, at: datetime, user: str = "octocat", number: int = 1) -> int:
    made = repo.add_comment(number, body, user)
    made.created_at = made.updated_at = iso(at)
    return made.id


def state_at(since: datetime, seen: dict[str, str] | None = None) -> ServeState:
    state = ServeState()
    data = {"since": iso(since), "seen": seen or {}}
    state.put(Record(kind="meta", key=KEY, updated_at=since, writer="t", data=data))
    return state


def tick(
    state: ServeState,
    client: github.Github,
    now: datetime = NOW,
    limit: int = 100,
    warned: list[str] | None = None,
) -> list[EventEnvelope]:
    found, cursor = reconcile(
        state,
        client,
        REPO,
        now=now,
        mention="holon",
        limit=limit,
        login=HOLON,
        warn=(warned if warned is not None else []).append,
    )
    assert cursor is not None
    state.put(cursor)
    return found


def test_without_a_cursor_a_tick_starts_at_now_and_reads_nothing(
    client: github.Github, repo: Repo, github_server: LoopbackGitHub
) -> None:
    comment(repo, "/holon solve", NOW - timedelta(days=1))
    state = ServeState()
    found, record = reconcile(state, client, REPO, now=NOW, mention="holon", login=HOLON)
    assert found == []
    assert github_server.operations() == []  # no backfill: old commands are not answered again
    assert record is not None
    assert record.data == {"since": iso(NOW), "seen": {}}


def test_comments_since_the_cursor_become_their_live_events(
    client: github.Github, repo: Repo, github_server: LoopbackGitHub
) -> None:
    comment(repo, "/holon solve (before the cursor)", CURSOR - timedelta(seconds=1))
    wanted = comment(repo, "/holon solve", CURSOR + timedelta(minutes=5))
    comment(repo, "/holon solve", CURSOR + timedelta(minutes=6), user=HOLON)  # Holon's own
    state = state_at(CURSOR)
    (env,) = tick(state, client)
    assert env.dedupe_key == f"github:{REPO}:issue_comment.created:{wanted}"
    assert env.type == "github.issue_comment.created"
    assert env.via == "actions"
    assert env.command is not None
    assert env.command.name == "solve"
    assert env.subject is not None
    assert env.subject.key() == "issue:1"
    listed = github_server.last("issues/list-comments-for-repo")
    assert listed.query["since"] == [iso(CURSOR)]
    assert listed.query["sort"] == ["updated"]
    assert listed.query["direction"] == ["asc"]
    assert sorted(env.payload) == ["action", "comment", "issue", "repository", "sender"]
    assert sorted(env.payload["comment"]) == [
        "author_association",
        "body",
        "created_at",
        "id",
        "updated_at",
        "user",
    ]


def test_nothing_at_the_boundary_is_missed_or_repeated(client: github.Github, repo: Repo) -> None:
    state = state_at(CURSOR)
    first = comment(repo, "/holon solve", NOW - timedelta(seconds=30))
    assert [e.payload["comment"]["id"] for e in tick(state, client)] == [first]
    cursor = read_cursor(state, NOW)
    assert cursor is not None
    assert cursor.since == NOW - SETTLE  # a little behind the tick: a late-listed item is read
    assert list(cursor.seen) == [f"github:{REPO}:issue_comment.created:{first}"]
    # The next tick lists the same second again: the first is not repeated; one GitHub listed
    # only now, at the same second, is not missed.
    late = comment(repo, "/holon review", NOW - timedelta(seconds=30))
    later = NOW + timedelta(minutes=5)
    assert [e.payload["comment"]["id"] for e in tick(state, client, later)] == [late]
    assert tick(state, client, later + timedelta(minutes=5)) == []


def test_at_most_limit_per_kind_and_the_rest_next_tick(client: github.Github, repo: Repo) -> None:
    ids = [comment(repo, f"/holon solve {n}", CURSOR + timedelta(minutes=n)) for n in (1, 2, 3)]
    state = state_at(CURSOR)
    assert [e.payload["comment"]["id"] for e in tick(state, client, limit=2)] == ids[:2]
    cursor = read_cursor(state, NOW)
    assert cursor is not None
    assert cursor.since <= CURSOR + timedelta(minutes=2)  # held back where the cut was
    assert [e.payload["comment"]["id"] for e in tick(state, client, limit=2)] == ids[2:]


def test_a_github_error_is_one_warning_and_holds_the_cursor(
    client: github.Github, repo: Repo, github_server: LoopbackGitHub
) -> None:
    wanted = comment(repo, "/holon solve", CURSOR + timedelta(minutes=1))
    state = state_at(CURSOR)
    github_server.fail("issues/list-comments-for-repo", 403)
    warned: list[str] = []
    assert tick(state, client, warned=warned) == []
    (warning,) = warned
    assert warning.startswith("reconcile: comments not read: ")
    assert "\n" not in warning
    cursor = read_cursor(state, NOW)
    assert cursor is not None
    assert cursor.since == CURSOR
    (env,) = tick(state, client)  # the next tick reads it
    assert env.payload["comment"]["id"] == wanted


def test_the_look_back_is_at_most_seven_days(client: github.Github, repo: Repo) -> None:
    comment(repo, "/holon solve", NOW - timedelta(days=8))
    state = state_at(NOW - timedelta(days=30))
    assert tick(state, client) == []
    cursor = read_cursor(state, NOW)
    assert cursor is not None
    assert cursor.since >= NOW - LOOKBACK


@pytest.mark.parametrize(
    "data",
    [
        {"since": "not a time", "seen": {}},
        {"since": iso(NOW + timedelta(days=1)), "seen": {}},
        {"since": iso(CURSOR), "seen": ["a"]},
        {"since": iso(CURSOR), "seen": {"a": "x"}},
        {"since": iso(CURSOR), "seen": {str(n): iso(CURSOR) for n in range(MAX_SEEN + 1)}},
    ],
)
def test_a_cursor_holon_did_not_write_starts_again_from_now(
    client: github.Github, repo: Repo, github_server: LoopbackGitHub, data: dict[str, Any]
) -> None:
    state = ServeState()
    state.put(Record(kind="meta", key=KEY, updated_at=CURSOR, writer="t", data=data))
    warned: list[str] = []
    assert tick(state, client, warned=warned) == []
    assert warned == [
        "reconcile: the stored cursor is not one Holon wrote: starting again from now"
    ]
    assert github_server.operations() == []
    assert read_cursor(state, NOW) is not None


def holon_pull(repo: Repo, opened: datetime) -> tuple[int, str]:
    repo.refs["heads/holon/issue-1"] = repo.put_file("fix.txt", b"fixed\n", "main")
    pull = repo.add_pull("Fix the crash", head="holon/issue-1", user=HOLON)
    pull.created_at = pull.updated_at = iso(opened)
    assert pull.pull is not None
    return pull.number, pull.pull.head_sha


def test_pull_requests_reviews_and_checks_since_the_cursor(
    client: github.Github, repo: Repo, github_server: LoopbackGitHub
) -> None:
    number, sha = holon_pull(repo, CURSOR - timedelta(days=1))
    issue = repo.issues[number]
    issue.updated_at = iso(CURSOR + timedelta(minutes=9))
    assert issue.pull is not None
    issue.pull.reviews += [
        {
            "id": 501,
            "user": "octocat",
            "body": "please fix",
            "state": "CHANGES_REQUESTED",
            "commit_id": sha,
            "submitted_at": iso(CURSOR + timedelta(minutes=7)),
        },
        {
            "id": 502,
            "user": "octocat",
            "body": "old",
            "state": "COMMENTED",
            "commit_id": sha,
            "submitted_at": iso(CURSOR - timedelta(minutes=7)),
        },
    ]
    repo.check_runs[601] = {
        "id": 601,
        "name": "ci",
        "head_sha": sha,
        "status": "completed",
        "conclusion": "failure",
        "completed_at": iso(CURSOR + timedelta(minutes=8)),
        "pull_requests": [{"number": number}],
    }
    state = state_at(CURSOR)
    found = tick(state, client)
    assert [e.type for e in found] == [
        "github.pull_request_review.submitted",
        "github.check_run.completed",
        "github.pull_request.synchronize",
    ]
    review, check, push = found
    assert review.dedupe_key == f"github:{REPO}:pull_request_review.submitted:501"
    assert review.payload["review"]["state"] == "changes_requested"
    assert check.subject is not None
    assert check.subject.pull_requests == [number]
    assert check.payload["check_run"]["conclusion"] == "failure"
    assert push.dedupe_key == f"github:{REPO}:pull_request.synchronize:{number}:{sha}"
    listed = github_server.last("pulls/list")
    assert (listed.query["sort"], listed.query["direction"]) == (["updated"], ["desc"])
    # A head an event of the state has seen is no news.
    state.put(Record(kind="dedupe", key=push.dedupe_key, status="seen", updated_at=NOW, writer="t"))
    issue.updated_at = iso(NOW + timedelta(minutes=1))
    assert tick(state, client, NOW + timedelta(minutes=5)) == []


def test_a_pull_request_opened_since_the_cursor_is_opened(
    client: github.Github, repo: Repo
) -> None:
    repo.refs["heads/feature"] = repo.put_file("f.txt", b"f\n", "main")
    pull = repo.add_pull("A feature", head="feature", user="octocat")
    pull.created_at = pull.updated_at = iso(CURSOR + timedelta(minutes=1))
    (env,) = tick(state_at(CURSOR), client)
    assert env.type == "github.pull_request.opened"
    assert env.actor is not None
    assert env.actor.login == "octocat"


# -- exactly once, through the controller ---------------------------------------------------


def _controller(tmp_path: Path) -> Any:
    ctl = make_controller(tmp_path, permissions={(REPO, "octocat"): "write"})
    ctl.state.put(state_at(CURSOR).get("meta", KEY))  # type: ignore[arg-type]
    return ctl


def _live_comment(repo: Repo, ident: int) -> EventEnvelope:
    """The live `issue_comment` event of the fake's comment `ident` (GitHub's example shape)."""
    made = repo.comments[ident]
    payload = example("issue_comment", "created")
    payload["repository"]["full_name"] = REPO
    payload["issue"]["number"] = made.issue
    payload["issue"].pop("pull_request", None)
    payload["comment"].update(
        id=ident, body=made.body, created_at=made.created_at, author_association="COLLABORATOR"
    )
    payload["comment"]["user"]["login"] = payload["sender"]["login"] = made.user
    return live("issue_comment", payload)


def _solves(ctl: Any) -> list[dict[str, Any]]:
    return [d for d in decisions(ctl) if d["outcome"] == "decided" and d["intents"]]


def test_a_command_a_dropped_run_missed_is_handled_once_by_the_next_tick(
    tmp_path: Path, client: github.Github, repo: Repo
) -> None:
    ctl = _controller(tmp_path)
    comment(repo, "/holon solve", CURSOR + timedelta(minutes=1))  # its run was dropped
    for n in range(3):
        for env in tick(ctl.state, client, NOW + timedelta(minutes=5 * n)):
            ctl.handle(env)
    (solve,) = _solves(ctl)
    assert solve["intents"][0]["args"]["skill"] == "github-issue-solve"
    assert len(decisions(ctl)) == 1  # later ticks did not even report it again


def test_a_command_seen_live_and_again_by_reconciliation_is_handled_once(
    tmp_path: Path, client: github.Github, repo: Repo
) -> None:
    ctl = _controller(tmp_path)
    ident = comment(repo, "/holon solve", CURSOR + timedelta(minutes=1))
    ctl.handle(_live_comment(repo, ident))  # the live run
    assert tick(ctl.state, client) == []  # handled: not even reported
    # The other order: a tick lists it before the live run reaches it.
    other = comment(repo, "/holon solve", CURSOR + timedelta(minutes=2), number=1)
    ctl2 = _controller(tmp_path / "second")
    (env,) = [e for e in tick(ctl2.state, client) if e.payload["comment"]["id"] == other]
    ctl2.handle(env)
    ctl2.handle(_live_comment(repo, other))
    assert [d["outcome"] for d in decisions(ctl2)][-2:] == ["decided", "duplicate"]
    assert len(_solves(ctl)) == 1
    assert len(_solves(ctl2)) == 1


def test_a_failed_check_a_dropped_run_missed_starts_the_fix_on_holons_pr(
    tmp_path: Path, client: github.Github, repo: Repo
) -> None:
    # A failed check on Holon's PR found by a tick starts the fix the live event would have.
    number, sha = holon_pull(repo, CURSOR - timedelta(days=1))
    repo.issues[number].updated_at = iso(CURSOR + timedelta(minutes=3))
    repo.check_runs[701] = {
        "id": 701,
        "name": "ci",
        "head_sha": sha,
        "status": "completed",
        "conclusion": "failure",
        "completed_at": iso(CURSOR + timedelta(minutes=2)),
        "pull_requests": [{"number": number}],
    }
    pulls = {
        (REPO, number): PullFacts(
            approved=False, stale=False, head_sha=sha, head_ref="holon/issue-1", same_repo=True
        )
    }
    ctl = make_controller(tmp_path, pulls=pulls)
    ctl.state.put(state_at(CURSOR).get("meta", KEY))  # type: ignore[arg-type]
    for env in tick(ctl.state, client):
        ctl.handle(env)
    (fix,) = _solves(ctl)
    assert fix["rule"] == "fix-after-failed-check"
    assert fix["intents"][0]["target"] == f"pull_request:{number}"


def test_a_repository_name_github_could_not_have_reads_nothing(
    client: github.Github, github_server: LoopbackGitHub
) -> None:
    warned: list[str] = []
    found = reconcile(
        state_at(CURSOR), client, "../x", now=NOW, mention="holon", warn=warned.append
    )
    assert found == ([], None)
    (warning,) = warned
    assert warning.startswith("reconcile: nothing read: refused a repository name")
    assert github_server.operations() == []
