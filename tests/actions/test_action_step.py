"""`holon action` as its own process in a simulated Actions step (real event files from GitHub's
examples, real GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files) against the loopback GitHub, with
the local runtime and the replay engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from holon.actions.event import NO_EVENT
from holon.actions.single import FORK_HEAD
from holon.actions.step import DONE_MARKER
from tests.actions.step_support import REPO, TOKEN, Step, payload, project
from tests.github.publish_support import seed
from tests.support.github_fake.loopback import LoopbackGitHub

APP = "octoapp[bot]"
REPLAY = {"HOLON_ENGINE": "replay", "HOLON_REPLAY_SESSION": "example:solve-calc"}


def _comment(body: str, user: str = "Codertocat", number: int = 1, ident: int = 7) -> Any:
    def change(data: dict[str, Any]) -> None:
        data["comment"].update(body=body, id=ident)
        data["comment"]["user"]["login"] = user
        data["issue"]["number"] = number

    return change


def _github_has(repo: Any, workspace: Path) -> None:
    """GitHub holds the commit the workspace is at (the checkout came from it)."""
    import subprocess

    files = {p.name: p.read_bytes() for p in workspace.iterdir() if p.is_file()}
    base = seed(repo, files)
    head = subprocess.run(
        ["git", "-C", str(workspace), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    repo.objects[head] = repo.objects[base]
    repo.refs["heads/main"] = head


def holon_comments(repo: Any) -> list[Any]:
    """Holon's comments on the fake (the maintainer's command is there too)."""
    return [c for c in repo.comments.values() if c.user != "Codertocat"]


def _solve_step(github_server: Any, tmp_path: Path) -> tuple[Step, Any]:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    repo.permissions["Codertocat"] = "write"
    workspace = project(tmp_path)
    _github_has(repo, workspace)
    # The command is on GitHub, as the event says (publishing reads it again first).
    trigger = repo.add_comment(1, "/holon solve", "Codertocat")
    data = payload("issue_comment", "created", c=_comment("/holon solve", ident=trigger.id))
    step = Step(tmp_path / "step", "issue_comment", data, server=github_server, workspace=workspace)
    step.env.update(REPLAY)
    return step, repo


def test_a_solve_command_is_decided_run_published_and_handed_off(
    github_server: Any, tmp_path: Path
) -> None:
    step, repo = _solve_step(github_server, tmp_path)
    done = step.run(ACTIONS_RUNTIME_TOKEN="rt-secret", ANTHROPIC_API_KEY="sk-ant-secret-key")
    assert done.returncode == 0, done.stdout + done.stderr
    # Every secret is masked before any other line.
    lines = done.stdout.splitlines()
    assert lines[:2] == [f"::add-mask::{TOKEN}", "::add-mask::sk-ant-secret-key"]
    assert lines[-1].startswith("holon action: exit 0: issue:1 completed")
    outputs = step.outputs()
    assert outputs["closure_outcome"] == "completed"
    assert (outputs["waiting_reason"], outputs["lifecycle_outcome"]) == ("", "finished")
    runs = json.loads(outputs["runs"])
    assert [r["skill"] for r in runs] == ["github-issue-solve", "github-publish"]
    assert runs[0]["outcome"] == "success"
    assert Path(runs[0]["output"]).is_dir()
    handoff = json.loads(outputs["handoff"])
    assert handoff["outcome"] == "finished"
    (pull,) = [i for i in repo.issues.values() if i.pull is not None]
    assert handoff["context"]["artifacts"][0]["name"] == f"pull request #{pull.number}"
    # One comment: the progress note, settled in place with the handoff.
    (comment,) = holon_comments(repo)
    assert outputs["comment_url"].endswith(f"#issuecomment-{comment.id}")
    assert "finished" in comment.body
    (posted,) = [c for c in github_server.calls if c.operation == "issues/create-comment"]
    assert f"https://github.com/{REPO}/actions/runs/4242" in posted.body.decode()
    summary = step.summary()
    assert "| issue\\:1 | completed |  | finished | success |" in summary
    assert "rule solve\\-issue\\-command matched" in summary
    assert "```mermaid\nflowchart LR\n" in summary
    assert "rt-secret" not in done.stdout + done.stderr + summary
    assert (step.state_dir / DONE_MARKER).read_text().strip() == "4242-1"
    assert (step.runner_temp / "holon/upload/state.json").is_file()
    # The cleanup phase after a finished main step does nothing.
    after = step.run(HOLON_PHASE="cleanup")
    assert after.returncode == 0, after.stderr
    assert "nothing to settle" in after.stdout
    # Settled once, after the pull request existed (never `finished` before it).
    assert github_server.count("issues/update-comment") == 1


def test_a_missing_event_path_is_one_line_and_exit_64(tmp_path: Path) -> None:
    step = Step(tmp_path, "issue_comment", {})
    done = step.run(GITHUB_EVENT_PATH="")
    assert done.returncode == 64
    assert done.stderr.strip() == f"holon: error: {NO_EVENT}"
    assert step.outputs()["closure_outcome"] == ""  # the outputs exist, empty
    assert "GITHUB\\_EVENT\\_PATH is not set" in step.summary()


def test_a_bad_input_value_is_one_line_naming_it(tmp_path: Path) -> None:
    step = Step(tmp_path, "issue_comment", payload("issue_comment", "created"))
    done = step.run(HOLON_DRY_RUN="yes")
    assert done.returncode == 64
    assert done.stderr.strip() == "holon: error: HOLON_DRY_RUN: expected true or false, not 'yes'"
    assert "Traceback" not in done.stderr


def test_an_event_the_workflow_did_not_expect_does_no_work(
    github_server: Any, tmp_path: Path
) -> None:
    step = Step(tmp_path, "deployment", payload("deployment", "created"), server=github_server)
    done = step.run()
    assert done.returncode == 0, done.stderr
    assert github_server.state.repos[REPO].comments == {}
    assert step.outputs()["closure_outcome"] == ""
    assert step.outputs()["runs"] == "[]"
    summary = step.summary()
    assert "no rule matches github\\.deployment\\.created" in summary
    assert "No work" in summary


def test_a_command_from_a_user_without_write_access_gets_one_polite_refusal(
    github_server: Any, tmp_path: Path
) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    data = payload("issue_comment", "created", c=_comment("/holon solve", user="stranger"))
    step = Step(tmp_path, "issue_comment", data, server=github_server, workspace=project(tmp_path))
    step.env.update(REPLAY)
    done = step.run()
    assert done.returncode == 0, done.stderr
    (comment,) = repo.comments.values()
    assert "only takes commands from people with write access" in comment.body
    assert step.outputs()["runs"] == "[]"
    assert "authority" in step.summary()
    again = step.run()  # a redelivery: still one comment
    assert again.returncode == 0
    assert len(repo.comments) == 1


def test_help_gets_only_its_usage_reply(github_server: Any, tmp_path: Path) -> None:
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    repo.permissions["Codertocat"] = "write"
    data = payload("issue_comment", "created", c=_comment("/holon help"))
    step = Step(tmp_path, "issue_comment", data, server=github_server)
    done = step.run()
    assert done.returncode == 0, done.stderr
    (comment,) = repo.comments.values()
    assert "skill=reply.usage" in comment.body  # the usage reply, no progress comment
    assert github_server.count("checks/create") == 0
    assert step.outputs()["handoff"] == ""


def _fork_pull(head_sha: str) -> Any:
    def change(data: dict[str, Any]) -> None:
        pull = data["pull_request"]
        pull["head"]["sha"] = head_sha
        pull["head"]["repo"] = dict(pull["head"]["repo"], id=999, full_name="fork/Hello-World")

    return change


def test_a_privileged_run_on_a_forks_checked_out_head_is_refused(
    github_server: Any, tmp_path: Path
) -> None:
    import subprocess

    workspace = project(tmp_path)
    head = subprocess.run(
        ["git", "-C", str(workspace), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    data = payload("pull_request", "opened", c=_fork_pull(head))
    step = Step(tmp_path / "s", "pull_request_target", data, server=github_server)
    step.workspace = workspace
    done = step.run()
    assert done.returncode == 64
    assert done.stderr.strip() == f"holon: error: {FORK_HEAD}"
    assert github_server.calls == []
    # The base checked out (another commit): the run goes on.
    data = payload("pull_request", "opened", c=_fork_pull("0" * 40))
    step = Step(tmp_path / "t", "pull_request_target", data, server=github_server)
    step.workspace = workspace
    assert step.run().returncode == 0


def test_a_token_without_a_permission_is_one_clear_line_and_exit_1(
    github_server: Any, tmp_path: Path
) -> None:
    step, repo = _solve_step(github_server, tmp_path)
    github_server.fail(
        "issues/create-comment",
        403,
        {"message": "Resource not accessible by integration", "status": "403"},
        times=10,
    )
    done = step.run()
    assert done.returncode == 1, done.stdout + done.stderr
    assert holon_comments(repo) == []
    # One clear line: the cause, once, as an error annotation, naming the permission.
    (said,) = [x for x in done.stdout.splitlines() if "progress not written" in x]
    assert said.startswith("::error::GitHub: progress not written: GitHub refused")
    assert "403" in said
    assert "permissions: issues: write" in said
    assert "progress not written" in step.summary()
    assert TOKEN not in done.stdout.replace(f"::add-mask::{TOKEN}", "") + done.stderr
    assert "Traceback" not in done.stderr


def test_a_dry_run_still_hands_off(tmp_path: Path) -> None:
    workspace = project(tmp_path)
    data = payload("issue_comment", "created", c=_comment("/holon solve"))
    step = Step(tmp_path / "s", "issue_comment", data, workspace=workspace)
    step.env.update(REPLAY)
    done = step.run(HOLON_DRY_RUN="true")
    assert done.returncode == 0, done.stderr
    outputs = step.outputs()
    # Publishing was only previewed: the work is not finished, and nothing was commented.
    assert outputs["closure_outcome"] == "continuable"
    assert outputs["comment_url"] == ""
    handoff = json.loads(outputs["handoff"])
    assert handoff["context"]["skill"] == "github-issue-solve"
    assert handoff["closure"]["closure_outcome"] == "continuable"


# An agent that says it started (the file named after it in its own text), then runs on.
SLOW_AGENT = "import pathlib, time\npathlib.Path({started!r}).touch()\ntime.sleep(120)\n"


def _cancel(proc: Any, deadline: float) -> tuple[str, str]:
    """What the runner does on cancel: SIGINT, then SIGTERM while the step is still there.
    SIGTERM is sent again and again until the process is gone, so the later signals land in
    every phase of its exit: while it unwinds (they only ask the serve to stop), once it has
    unwound and while the interpreter shuts down (ignored: the exit code stands)."""
    import signal
    import time

    proc.send_signal(signal.SIGINT)
    while proc.poll() is None and time.monotonic() < deadline:
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.005)
    out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    return str(out), str(err)


def test_a_cancelled_step_still_settles_its_comment(github_server: Any, tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    step, repo = _solve_step(github_server, tmp_path)
    agent = tmp_path / "slow_agent.py"
    started = tmp_path / "agent-started"
    agent.write_text(SLOW_AGENT.format(started=str(started)))
    step.env["HOLON_AGENT"] = f"{sys.executable} {agent}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "holon", "action"],
        env=step.environ(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Cancelled mid-run: once the agent runs (its progress comment was written before it).
    deadline = time.monotonic() + 120
    while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "the agent never started"
    (progress,) = holon_comments(repo)  # the run started and said so
    out, err = _cancel(proc, time.monotonic() + 120)
    assert proc.returncode == 130, out + err
    assert "cleanup step settles" in err
    assert not (step.state_dir / DONE_MARKER).exists()
    assert step.outputs() == {}  # the main step wrote none: it was cut short
    # The always() step: the run left inflight is settled as the user's interruption.
    done = step.run(HOLON_PHASE="cleanup")
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = step.outputs()
    assert outputs["closure_outcome"] == "waiting"
    assert outputs["waiting_reason"] == "awaiting_operator_input"
    assert outputs["lifecycle_outcome"] == "userinterlude"
    assert json.loads(outputs["runs"])[0]["status"] == "cancelled"
    (comment,) = holon_comments(repo)
    assert comment.id == progress.id
    assert "userinterlude" in comment.body
    assert outputs["comment_url"].endswith(f"#issuecomment-{comment.id}")
    assert "cancelled or timed out" in step.summary()
    # Run again, nothing is left to settle and the comment is not touched again.
    edits = github_server.count("issues/update-comment")
    assert step.run(HOLON_PHASE="cleanup").returncode == 0
    assert github_server.count("issues/update-comment") == edits


def test_a_scheduled_tick_and_a_dispatch_run_without_work(
    github_server: Any, tmp_path: Path
) -> None:
    tick = Step(tmp_path / "a", "schedule", {"schedule": "*/15 * * * *"}, server=github_server)
    done = tick.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert tick.outputs()["closure_outcome"] == ""
    assert "Event `timer.tick`" in tick.summary()
    dispatch = Step(
        tmp_path / "b", "workflow_dispatch", payload("workflow_dispatch"), server=github_server
    )
    done = dispatch.run()
    assert done.returncode == 0, done.stdout + done.stderr
    assert github_server.state.repos[REPO].comments == {}


def test_a_cancelled_review_completes_its_check_run(tmp_path: Path) -> None:
    # The loopback GitHub's check runs are by its documented example's app: Holon is that app.
    with LoopbackGitHub(token=TOKEN, login=APP) as server:
        _cancelled_review(server, tmp_path)
    server.assert_clean()


def _cancelled_review(github_server: Any, tmp_path: Path) -> None:
    import re
    import signal
    import subprocess
    import sys
    import time

    repo = github_server.state.repos[REPO]
    pull = repo.add_pull("Add a feature", head="feature")
    assert pull.pull is not None
    repo.permissions["Codertocat"] = "write"
    workspace = project(tmp_path)
    # The review works on the pull request's head: the workspace's commit is that head.
    local = subprocess.run(
        ["git", "-C", str(workspace), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    repo.objects[local] = repo.objects[pull.pull.head_sha]
    repo.refs["heads/feature"] = local
    pull.pull.head_sha = local
    built_in = Path(__file__).resolve().parents[2] / "holon/controller/default_policy.yaml"
    policy = workspace / "holon-policy.yaml"
    policy.write_text(
        re.sub(r"(?m)^  auto_review: false", "  auto_review: true", built_in.read_text())
    )

    def opened(data: dict[str, Any]) -> None:
        data["number"] = pull.number
        data["pull_request"]["number"] = pull.number
        data["pull_request"]["head"]["sha"] = pull.pull.head_sha  # type: ignore[union-attr]
        data["pull_request"]["head"]["repo"] = dict(data["repository"])
        data["pull_request"]["base"]["repo"] = dict(data["repository"])

    data = payload("pull_request", "opened", c=opened)
    step = Step(tmp_path / "s", "pull_request", data, server=github_server, workspace=workspace)
    agent = tmp_path / "slow_agent.py"
    started = tmp_path / "agent-started"
    agent.write_text(SLOW_AGENT.format(started=str(started)))
    step.env.update(
        HOLON_AGENT=f"{sys.executable} {agent}",
        HOLON_POLICY="holon-policy.yaml",
        HOLON_GITHUB_LOGIN=APP,
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "holon", "action"],
        env=step.environ(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Cancelled mid-run: once the agent runs (its check run was started before it).
    deadline = time.monotonic() + 120
    while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "the agent never started"
    (check,) = repo.check_runs.values()
    assert check["status"] == "in_progress"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, out + err
    done = step.run(HOLON_PHASE="cleanup")
    assert done.returncode == 0, done.stdout + done.stderr
    assert step.outputs()["lifecycle_outcome"] == "userinterlude"
    (check,) = repo.check_runs.values()
    assert (check["status"], check["conclusion"]) == ("completed", "neutral")
    (comment,) = repo.comments.values()
    assert "skill=github-review" in comment.body
    assert "userinterlude" in comment.body


def test_a_signal_inside_the_stop_request_does_not_re_enter_it() -> None:
    """The runner's SIGTERM can land while the SIGINT's handler is inside `Event.set`, holding
    the event's lock (not reentrant): a handler setting it again there would wait on itself."""
    import signal
    import threading

    import pytest

    from holon.cli.action_cmd import _Stopper

    stopper = _Stopper()

    class Stopping(threading.Event):
        inside = False

        def set(self) -> None:
            assert not self.inside, "stopping.set() re-entered: a deadlock on its lock"
            self.inside = True
            try:
                stopper._handle(signal.SIGTERM, None)  # the next signal, delivered right here
                super().set()
            finally:
                self.inside = False

    serve: Any = type("Serve", (), {"stopping": Stopping()})()
    stopper.opened(serve)
    with pytest.raises(KeyboardInterrupt):
        stopper._handle(signal.SIGINT, None)
    assert serve.stopping.is_set()
    stopper._handle(signal.SIGTERM, None)  # later ones: nothing more to do, nothing raised


def _agent_processes(agent: Path) -> list[int]:
    """Live processes running the agent script (its path is unique to the test)."""
    import os

    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
            state = Path(f"/proc/{entry.name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if str(agent).encode() in cmdline.split(b"\0") and state not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("at", ["agent.start:before", "agent.start:after"])
def test_a_signal_on_the_agents_start_path_saves_the_state_and_leaves_no_agent(
    at: str, sig: str, github_server: Any, tmp_path: Path
) -> None:
    """The runner's cancel landing exactly where the agent is (about to be) started, but not yet
    held by Holon (HOLON_TEST_SIGNAL_AT): 130, no traceback, the state saved for the cleanup
    step, and no agent left running."""
    import os
    import signal
    import sys
    import time

    step, _ = _solve_step(github_server, tmp_path)
    agent = tmp_path / "slow_agent.py"
    agent.write_text(SLOW_AGENT.format(started=str(tmp_path / "agent-started")))
    step.env["HOLON_AGENT"] = f"{sys.executable} {agent}"
    done = step.run(HOLON_TEST_SIGNAL_AT=f"{at}:{sig}")
    assert done.returncode == 130, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "cleanup step settles" in done.stderr
    assert not (step.state_dir / DONE_MARKER).exists()
    time.sleep(0.3)
    left = _agent_processes(agent)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "the agent was left running"
    settled = step.run(HOLON_PHASE="cleanup")
    assert settled.returncode == 0, settled.stdout + settled.stderr
    assert json.loads(step.outputs()["runs"])[0]["status"] == "cancelled"
