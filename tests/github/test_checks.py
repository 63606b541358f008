"""The `Holon` check run on a pull request's head: in progress while Holon works, completed with
the closure table's conclusion and the handoff as its summary, found again by app and marker."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from holon.closure.mapping import TABLE
from holon.github.body import SUMMARY_LIMIT, size
from holon.github.checks import settle_check, start_check
from holon.github.effects import CrossRepository, EffectRefused, Scope, Subject
from holon.github.errors import NotFound, PermissionDenied, ServerError
from holon.github.marker import format_marker, parse_marker
from tests.github.effect_scope import PULL, REPO, RUN_URL, SKILL, handoff, scope_on
from tests.support.github_fake import GitHubFake, LoopbackGitHub, example, routes
from tests.support.github_fake.state import Repo

APP = "octoapp[bot]"  # the loopback GitHub's check runs are by its documented example's app
MARK = format_marker("pull_request", "2", "holon", SKILL)


@pytest.fixture
def state(github_server: LoopbackGitHub) -> Repo:
    repo = github_server.state.repos[REPO]
    repo.refs["heads/holon/issue-1"] = repo.put_file("fix.txt", b"fixed\n", "main")
    repo.add_issue("Crash on start")  # 1
    repo.add_pull("Fix the crash", head="holon/issue-1")  # 2
    return repo


@pytest.fixture
def sha(state: Repo) -> str:
    return state.refs["heads/holon/issue-1"]


@pytest.fixture
def scope(github_server: LoopbackGitHub, state: Repo) -> Iterator[Scope]:
    with scope_on(github_server.url, login=APP) as made:
        yield made


def test_start_creates_an_in_progress_check_run(
    scope: Scope, state: Repo, sha: str, github_server: LoopbackGitHub
) -> None:
    outcome = start_check(scope, PULL, sha, skill=SKILL, run_url=RUN_URL)
    assert outcome.performed
    assert github_server.operations() == ["checks/list-for-ref", "checks/create"]
    assert github_server.calls[0].query["check_name"] == ["Holon"]
    [run] = state.check_runs.values()
    assert run["name"] == "Holon"
    assert run["head_sha"] == sha
    assert run["status"] == "in_progress"
    assert run["details_url"] == RUN_URL
    assert run["output"]["title"] == "Holon: working"
    assert run["output"]["summary"].startswith(MARK + "\n")
    assert outcome.output["check_run_id"] == run["id"]


@pytest.mark.parametrize(
    ("name", "conclusion"),
    [
        ("completed_success", "success"),
        ("failed_run", "failure"),
        ("timed_out_run", "failure"),
        ("question", "action_required"),
        ("cancelled_workflow", "neutral"),
        ("operator_decision", "action_required"),
        ("timer", "neutral"),
        ("runnable", "neutral"),
    ],
)
def test_settle_completes_it_with_the_tables_conclusion(
    scope: Scope,
    state: Repo,
    sha: str,
    github_server: LoopbackGitHub,
    name: str,
    conclusion: str,
) -> None:
    start_check(scope, PULL, sha, skill=SKILL, run_url=RUN_URL)
    github_server.calls.clear()
    done = handoff(name, subject={"kind": "pull_request", "id": "2"})
    assert done.report.check_conclusion == conclusion  # the table in holon/closure/mapping.py
    outcome = settle_check(scope, PULL, sha, done)
    assert outcome.performed
    # The start created it in this process: its id is known, the settle is the update alone.
    assert github_server.operations() == ["checks/update"]
    [run] = state.check_runs.values()
    assert (run["status"], run["conclusion"]) == ("completed", conclusion)
    assert run["output"]["title"] == f"Holon: {done.outcome or 'continuing'}"
    summary = run["output"]["summary"]
    assert parse_marker(summary) == parse_marker(MARK)
    assert "| outcome | closure |" in summary  # the handoff's summary rendering


def test_a_settle_in_another_process_looks_the_check_run_up(
    scope: Scope, state: Repo, sha: str, github_server: LoopbackGitHub
) -> None:
    started = start_check(scope, PULL, sha, skill=SKILL, run_url=RUN_URL)
    github_server.calls.clear()
    with scope_on(github_server.url, login=APP) as fresh:
        outcome = settle_check(fresh, PULL, sha, handoff("failed_run"))
    assert outcome.output["check_run_id"] == started.output["check_run_id"]
    assert github_server.operations() == ["checks/list-for-ref", "checks/update"]


def test_every_conclusion_of_the_table_is_one_github_takes() -> None:
    takes = {"success", "failure", "neutral", "cancelled", "skipped", "timed_out"}
    assert {row.check_conclusion for row in TABLE.values()} <= takes | {"action_required"}


def test_settling_twice_writes_once(scope: Scope, sha: str, github_server: LoopbackGitHub) -> None:
    settle_check(scope, PULL, sha, handoff("failed_run"))
    github_server.calls.clear()
    again = settle_check(scope, PULL, sha, handoff("failed_run"))
    assert not again.performed
    assert github_server.operations() == ["checks/list-for-ref"]


def test_a_new_start_after_completion_is_a_new_check_run(
    scope: Scope, state: Repo, sha: str
) -> None:
    start_check(scope, PULL, sha, skill=SKILL)
    settle_check(scope, PULL, sha, handoff("failed_run"))
    restarted = start_check(scope, PULL, sha, skill=SKILL)
    settled = settle_check(scope, PULL, sha, handoff("completed_success"))
    assert settled.output["check_run_id"] == restarted.output["check_run_id"]
    statuses = [(r["status"], r["conclusion"]) for r in state.check_runs.values()]
    assert statuses == [("completed", "failure"), ("completed", "success")]


def test_a_check_run_without_holons_marker_is_not_taken(
    scope: Scope, state: Repo, sha: str
) -> None:
    other = {"id": 1, "name": "Holon", "head_sha": sha, "status": "in_progress"}
    state.check_runs[1] = {**other, "conclusion": None, "output": {"summary": "not Holon's"}}
    start_check(scope, PULL, sha, skill=SKILL)
    assert len(state.check_runs) == 2
    assert state.check_runs[1]["status"] == "in_progress"


def test_the_summary_stays_within_githubs_limit(scope: Scope, state: Repo, sha: str) -> None:
    settle_check(scope, PULL, sha, handoff("failed_run", details="log line\n" * 20_000))
    [run] = state.check_runs.values()
    assert size(run["output"]["summary"]) <= SUMMARY_LIMIT
    assert "65,535 characters" in run["output"]["summary"]


def test_a_login_that_is_not_an_apps_is_refused(github_server: LoopbackGitHub, sha: str) -> None:
    for login, why in [("octocat", "only a GitHub App"), (None, "HOLON_GITHUB_LOGIN")]:
        with (
            scope_on(github_server.url, login=login) as scope,
            pytest.raises(EffectRefused, match=why),
        ):
            start_check(scope, PULL, sha, skill=SKILL)
    assert github_server.calls == []


@pytest.mark.parametrize("bad", ["main", "A" * 40, "0" * 39, "0" * 40 + "\n"])
def test_a_head_that_is_not_a_full_sha_is_refused(
    scope: Scope, github_server: LoopbackGitHub, bad: str
) -> None:
    with pytest.raises(EffectRefused, match="not a full commit sha"):
        start_check(scope, PULL, bad, skill=SKILL)
    assert github_server.calls == []


def test_another_repository_is_refused(scope: Scope, sha: str) -> None:
    with pytest.raises(CrossRepository):
        start_check(scope, Subject("other/repo", "pull_request", 2), sha, skill=SKILL)


def test_403_names_the_checks_permission(
    scope: Scope, sha: str, github_server: LoopbackGitHub
) -> None:
    github_server.fail("checks/create", 403)
    with pytest.raises(PermissionDenied, match=r"permissions: checks: write"):
        start_check(scope, PULL, sha, skill=SKILL)


def test_a_404_on_the_create_names_the_checks_permission(
    scope: Scope, sha: str, github_server: LoopbackGitHub
) -> None:
    github_server.fail("checks/create", 404)
    with pytest.raises(NotFound, match=r"`permissions: checks: write`") as caught:
        start_check(scope, PULL, sha, skill=SKILL)
    assert caught.value.permission == "checks: write"


# Against `responses`: another app's check run, and a 5xx after GitHub created one.

SHA = "a" * 40


def _run(fake: GitHubFake, id: int, app: str, summary: str, status: str) -> dict[str, Any]:
    _, body = example(routes().find("checks/get"), fake.base_url)
    body = {**body, "id": id, "name": "Holon", "status": status, "conclusion": None}
    body["app"] = {**body["app"], "slug": app}
    body["output"] = {**body["output"], "title": "Holon: working", "summary": summary}
    return body


@pytest.fixture
def remote(github_fake: GitHubFake) -> Iterator[Scope]:
    with scope_on(github_fake.base_url, login="github-actions[bot]") as made:
        yield made


def test_another_apps_check_run_with_the_marker_is_ignored(
    github_fake: GitHubFake, remote: Scope
) -> None:
    forged = _run(github_fake, 9, "mallory-app", MARK + "\nforged", "in_progress")
    github_fake.on("checks/list-for-ref", body={"total_count": 1, "check_runs": [forged]})
    github_fake.on("checks/create", body=_run(github_fake, 10, "github-actions", MARK, "queued"))
    start_check(remote, PULL, SHA, skill=SKILL)
    assert github_fake.operations() == ["checks/list-for-ref", "checks/create"]


def test_a_502_after_github_created_finds_it_and_never_creates_twice(
    github_fake: GitHubFake, remote: Scope
) -> None:
    created = _run(github_fake, 11, "github-actions", MARK + "\nx", "in_progress")
    github_fake.on("checks/list-for-ref", body={"total_count": 0, "check_runs": []})
    github_fake.on("checks/list-for-ref", body={"total_count": 1, "check_runs": [created]})
    github_fake.on("checks/create", status=502)
    github_fake.on("checks/update", body=created)
    outcome = start_check(remote, PULL, SHA, skill=SKILL)
    assert outcome.output["check_run_id"] == 11
    assert github_fake.count("checks/create") == 1
    assert github_fake.operations()[:3] == [
        "checks/list-for-ref",
        "checks/create",
        "checks/list-for-ref",
    ]


def test_a_502_when_github_did_not_create_fails_without_creating_again(
    github_fake: GitHubFake, remote: Scope
) -> None:
    github_fake.on("checks/list-for-ref", body={"total_count": 0, "check_runs": []})
    github_fake.on("checks/create", status=502)
    with pytest.raises(ServerError, match="no new check run with its marker was found"):
        start_check(remote, PULL, SHA, skill=SKILL)
    assert github_fake.count("checks/create") == 1
