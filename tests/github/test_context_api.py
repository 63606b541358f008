"""The `github-context` collector through GitHub's REST API (`github_fake`: only GitHub's routes,
its documented bodies): lists read over several pages with the trigger marked, a part GitHub
refuses recorded as missing while the rest is there, a failing job's log tail read through the
documented 302 (without the token), and the diff cut to its bound."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import responses

from holon.github.client import GitHubConfig, make_client
from holon.github.context import Limits, collect_event
from holon.github.context_api import ApiReader
from tests.gateway.conftest import example
from tests.support.github_fake import GitHubFake, routes
from tests.support.github_fake import example as documented

API = "https://api.github.com"
REPO = "Codertocat/Hello-World"
TOKEN = "ghs_" + "c" * 36
LOG_URL = (
    "https://pipelines.actions.githubusercontent.com/ab1f3cCFPB34Nd6imvFxpGZH5hNlDp2wijMwl2gDoO0b"
    "crrlJj/_apis/pipelines/1/runs/19/signedlogcontent/2?urlExpires=2020-01-22T22%3A44%3A54.1389"
    "777Z&urlSigningMethod=HMACV1&urlSignature=2TUDfIg4fm36OJmfPy6km5QD5DLCOkBVzvhWZM8B%2BUY%3D"
)


def reader(pages: int = 10) -> ApiReader:
    config = GitHubConfig.model_validate({"api_url": API, "token": TOKEN, "write_spacing": 0.0})
    return ApiReader(make_client(config, sleep=lambda seconds: None), REPO, pages=pages)


def body_of(operation: str) -> Any:
    return documented(routes().find(operation))[1]


def comments(ids: range | list[int]) -> list[dict[str, Any]]:
    (model,) = body_of("issues/list-comments")
    found = []
    for ident in ids:
        item = copy.deepcopy(model)
        item.update(id=ident, body=f"comment {ident}")
        found.append(item)
    return found


def next_link(path: str, page: int) -> dict[str, str]:
    return {"Link": f'<{API}{path}?per_page=100&page={page}>; rel="next"'}


def manifest_of(dest: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((dest / "manifest.json").read_text())
    return data


def test_comments_are_read_over_every_page_and_the_trigger_is_marked(
    github_fake: GitHubFake, tmp_path: Path
) -> None:
    payload = example("issue_comment", "created")
    trigger = payload["comment"]["id"]
    path = f"/repos/{REPO}/issues/1/comments"
    github_fake.on("issues/get")
    github_fake.on("issues/list-comments", body=comments(range(1, 101)), headers=next_link(path, 2))
    github_fake.on(
        "issues/list-comments", body=comments(range(101, 201)), headers=next_link(path, 3)
    )
    last = comments([201, trigger])
    last[1]["body"] = payload["comment"]["body"]  # the trigger, unedited since the event
    github_fake.on("issues/list-comments", body=last)
    collect_event("issue_comment", payload, tmp_path / "c", reader=reader())
    found = json.loads((tmp_path / "c" / "comments.json").read_text())
    assert [c["id"] for c in found] == [*range(1, 202), trigger]
    assert [c["id"] for c in found if c["trigger"]] == [trigger]
    assert github_fake.count("issues/list-comments") == 3
    # The second and third requests are GitHub's own next links, query and all.
    assert [c.query.get("page") for c in github_fake.calls[1:]] == [None, ["2"], ["3"]]
    data = manifest_of(tmp_path / "c")
    assert {p["name"]: p["source"] for p in data["present"]} == {"issue": "api", "comments": "api"}
    assert data["missing"] == []


def test_a_list_longer_than_the_bound_is_read_in_part_and_says_so(
    github_fake: GitHubFake, tmp_path: Path
) -> None:
    payload = example("issue_comment", "created")
    path = f"/repos/{REPO}/issues/1/comments"
    github_fake.on("issues/get")
    github_fake.on("issues/list-comments", body=comments(range(1, 101)), headers=next_link(path, 2))
    collect_event("issue_comment", payload, tmp_path / "c", reader=reader(pages=2))
    assert github_fake.count("issues/list-comments") == 2  # never a third
    found = json.loads((tmp_path / "c" / "comments.json").read_text())
    # The trigger was not among the 200 read: it is added from the payload, marked.
    assert len(found) == 201
    assert found[-1]["trigger"] is True
    missing = {g["name"]: g["reason"] for g in manifest_of(tmp_path / "c")["missing"]}
    assert missing == {"comments (more)": "more than 200 items: the rest not read"}


def _pull_request(fake: GitHubFake, diff: str = "diff --git a/x b/x\n") -> None:
    """Every route of a pull request's context but the review comments."""
    fake.on("pulls/get")  # the pull request, then its diff (the same route, another Accept)
    fake.on("pulls/get", body=diff, headers={"Content-Type": "text/plain; charset=utf-8"})
    fake.on("issues/list-comments")
    fake.on("pulls/list-reviews")
    fake.on("pulls/list-files")
    fake.on("pulls/list-commits")


def test_a_part_github_refuses_is_missing_and_the_rest_is_there(
    github_fake: GitHubFake, tmp_path: Path
) -> None:
    payload = example("pull_request", "opened")
    live = body_of("pulls/get")
    # The pull request is the trigger: unedited since the event (frozen inputs).
    payload["pull_request"].update(title=live["title"], body=live["body"])
    _pull_request(github_fake)
    github_fake.on("pulls/list-review-comments", status=403)
    github_fake.on("checks/list-for-ref")
    collect_event("pull_request", payload, tmp_path / "c", reader=reader())
    data = manifest_of(tmp_path / "c")
    present = {p["name"] for p in data["present"]}
    assert present == {
        "pull_request", "comments", "reviews", "files", "diff", "commits", "checks",
    }  # fmt: skip
    assert all(p["source"] == "api" for p in data["present"])
    (refused,) = data["missing"]
    assert refused["name"] == "review_threads"
    assert "403" in refused["reason"]
    assert "pull-requests: read" in refused["reason"]
    # The documented pull request, its diff asked for as a diff.
    pull = (tmp_path / "c" / "pull_request.md").read_text()
    assert "Amazing new feature" in pull
    assert "head: new-topic at 6dcb09b" in pull
    assert (tmp_path / "c" / "diff.patch").read_text() == "diff --git a/x b/x\n"
    diff_call = [c for c in github_fake.calls if c.operation == "pulls/get"][1]
    assert diff_call.headers["Accept"] == "application/vnd.github.diff"
    (changed,) = json.loads((tmp_path / "c" / "files.json").read_text())
    assert changed["path"] == "file1.txt"
    assert changed["status"] == "added"


def test_a_failing_jobs_log_tail_is_read_through_the_redirect_without_the_token(
    github_fake: GitHubFake, tmp_path: Path
) -> None:
    payload = example("pull_request", "opened")
    _pull_request(github_fake)
    github_fake.on("pulls/list-review-comments")
    (run,) = body_of("checks/list-for-ref")["check_runs"]
    job = copy.deepcopy(run)
    job.update(id=399444496, name="test", conclusion="failure")
    job["app"]["slug"] = "github-actions"
    other = copy.deepcopy(run)
    other.update(id=5, name="lint", conclusion="failure")  # another app's check
    github_fake.on("checks/list-for-ref", body={"total_count": 2, "check_runs": [job, other]})
    github_fake.on(
        "actions/download-job-logs-for-workflow-run",
        status=302,
        body=None,
        headers={"Location": LOG_URL},
    )
    lines = [f"2020-01-20T17:42:40Z step line {n}\n" for n in range(20_000)]
    log = "".join(lines) + "\x1b[31mError: 1 test failed ghp_" + "a" * 36 + "\x1b[0m\n"
    github_fake.mock.add(responses.GET, LOG_URL, body=log.encode(), status=200)
    collect_event(
        "pull_request", payload, tmp_path / "c", reader=reader(), limits=Limits(log_bytes=4096)
    )
    tail = (tmp_path / "c" / "logs" / "399444496.txt").read_text()
    assert tail.startswith("[... the log's earlier lines left out: its last ")
    assert tail.splitlines()[1].startswith("2020-01-20T17:42:40Z step line ")  # a whole line
    assert "step line 19999" in tail
    assert "step line 100\n" not in tail
    assert "Error: 1 test failed" in tail
    assert "\x1b" not in tail
    assert "ghp_" + "a" * 36 not in tail
    assert len(tail.encode()) <= 4096 + 200
    downloads = [c for c in github_fake.mock.calls if c.request.url == LOG_URL]
    assert len(downloads) == 1
    assert "Authorization" not in downloads[0].request.headers  # the token stays with GitHub
    data = manifest_of(tmp_path / "c")
    assert {"name": "logs", "path": "logs/399444496.txt"}.items() <= next(
        p for p in data["present"] if p["name"] == "logs"
    ).items()
    missing = {g["name"]: g["reason"] for g in data["missing"]}
    assert "not a GitHub Actions job" in missing["logs/5.txt"]


def test_a_refused_log_is_missing_not_fatal(github_fake: GitHubFake, tmp_path: Path) -> None:
    payload = example("pull_request", "opened")
    _pull_request(github_fake)
    github_fake.on("pulls/list-review-comments")
    (run,) = body_of("checks/list-for-ref")["check_runs"]
    run.update(id=7, conclusion="timed_out")
    run["app"]["slug"] = "github-actions"
    github_fake.on("checks/list-for-ref", body={"total_count": 1, "check_runs": [run]})
    github_fake.on("actions/download-job-logs-for-workflow-run", status=403)
    collect_event("pull_request", payload, tmp_path / "c", reader=reader())
    missing = {g["name"]: g["reason"] for g in manifest_of(tmp_path / "c")["missing"]}
    assert "actions: read" in missing["logs/7.txt"]
    assert (tmp_path / "c" / "checks.json").is_file()


@pytest.mark.parametrize("size", [3_000_000])
def test_the_diff_is_cut_to_its_bound_at_a_line(
    github_fake: GitHubFake, tmp_path: Path, size: int
) -> None:
    payload = example("pull_request", "opened")
    big = "".join(f"+line {n} of a large change\n" for n in range(size // 25))
    _pull_request(github_fake, diff=big)
    github_fake.on("pulls/list-review-comments")
    github_fake.on("checks/list-for-ref")
    limits = Limits(diff_bytes=10_000)
    collect_event("pull_request", payload, tmp_path / "c", reader=reader(), limits=limits)
    patch = (tmp_path / "c" / "diff.patch").read_bytes()
    assert 9_000 < len(patch) <= 10_000
    assert patch.endswith(b"\n")
    assert big.encode().startswith(patch)
    missing = {g["name"]: g["reason"] for g in manifest_of(tmp_path / "c")["missing"]}
    assert missing["diff (rest)"] == f"the diff is {len(big)} bytes: cut to its first {len(patch)}"


def test_a_diff_github_finds_too_large_is_missing(github_fake: GitHubFake, tmp_path: Path) -> None:
    payload = example("pull_request", "opened")
    github_fake.on("pulls/get")
    github_fake.on(
        "pulls/get",
        status=406,
        body={"message": "Sorry, the diff exceeded the maximum number of lines (20000)"},
    )
    for operation in (
        "issues/list-comments", "pulls/list-reviews", "pulls/list-review-comments",
        "pulls/list-files", "pulls/list-commits", "checks/list-for-ref",
    ):  # fmt: skip
        github_fake.on(operation)
    collect_event("pull_request", payload, tmp_path / "c", reader=reader())
    missing = {g["name"]: g["reason"] for g in manifest_of(tmp_path / "c")["missing"]}
    assert "406" in missing["diff"]
    assert "maximum number of lines" in missing["diff"]
    assert not (tmp_path / "c" / "diff.patch").exists()
