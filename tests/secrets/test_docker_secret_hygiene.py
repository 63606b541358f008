"""Secret hygiene of the `holon action` story with `--runtime docker` (HOLON_RUNTIME=docker): the
secrets of tests/secrets/test_secret_hygiene.py planted in the same channels, the agent in a
container on the local engine, and the same places scanned afterwards.

The agent (tests/secrets/agent/leak.sh, in a busybox image built here) says every secret it can
see: the model keys, which the `claude-code` engine is given in its container (the worst case:
no key proxy in between), and the token pasted into the issue, from its context. Out they go,
plain and encoded, through its stdout and stderr (the container's log: run.log, the step's
log), summary.md (which the pull request quotes), a nested output file, its manifest (a field
name and value, the summary) and the workspace: a text file (the patch must be refused, the run
fail) or a binary one (which `git diff` writes deflated, where no scan of the patch sees it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.secrets import scan
from tests.secrets.leak_image import build_leak_image
from tests.secrets.scan import EVERY, FORWARDED, ISSUE_SECRET
from tests.support.actions_env import ActionsEnv
from tests.support.github_fake.loopback import LoopbackGitHub

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def leak_image(docker_client: Any) -> str:
    from tests.support.images import ImageUnavailable

    try:
        return build_leak_image(docker_client)
    except ImageUnavailable as exc:
        if os.environ.get("HOLON_REQUIRE_DOCKER") == "1":
            pytest.fail(f"HOLON_REQUIRE_DOCKER=1 but the test image cannot be built: {exc}")
        pytest.skip(f"the test image cannot be built: {exc}")


def _story(
    server: LoopbackGitHub, tmp_path: Path, image: str, workspace: str
) -> tuple[ActionsEnv, list[str], int]:
    step = ActionsEnv(tmp_path, server)
    issue = step.add_issue(body=f"`add(2, 3)` returns -1. My token is {ISSUE_SECRET} if needed.")
    step.comment_event(issue.number, f"/holon solve\n\nuse {ISSUE_SECRET} to push")
    step.extra.update({k: v for k, v in EVERY.items() if k != "GITHUB_TOKEN"})
    step.extra.update(
        {
            "HOLON_RUNTIME": "docker",
            "HOLON_AGENT_IMAGE": image,
            "HOLON_ENGINE": "claude-code",  # the keys go into the container, not to a proxy
            "HOLON_MODEL": workspace,  # what leak.sh leaves in the workspace
            "HOLON_CACHE_DIR": str(step.runner_temp / "holon" / "cache"),
            "HOLON_BUNDLE_DIR": str(step.runner_temp / "holon" / "bundles"),
        }
    )
    done = step.run(timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return step, [done.stdout, done.stderr], done.returncode


def _places(step: ActionsEnv, logs: list[str], server: LoopbackGitHub) -> list[tuple[str, bytes]]:
    stdout, stderr = logs
    return [
        ("stdout", scan.step_log(stdout)),
        ("stderr", stderr.encode()),
        ("GITHUB_OUTPUT", step.output_file.read_bytes()),
        ("GITHUB_STEP_SUMMARY", step.summary_file.read_bytes()),
        *scan.files(step.runner_temp / "holon"),
        *scan.github_texts(server, step),
    ]


def _published(
    step: ActionsEnv, logs: list[str], server: LoopbackGitHub
) -> list[tuple[str, bytes]]:
    """What Holon itself publishes (not the live state, which keeps the event as sent)."""
    holon = step.runner_temp / "holon"
    stdout, stderr = logs
    writes = [
        (f"request {n} {c.method} {c.path}", c.body)
        for n, c in enumerate(server.calls)
        if c.method in ("POST", "PATCH", "PUT")
    ]
    return [
        ("stdout", scan.step_log(stdout)),
        ("stderr", stderr.encode()),
        ("GITHUB_OUTPUT", step.output_file.read_bytes()),
        ("GITHUB_STEP_SUMMARY", step.summary_file.read_bytes()),
        *scan.files(holon / "upload", holon / "cache", holon / "bundles"),
        *writes,
    ]


def _assert_clean(step: ActionsEnv, logs: list[str], server: LoopbackGitHub) -> None:
    found = [
        hit for where, data in _places(step, logs, server) for hit in scan.leaks(EVERY, where, data)
    ]
    secret = {"issue text": ISSUE_SECRET}
    found += [
        hit
        for where, data in _published(step, logs, server)
        for hit in scan.leaks(secret, where, data)
    ]
    # The run records: token-shaped words masked where written (plain form, as the local test).
    found += [
        f"issue text (plain) in {where}"
        for where, data in scan.files(step.runner_temp / "holon" / "runs")
        if ISSUE_SECRET.encode() in data
    ]
    assert not found, "\n".join(found)


def _run_log(step: ActionsEnv) -> str:
    logs = sorted((step.runner_temp / "holon" / "runs").rglob("run.log"))
    assert logs, "the run left no run.log"
    return "\n".join(p.read_text(errors="replace") for p in logs)


def _refused(step: ActionsEnv, code: int, logs: list[str]) -> None:
    """The run failed because its patch held a forwarded key; nothing was proposed."""
    assert code == 1, logs
    assert not [i for i in step.repo.issues.values() if i.pull is not None]
    told = "\n".join([*step.holon_comments(1), step.outputs().get("handoff", "")])
    assert "diff.patch refused: it holds the value of forwarded secret(s) " in told, told


def _said_it(step: ActionsEnv) -> None:
    """Not vacuous: the agent ran in its container and said the keys (masked in its log)."""
    log = _run_log(step)
    assert "what I was given:" in log
    for name in FORWARDED:
        assert f"{name}=***" in log, log[:2000]


def test_secrets_a_container_agent_says_leave_the_step_in_no_form(
    github_server: LoopbackGitHub, tmp_path: Path, leak_image: str
) -> None:
    # The agent also wrote the keys to a text file in its workspace.
    step, logs, code = _story(github_server, tmp_path, leak_image, "leak-text")
    _refused(step, code, logs)
    _said_it(step)
    _assert_clean(step, logs, github_server)


def test_a_binary_file_holding_the_keys_is_refused_like_a_text_one(
    github_server: LoopbackGitHub, tmp_path: Path, leak_image: str
) -> None:
    # `git diff --binary` deflates the file: the keys are in no line of the patch's text.
    step, logs, code = _story(github_server, tmp_path, leak_image, "leak-binary")
    _refused(step, code, logs)
    _said_it(step)
    _assert_clean(step, logs, github_server)


def test_a_published_change_carries_none_of_what_the_agent_said(
    github_server: LoopbackGitHub, tmp_path: Path, leak_image: str
) -> None:
    # The workspace holds the fix only: the run succeeds and its pull request (title, body
    # quoting summary.md, commit, blobs) and check runs are published.
    step, logs, code = _story(github_server, tmp_path, leak_image, "fix-only")
    assert code == 0, logs
    assert [i for i in step.repo.issues.values() if i.pull is not None], logs
    _said_it(step)
    _assert_clean(step, logs, github_server)
