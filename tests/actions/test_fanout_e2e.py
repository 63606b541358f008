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

from holon.actions.run_intake import artifact_name
from tests.actions.step_support import LOGIN, REPO, Step, parse_outputs, payload, project
from tests.github.publish_support import seed

AGENT = f"{sys.executable} -m holon agent"


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

        def solve(data: dict[str, Any]) -> None:
            data["comment"].update(id=77, body="/holon solve", author_association="OWNER")
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
        argv = [
            sys.executable, "-m", "holon", "run", "--bundle", str(bundle), "--output",
            str(output), "--runtime", "local", "--agent", AGENT,
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
    (progress,) = story.repo.comments.values()
    assert "holon:v1" in progress.body
    assert "deferred" in decide.summary()
    bundle = decide.runner_temp / "holon" / "bundles" / entry["run"]
    assert "ghs_" not in "".join(
        p.read_text(errors="replace") for p in bundle.rglob("*") if p.is_file()
    )  # fmt: skip
    # run: the agent in the job's container (here: the local runtime), no token in reach.
    output = story.run_job(decide, entry)
    assert json.loads((output / "run.json").read_text())["outcome"] == "success"
    # settle: the output collected, published, the comment settled in place.
    settle, done = story.settle(decide, {entry["run"]: output}, outputs["matrix"])
    assert done.returncode == 0, done.stdout + done.stderr
    settled = settle.outputs()
    assert (settled["closure_outcome"], settled["lifecycle_outcome"]) == ("completed", "finished")
    (comment,) = story.repo.comments.values()  # the same comment, now the handoff
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
    (comment,) = story.repo.comments.values()
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
    (comment,) = story.repo.comments.values()
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
