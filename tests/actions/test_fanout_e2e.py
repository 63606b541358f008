"""Fan-out end to end (docs/fan-out.md): the three jobs of `.github/workflows/holon.yml` as
separate processes against the loopback GitHub, artifacts passed as directories.

decide: `holon action` (HOLON_MODE=decide) on GitHub's own `issue_comment` example saying
`/holon solve`; one `holon run --bundle` per matrix entry in the demo project's checkout, with
the replay engine (the recorded solve-calc session: the tests fail, the fix is made, they
pass); settle: `holon action` (HOLON_MODE=settle) with the run outputs downloaded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from holon.actions.run_intake import artifact_name, take_run_outputs
from holon.closure.derive import CUT_SHORT
from holon.state.store import StateStore
from tests.actions.step_support import LOGIN, REPO, Step, parse_outputs, payload, project
from tests.e2e_actions.conftest import agent_script, holon_checks, pull_of, pulls
from tests.e2e_actions.test_solve_story import BRANCH, FIXER, _holon_pr
from tests.github.publish_support import seed
from tests.support.actions_env import ActionsEnv

AGENT = f"{sys.executable} -m holon agent"
# The run job's model key (the workflow forwards it with --secret-env): the replay engine needs
# no model, but the run goes through the key proxy all the same.
MODEL_KEY = "sk-ant-fanout-e2e-3c9b7f2a61d84e05"


class Story:
    """One fan-out workflow run: each job on a fresh runner (its own RUNNER_TEMP)."""

    def __init__(self, tmp: Path, server: Any) -> None:
        self.tmp, self.server = tmp, server
        self.workspace = project(tmp)
        repo = server.state.repos[REPO]
        issue = repo.add_issue("add() subtracts", user="octocat")
        files = {p.name: p.read_bytes() for p in self.workspace.iterdir() if p.is_file()}
        base = seed(repo, files)
        self.head = _git(self.workspace, "rev-parse", "HEAD")
        repo.objects[self.head] = repo.objects[base]  # GitHub holds the checkout's commit
        repo.refs["heads/main"] = self.head
        self.repo, self.number = repo, issue.number
        # The command is on GitHub, as the event says (publishing reads it again first).
        trigger = repo.add_comment(issue.number, "/holon solve", "octocat")
        self.trigger = trigger.id

        def solve(data: dict[str, Any]) -> None:
            data["comment"].update(id=trigger.id, body="/holon solve", author_association="OWNER")
            data["issue"]["number"] = issue.number
            data["issue"].pop("pull_request", None)

        self.payload = payload("issue_comment", "created", solve=solve)
        self.env = {
            "GITHUB_SHA": self.head,
            "HOLON_ENGINE": "replay",
            "HOLON_REPLAY_SESSION": "example:solve-calc",
            "HOLON_GITHUB_LOGIN": LOGIN,
            "HOLON_AGENT": AGENT,
        }

    def step(self, name: str) -> Step:
        return Step(
            self.tmp / name, "issue_comment", self.payload, self.server, self.workspace,
            env=dict(self.env),
        )  # fmt: skip

    def decide(self) -> tuple[Step, subprocess.CompletedProcess[str]]:
        step = self.step("decide")
        return step, step.run(HOLON_MODE="decide")

    def run_job(self, decide: Step, entry: dict[str, str]) -> Path:
        """One matrix job: its bundle downloaded, `holon run --bundle`, its output uploaded."""
        runner = self.tmp / f"run-{entry['run']}"
        bundle = runner / "bundle"
        shutil.copytree(decide.runner_temp / "holon" / "bundles" / entry["run"], bundle)
        output = runner / "output"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "HOLON_"))}
        env["ANTHROPIC_API_KEY"] = MODEL_KEY
        argv = [
            sys.executable, "-m", "holon", "run", "--bundle", str(bundle), "--output",
            str(output), "--runtime", "local", "--agent", AGENT,
            "--secret-env", "ANTHROPIC_API_KEY",
        ]  # fmt: skip
        done = subprocess.run(
            argv, cwd=self.workspace, env=env, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return output

    def settle(
        self, decide: Step, outputs: dict[str, Path], matrix: str
    ) -> tuple[Step, subprocess.CompletedProcess[str]]:
        step = self.step("settle")
        downloads = step.tmp / "run-outputs"
        downloads.mkdir(parents=True)
        for run, path in outputs.items():
            shutil.copytree(path, downloads / artifact_name(run, 1), symlinks=True)
        decided = step.tmp / "decided"
        shutil.copytree(decide.runner_temp / "holon" / "decided", decided)
        done = step.run(
            HOLON_MODE="settle",
            HOLON_RUN_OUTPUTS=str(downloads),
            HOLON_DECIDED_DIR=str(decided),
            HOLON_MATRIX=matrix,
        )
        return step, done


def holon_comments(repo: Any) -> list[Any]:
    """Holon's comments on the fake (the maintainer's command is there too)."""
    return [c for c in repo.comments.values() if c.user != "octocat"]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _decided(story: Story) -> tuple[Step, dict[str, str], list[dict[str, str]]]:
    decide, done = story.decide()
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = decide.outputs()
    return decide, outputs, json.loads(outputs["matrix"])["include"]


def test_fan_out_solves_an_issue_in_three_jobs(github_server: Any, tmp_path: Path) -> None:
    story = Story(tmp_path, github_server)
    decide, outputs, include = _decided(story)
    # decide: one run handed on, nothing run, one progress comment, waiting on the run job.
    (entry,) = include
    assert (entry["skill"], entry["subject"]) == ("github-issue-solve", f"issue:{story.number}")
    assert outputs["has_runs"] == "true"
    assert (outputs["closure_outcome"], outputs["waiting_reason"]) == (
        "waiting", "awaiting_task_result",
    )  # fmt: skip
    (row,) = json.loads(outputs["runs"])
    assert row["status"] == "deferred"
    assert not (decide.runner_temp / "holon" / "runs").exists()  # no agent ran in decide
    (progress,) = holon_comments(story.repo)
    assert "holon:v1" in progress.body
    assert "deferred" in decide.summary()
    bundle = decide.runner_temp / "holon" / "bundles" / entry["run"]
    assert "ghs_" not in "".join(
        p.read_text(errors="replace") for p in bundle.rglob("*") if p.is_file()
    )  # fmt: skip
    # run: the agent in the job's container (here: the local runtime), no token in reach.
    output = story.run_job(decide, entry)
    record = json.loads((output / "run.json").read_text())
    assert record["outcome"] == "success"
    # The model key forwarded stayed behind the run's key proxy (no request: the replay engine).
    assert record["model_usage"] == {
        "input_tokens": 0, "output_tokens": 0, "requests": 0, "model": None,
    }  # fmt: skip
    assert not any(MODEL_KEY.encode() in p.read_bytes() for p in output.rglob("*") if p.is_file())
    # settle: the output collected, published, the comment settled in place.
    settle, done = story.settle(decide, {entry["run"]: output}, outputs["matrix"])
    assert done.returncode == 0, done.stdout + done.stderr
    settled = settle.outputs()
    assert (settled["closure_outcome"], settled["lifecycle_outcome"]) == ("completed", "finished")
    (comment,) = holon_comments(story.repo)  # the same comment, now the handoff
    assert comment.id == progress.id
    assert json.loads(settled["handoff"])["outcome"] == "finished"
    pulls = [i for i in story.repo.issues.values() if i.pull is not None]
    (pull,) = pulls
    assert pull.pull is not None
    assert pull.pull.head == f"holon/issue-{story.number}"
    assert f"pull request \\#{pull.number}" in comment.body
    assert github_server.count("issues/create-comment") == 1
    # An issue has no head commit: no check run is started or completed for it.
    assert github_server.count("checks/create") == 0
    runs = json.loads(settled["runs"])
    assert [r["skill"] for r in runs] == ["github-issue-solve", "github-publish"]
    assert runs[0]["output"].startswith(str(settle.runner_temp))  # the settle side's path
    logged = [x for x in done.stdout.splitlines() if not x.startswith("::add-mask::")]
    assert "ghs_" not in "\n".join(logged) + done.stderr + settle.summary()


def test_a_cancelled_run_job_settles_failed_with_evidence(
    github_server: Any, tmp_path: Path
) -> None:
    story = Story(tmp_path, github_server)
    decide, outputs, (_entry,) = _decided(story)
    # The run job was cancelled before its upload: settle downloads nothing.
    settle, done = story.settle(decide, {}, outputs["matrix"])
    assert done.returncode == 1, done.stdout + done.stderr
    settled = settle.outputs()
    assert (settled["closure_outcome"], settled["lifecycle_outcome"]) == ("failed", "failed")
    (comment,) = holon_comments(story.repo)
    assert "the run job left no output" in comment.body
    assert "the run job left no output" in settle.summary()
    assert [i for i in story.repo.issues.values() if i.pull is not None] == []


def test_a_tampered_run_output_is_refused(github_server: Any, tmp_path: Path) -> None:
    story = Story(tmp_path, github_server)
    decide, outputs, (entry,) = _decided(story)
    output = story.run_job(decide, entry)
    # The run job claims success for an output without its required summary.md...
    (output / "summary.md").unlink()
    # ...and left a link to a file of the settle runner.
    (output / "evidence" / "passwd").symlink_to("/etc/passwd")
    settle, done = story.settle(decide, {entry["run"]: output}, outputs["matrix"])
    assert done.returncode == 1, done.stdout + done.stderr
    assert settle.outputs()["closure_outcome"] == "failed"
    (comment,) = holon_comments(story.repo)
    assert "refused" in comment.body
    assert "evidence/passwd\\: a symlink" in settle.summary()  # Markdown-escaped
    assert [i for i in story.repo.issues.values() if i.pull is not None] == []
    assert not (settle.runner_temp / "holon" / "runs" / entry["run"]).exists()

    # Without the link, the forged claim is refused by the re-check of the skill's artifacts.
    (output / "evidence" / "passwd").unlink()
    again = story.step("settle-again")
    downloads = again.tmp / "run-outputs"
    shutil.copytree(output, downloads / artifact_name(entry["run"], 1))
    shutil.copytree(decide.runner_temp / "holon" / "decided", again.tmp / "decided")
    done = again.run(
        HOLON_MODE="settle",
        HOLON_RUN_OUTPUTS=str(downloads),
        HOLON_DECIDED_DIR=str(again.tmp / "decided"),
        HOLON_MATRIX=outputs["matrix"],
    )
    assert done.returncode == 1, done.stdout + done.stderr
    summary = again.summary()
    assert "required artifact summary\\.md is missing" in summary
    assert [i for i in story.repo.issues.values() if i.pull is not None] == []
    assert parse_outputs(again.output.read_text())["closure_outcome"] == "failed"


# -- a pull request: a change request on Holon's pull request, fixed in fan-out ----------------


class PullStory:
    """A change request on Holon's pull request (GitHub's own `pull_request_review` submitted
    example, aimed at the fake's repository), each job on its own runner (`ActionsEnv`), the
    agent a script (the only replay session is solve-calc)."""

    def __init__(self, tmp: Path, server: Any) -> None:
        self.tmp, self.server = tmp, server
        self.first = ActionsEnv(tmp, server, name="decide")
        self.number, self.head = _holon_pr(self.first)
        self.repo = self.first.repo
        # GitHub's git side, for the run job's checkout: both commits, fetchable by id.
        self.origin = tmp / "origin.git"
        _git(tmp, "init", "-q", "--bare", str(self.origin))
        _git(self.origin, "config", "uploadpack.allowAnySHA1InWant", "true")
        _git(self.first.workspace, "push", "-q", str(self.origin), f"HEAD:refs/heads/{BRANCH}")
        # The trusted jobs check out the default branch, never the head (as an issue comment's
        # or a review's job does): main, where calc.py differs from the head in the very lines
        # the fix is made next to.
        self.main = self.first.checkout("main")
        _git(self.first.workspace, "push", "-q", str(self.origin), "HEAD:refs/heads/main")
        assert self.main != self.head
        # GitHub records the app whose token created a check run; settle, a later job, finds
        # decide's check run by it.
        self.repo.check_app = LOGIN.removesuffix("[bot]")
        self.payload = self.first.review_event(
            self.number, "changes_requested", "Please add sub() as well."
        )
        self.agent = agent_script(tmp, FIXER)

    def job(self, name: str, **extra: str) -> ActionsEnv:
        job = self.first if name == "decide" else ActionsEnv(self.tmp, self.server, name=name)
        job.write_event("pull_request_review", self.payload)
        # Every job of the workflow run has the same GITHUB_SHA: main's commit, not the head.
        job.extra.update(GITHUB_SHA=self.main, HOLON_AGENT=self.agent, **extra)
        return job

    def decide(self) -> tuple[ActionsEnv, dict[str, str]]:
        job = self.job("decide", HOLON_MODE="decide")
        done = job.run()
        assert done.returncode == 0, done.stdout + done.stderr
        return job, job.outputs()

    def run_job(self, decide: ActionsEnv, entry: dict[str, str]) -> Path:
        """The matrix job: `actions/checkout` at `matrix.ref` (a fresh repository, that one
        commit fetched by id, detached), the bundle run, no token."""
        run, ref = entry["run"], entry["ref"]
        runner = self.tmp / f"run-{run}"
        workspace = runner / "workspace"
        workspace.mkdir(parents=True)
        _git(workspace, "init", "-q")
        _git(workspace, "remote", "add", "origin", self.origin.as_uri())
        _git(workspace, "fetch", "-q", "--no-tags", "--depth=1", "origin", ref)
        _git(workspace, "checkout", "-q", "--detach", ref)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "HOLON_"))}
        argv = [
            sys.executable, "-m", "holon", "run", "--bundle",
            str(decide.runner_temp / "holon" / "bundles" / run), "--output",
            str(runner / "output"), "--runtime", "local", "--agent", self.agent,
        ]  # fmt: skip
        done = subprocess.run(
            argv, cwd=workspace, env=env, capture_output=True, text=True, timeout=180
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return runner / "output"

    def settle(
        self,
        decide: ActionsEnv | None,
        outputs: dict[str, Path],
        matrix: str,
        *,
        name: str = "settle",
        attempt: int = 1,
        **extra: str,
    ) -> tuple[ActionsEnv, subprocess.CompletedProcess[str]]:
        job = self.job(name, HOLON_MATRIX=matrix, HOLON_MODE="settle", **extra)
        job.attempt = attempt
        downloads = job.runner_temp / "run-outputs"
        downloads.mkdir()
        for name_, path in outputs.items():
            shutil.copytree(path, downloads / name_, symlinks=True)
        decided = job.runner_temp / "decided"
        if decide is not None:
            shutil.copytree(decide.runner_temp / "holon" / "decided", decided)
        job.extra.update(HOLON_RUN_OUTPUTS=str(downloads), HOLON_DECIDED_DIR=str(decided))
        return job, job.run()


def _check_writes(server: Any) -> list[tuple[str, str]]:
    """Every write of a check run, in order: (operation, the status it set)."""
    found = []
    for call in server.calls:
        if call.operation in ("checks/create", "checks/update"):
            found.append((call.operation, json.loads(call.body).get("status", "")))
    return found


def test_fan_out_fixes_a_holon_pull_request_on_a_change_request(
    github_server: Any, tmp_path: Path
) -> None:
    story = PullStory(tmp_path, github_server)
    decide, outputs = story.decide()
    (entry,) = json.loads(outputs["matrix"])["include"]
    assert (entry["skill"], entry["subject"]) == ("github-pr-fix", f"pull_request:{story.number}")
    # decide announced the run: one progress comment, the check run in progress on the head.
    (progress,) = story.first.holon_comments(story.number)
    assert "skill=github-pr-fix" in progress.splitlines()[0]
    assert _check_writes(github_server) == [("checks/create", "in_progress")]
    lists_before = github_server.count("issues/list-comments")

    # The run job starts from the pull request's head; decide (and settle) checked out main.
    assert entry["ref"] == story.head
    assert _git(story.first.workspace, "rev-parse", "HEAD") == story.main
    output = story.run_job(decide, entry)
    record = json.loads((output / "run.json").read_text())
    assert record["snapshot"]["head"] == story.head  # the start the runner saw, recorded
    settle, done = story.settle(decide, {artifact_name(entry["run"], 1): output}, outputs["matrix"])
    assert done.returncode == 0, done.stdout + done.stderr
    settled = settle.outputs()
    assert (settled["closure_outcome"], settled["lifecycle_outcome"]) == ("completed", "finished")

    # The fix's commit is on the pull request's own branch, on the head the run started from,
    # and its patch applied to the head's calc.py (main's still subtracts).
    fix = story.repo.refs[f"heads/{BRANCH}"]
    assert story.repo.get(fix, "commit")["parents"] == [story.head]
    data = story.repo.objects[story.repo.files(fix)["calc.py"]["sha"]]["data"]
    assert b"def sub(a, b):" in data
    assert b"return a + b" in data
    main = story.repo.objects[story.repo.files(story.main)["calc.py"]["sha"]]["data"]
    assert b"return a - b" in main
    assert b"return a + b" not in main
    assert pull_of(story.repo.issue(story.number)).head_sha == fix
    assert len(pulls(story.repo)) == 1
    # One comment, now the handoff; settle never re-announced the run (no progress upsert).
    (comment,) = story.first.holon_comments(story.number)
    assert "**Outcome:** `finished`" in comment
    assert github_server.count("issues/create-comment") == 1
    assert github_server.count("issues/list-comments") - lists_before <= 1
    # The check run: in progress once (decide), completed once (settle), never back; the
    # fix's new head carries the outcome too, created completed.
    writes = _check_writes(github_server)
    assert writes[0] == ("checks/create", "in_progress")
    assert all(status == "completed" for _, status in writes[1:]), writes
    checks = holon_checks(story.repo)
    assert {c["head_sha"] for c in checks} == {story.head, fix}
    assert sorted(c["head_sha"] for c in checks) == sorted([story.head, fix])  # one run each
    assert all((c["status"], c["conclusion"]) == ("completed", "success") for c in checks)
    # (The head's run is completed when the fix is collected, and its summary updated once
    # more when publishing adds the commit, as in single mode: completed both times.)
    assert [op for op, _ in writes].count("checks/create") == 2


def test_a_re_run_of_settle_collects_nothing_twice(github_server: Any, tmp_path: Path) -> None:
    story = PullStory(tmp_path, github_server)
    decide, outputs = story.decide()
    (entry,) = json.loads(outputs["matrix"])["include"]
    output = story.run_job(decide, entry)
    first_name = artifact_name(entry["run"], 1)
    first, done = story.settle(decide, {first_name: output}, outputs["matrix"])
    assert done.returncode == 0, done.stdout + done.stderr
    fix = story.repo.refs[f"heads/{BRANCH}"]
    writes = len(_check_writes(github_server))
    # Attempt 2 of the workflow run re-runs settle (decide kept): it downloads attempt 1's
    # run artifact again and restores attempt 1's saved state (here: the cache's fast path).
    again, done = story.settle(
        decide,
        {first_name: output},
        outputs["matrix"],
        name="settle-2",
        attempt=2,
        HOLON_CACHE_DIR=str(first.runner_temp / "holon" / "upload"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert story.repo.refs[f"heads/{BRANCH}"] == fix  # nothing published twice
    assert len(pulls(story.repo)) == 1
    (comment,) = story.first.holon_comments(story.number)
    assert "**Outcome:** `finished`" in comment
    assert github_server.count("issues/create-comment") == 1
    assert github_server.count("git/create-commit") == 1
    assert len(_check_writes(github_server)) == writes
    assert "run output taken" not in again.summary()


def test_a_re_run_takes_the_newest_attempts_run_output(tmp_path: Path) -> None:
    source, runs = tmp_path / "downloads", tmp_path / "runs"
    for attempt in (1, 2, 3):
        (source / artifact_name("r-1", attempt)).mkdir(parents=True)
        (source / artifact_name("r-1", attempt) / "n").write_text(str(attempt))
    intake = take_run_outputs(source, runs, {"r-1"}, attempt=2)
    assert intake.taken == ["r-1"]
    assert (runs / "r-1" / "n").read_text() == "2"
    assert any("superseded" in line for line in intake.ignored)
    assert any("later attempt" in line for line in intake.ignored)


def test_decide_died_after_its_progress_comment_settle_fails_it_in_place(
    github_server: Any, tmp_path: Path
) -> None:
    story = PullStory(tmp_path, github_server)
    story.decide()
    (progress,) = story.first.holon_comments(story.number)
    # decide's state never reached settle (the job failed before its upload): no matrix, no
    # decided state, only the event and decide's result.
    settle, done = story.settle(None, {}, "", HOLON_DECIDE_RESULT="failure")
    assert done.returncode == 1, done.stdout + done.stderr
    settled = settle.outputs()
    assert (settled["closure_outcome"], settled["lifecycle_outcome"]) == ("failed", "failed")
    (comment,) = story.first.holon_comments(story.number)
    assert comment.splitlines()[0] == progress.splitlines()[0]  # the same marker, edited
    assert "the decide job ended before it recorded its decisions" in comment
    assert github_server.count("issues/create-comment") == 1
    writes = _check_writes(github_server)
    assert writes == [("checks/create", "in_progress"), ("checks/update", "completed")]
    (check,) = holon_checks(story.repo)
    assert check["conclusion"] == "failure"
    assert not (settle.runner_temp / "holon" / "runs").exists()  # nothing ran
    assert "decide: failure" in settle.summary().replace("\\", "")


def test_a_cancelled_decide_settles_as_cut_short(github_server: Any, tmp_path: Path) -> None:
    """A cancelled decide job is an interruption no user asked for: the handoff and the stored
    closure say the step was cut short, not that someone stopped the work."""
    story = PullStory(tmp_path, github_server)
    story.decide()
    settle, done = story.settle(None, {}, "", HOLON_DECIDE_RESULT="cancelled")
    settled = settle.outputs()
    assert settled["lifecycle_outcome"] == "userinterlude", done.stdout + done.stderr
    assert settled["closure_outcome"] == "waiting"
    (comment,) = story.first.holon_comments(story.number)
    assert "cancelled" in comment
    assert "cut short" in comment, comment
    assert "stopped" not in comment, comment
    handoff = json.loads(settled["handoff"])
    assert "cut short" in handoff["next"]["action"], handoff
    stored = StateStore(settle.state_dir).load().get("closure", f"pull_request:{story.number}")
    assert stored is not None
    assert stored.data["detail"] == handoff["closure"]["detail"] == CUT_SHORT, stored.data
    assert github_server.count("issues/create-comment") == 1
    (check,) = holon_checks(story.repo)
    assert (check["status"], check["conclusion"]) == ("completed", "neutral")
