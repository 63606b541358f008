"""A simulated GitHub Actions step around `python -m holon action`, against the loopback GitHub.

    env = ActionsEnv(tmp_path, github_server)        # workspace: the demo project, on the fake
    issue = env.add_issue()                          # issue 1: the solve-calc session's issue
    env.comment_event(issue.number, "/holon solve")  # GITHUB_EVENT_NAME/PATH: octokit's example
    done = env.run()                                 # CompletedProcess; clean env, real files
    env.outputs()["closure_outcome"], env.summary()

What a runner gives a step and nothing else reaches the process: `GITHUB_*` and `RUNNER_TEMP`
as the runner sets them (`GITHUB_API_URL` is the fake's; `GITHUB_TOKEN` the token it requires),
real `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY` files, the `HOLON_*` variables the composite
action sets from its inputs (design: local runtime, the real `holon agent` with the replay
engine), `PATH`, a private `HOME` and the test's own `TMPDIR`. The test process's own
environment (tokens, keys) never does. Two knobs a runner would not set keep tests fast:
`HOLON_GITHUB_WRITE_SPACING=0` (no 1 s between writes to the fake).

The workspace is a real git checkout of what the fake holds: `checkout(ref)` writes the fake's
tree at `ref` into a fresh repository and makes the fake know the local commit under its own id
(in Actions the checkout came from GitHub, so GitHub has the commit the workspace is at).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from holon.state.journal import merge_journal_entries
from holon.state.model import ServeState, merge
from holon.state.store import StateStore
from tests.support.github_fake.loopback import LoopbackGitHub
from tests.support.github_fake.state import Issue, Repo

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "solve" / "project"
EXAMPLES = ROOT / "tests" / "fixtures" / "octokit-webhooks" / "examples.json"
REPO = "octocat/Hello-World"
TOKEN = "ghs_" + "f" * 36  # the github_server fixture's token
SERVER_URL = "https://github.com"
RUN_ID = "1658821493"
# The solve-calc replay session fixes this issue (examples/solve/replay.ndjson).
ISSUE_TITLE = "add() returns the difference instead of the sum"
ISSUE_BODY = "`add(2, 3)` returns -1. It should return 5, as its docstring says."
MAINTAINER = "octocat"  # the repository's owner: admin, author_association OWNER
VENV_BIN = Path(sys.executable).parent
HOLON_AGENT = f"{VENV_BIN / 'holon'} agent"
_OUTPUT_HEAD = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)<<(.+)")
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    # Fixed dates: two checkouts of one tree are one commit, as two jobs' checkouts are.
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


class MalformedOutput(AssertionError):
    """GITHUB_OUTPUT holds something Actions would not read as `name<<DELIM ... DELIM` records."""


def octokit_example(event: str, action: str | None) -> dict[str, Any]:
    """A private copy of GitHub's first example payload for `event` (with `action`)."""
    data = json.loads(EXAMPLES.read_text())
    for entry in data:
        if entry["name"] != event:
            continue
        for payload in entry["examples"]:
            if action is None or payload.get("action") == action:
                copy: dict[str, Any] = json.loads(json.dumps(payload))
                return copy
    raise LookupError(f"no octokit example for {event}.{action}")


def parse_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT's records, read strictly: every line belongs to a `name<<DELIM` ... `DELIM`
    record (the only form Holon writes), each name at most once; anything else fails."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    elif lines:
        raise MalformedOutput("GITHUB_OUTPUT does not end with a newline")
    i = 0
    while i < len(lines):
        head = _OUTPUT_HEAD.fullmatch(lines[i])
        if head is None:
            raise MalformedOutput(f"line {i + 1} is not a `name<<DELIMITER` record: {lines[i]!r}")
        name, mark = head.groups()
        if not mark.startswith("ghadelimiter_"):
            raise MalformedOutput(f"{name}: delimiter {mark!r} is not a random ghadelimiter_")
        try:
            end = lines.index(mark, i + 1)
        except ValueError:
            raise MalformedOutput(f"{name}: the record's delimiter never closes it") from None
        if name in outputs:
            raise MalformedOutput(f"{name} is written twice")
        outputs[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return outputs


class ActionsEnv:
    """One simulated job step (see the module's docstring). `name` keeps several jobs of one
    test apart (their runner temp, state and files)."""

    def __init__(
        self,
        root: Path,
        server: LoopbackGitHub,
        *,
        name: str = "job",
        run_id: str = RUN_ID,
        seed: bool = True,
    ) -> None:
        self.root = root
        self.server = server
        self.name = name
        self.repo: Repo = server.state.repos[REPO]
        self.runner_temp = root / name / "runner-temp"
        self.runner_temp.mkdir(parents=True)
        self.home = root / name / "home"
        self.home.mkdir()
        self.output_file = self.runner_temp / "_runner_file_commands" / "set_output"
        self.summary_file = self.runner_temp / "_runner_file_commands" / "step_summary"
        self.output_file.parent.mkdir()
        self.output_file.touch()
        self.summary_file.touch()
        self.event_file = root / name / "event.json"
        self.state_dir = self.runner_temp / "holon" / "state"
        self.workspace = root / name / "workspace"
        self.extra: dict[str, str] = {}
        self.event_name = ""
        self.run_id = run_id
        self.attempt = 1
        if seed and not getattr(self.repo, "holon_seeded", False):
            self._seed_main()
        self.checkout("main")

    # -- GitHub side -----------------------------------------------------------------------
    def _seed_main(self) -> None:
        """The fake's main holds the demo project (one commit on its initial one)."""
        entries = {
            p.name: {"mode": "100644", "type": "blob", "sha": self.repo.blob(p.read_bytes())}
            for p in sorted(PROJECT.iterdir())
            if p.is_file()
        }
        head = self.repo.refs["heads/main"]
        commit = self.repo.commit("the demo project", self.repo.tree(entries), [head])
        self.repo.refs["heads/main"] = commit
        self.repo.holon_seeded = True  # type: ignore[attr-defined]  # once per fake, for every job
        self.repo.permissions.setdefault(MAINTAINER, "admin")

    def add_issue(self, title: str = ISSUE_TITLE, body: str = ISSUE_BODY) -> Issue:
        return self.repo.add_issue(title, body, user=MAINTAINER)

    def checkout(self, ref: str, into: Path | None = None) -> str:
        """The fake's tree at `ref` as a fresh local repository (the workspace unless `into`);
        the fake then knows the local commit under its id and `ref`'s branch points at it."""
        target = into or self.workspace
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        sha = self.repo.resolve(ref)
        for path, entry in self.repo.files(sha).items():
            file = target / path
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(self.repo.objects[entry["sha"]]["data"])
            if entry["mode"] == "100755":
                file.chmod(0o755)
        git(target, "init", "-q", "-b", ref.removeprefix("heads/"))
        git(target, "add", "-A")
        git(target, "commit", "-q", "-m", self.repo.objects[sha].get("message", "checkout"))
        local = git(target, "rev-parse", "HEAD").strip()
        if local != sha:
            self.repo.objects[local] = self.repo.objects[sha]
            branch = ref.removeprefix("refs/").removeprefix("heads/")
            if f"heads/{branch}" in self.repo.refs:
                self.repo.move_branch(branch, local)
        return local

    # -- events ----------------------------------------------------------------------------
    def _targeted(self, payload: dict[str, Any], actor: str) -> dict[str, Any]:
        """The example aimed at the fake's repository, sent by `actor`."""
        text = json.dumps(payload).replace("Codertocat/Hello-World", REPO)
        aimed: dict[str, Any] = json.loads(text)
        repository = aimed["repository"]
        repository.update(
            full_name=REPO,
            name=REPO.split("/")[1],
            id=int(self.repository_id),
            default_branch=self.repo.default_branch,
        )
        repository["owner"]["login"] = REPO.split("/")[0]
        aimed["sender"]["login"] = actor
        aimed["sender"]["type"] = "Bot" if actor.endswith("[bot]") else "User"
        return aimed

    @property
    def repository_id(self) -> str:
        return str(self.server.render.template("repos/get", self.repo)["id"])

    def write_event(self, name: str, payload: Mapping[str, Any]) -> Path:
        self.event_name = name
        self.event_file.write_text(json.dumps(payload))
        return self.event_file

    def comment_event(
        self,
        number: int,
        body: str,
        *,
        actor: str = MAINTAINER,
        association: str = "OWNER",
        comment_id: int | None = None,
    ) -> dict[str, Any]:
        """`body` commented on issue (or pull request) `number` of the fake by `actor`; the
        comment exists on the fake too, as the event says."""
        issue = self.repo.issue(number)
        comment = self.repo.add_comment(number, body, actor)
        payload = self._targeted(octokit_example("issue_comment", "created"), actor)
        payload["comment"].update(
            id=comment_id or comment.id, body=body, author_association=association
        )
        payload["comment"]["user"]["login"] = actor
        payload["issue"].update(number=number, title=issue.title, body=issue.body, state="open")
        payload["issue"]["user"]["login"] = issue.user
        if issue.pull is None:
            payload["issue"].pop("pull_request", None)
        else:
            url = f"{self.server.url}/repos/{REPO}/pulls/{number}"
            payload["issue"]["pull_request"] = {"url": url}
        self.write_event("issue_comment", payload)
        return payload

    def review_event(
        self,
        number: int,
        state: str,
        body: str,
        *,
        actor: str = MAINTAINER,
        association: str = "OWNER",
        review_id: int = 237895671,
    ) -> dict[str, Any]:
        """A review of the fake's pull request `number` at its current head, submitted."""
        issue = self.repo.issue(number, pull=True)
        assert issue.pull is not None
        pull = issue.pull
        payload = self._targeted(octokit_example("pull_request_review", "submitted"), actor)
        payload["review"].update(
            id=review_id,
            state=state,
            body=body,
            commit_id=pull.head_sha,
            author_association=association,
        )
        payload["review"]["user"]["login"] = actor
        self._pull_fields(payload["pull_request"], number, issue)
        # The review is on the fake too, as the event says (a write of its work reads it again).
        review = {"id": review_id, "user": actor, "body": body, "state": state.upper(),
                  "commit_id": pull.head_sha}  # fmt: skip
        pull.reviews = [r for r in pull.reviews if r["id"] != review_id] + [review]
        self.write_event("pull_request_review", payload)
        return payload

    def pull_request_event(
        self, event: str, action: str, number: int, *, actor: str = MAINTAINER
    ) -> dict[str, Any]:
        """`event` (pull_request or pull_request_target; one payload shape) for pull `number`."""
        issue = self.repo.issue(number, pull=True)
        payload = self._targeted(octokit_example("pull_request", action), actor)
        payload["number"] = number
        self._pull_fields(payload["pull_request"], number, issue)
        self.write_event(event, payload)
        return payload

    def _pull_fields(self, pr: dict[str, Any], number: int, issue: Issue) -> None:
        assert issue.pull is not None
        pull = issue.pull
        head_repo = pull.fork or REPO
        pr.update(number=number, title=issue.title, body=issue.body, state=issue.state)
        pr["user"]["login"] = issue.user
        pr["head"].update(ref=pull.head, sha=pull.head_sha, label=f"{head_repo.split('/')[0]}:x")
        pr["head"]["repo"].update(full_name=head_repo, name=head_repo.split("/")[1])
        pr["head"]["repo"]["owner"]["login"] = head_repo.split("/")[0]
        pr["head"]["repo"]["fork"] = pull.fork is not None
        if pull.fork is not None:
            pr["head"]["repo"]["id"] = int(self.repository_id) + 1
        pr["base"].update(ref=pull.base, sha=self.repo.resolve(pull.base))
        pr["base"]["repo"].update(full_name=REPO, id=int(self.repository_id))

    # -- the step --------------------------------------------------------------------------
    def env(self) -> dict[str, str]:
        """Exactly what the step's process gets."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "RUNNER_TEMP": str(self.runner_temp),
            "RUNNER_OS": "Linux",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_EVENT_PATH": str(self.event_file),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_REPOSITORY_ID": self.repository_id,
            "GITHUB_REPOSITORY_OWNER": REPO.split("/")[0],
            "GITHUB_RUN_ID": self.run_id,
            "GITHUB_RUN_ATTEMPT": str(self.attempt),
            "GITHUB_SERVER_URL": SERVER_URL,
            "GITHUB_API_URL": self.server.url,
            "GITHUB_TOKEN": TOKEN,
            "GITHUB_OUTPUT": str(self.output_file),
            "GITHUB_STEP_SUMMARY": str(self.summary_file),
            "GITHUB_REF": "refs/heads/main",
            "GITHUB_WORKFLOW_REF": f"{REPO}/.github/workflows/holon.yml@refs/heads/main",
            "GITHUB_ACTOR": MAINTAINER,
            # What the composite action sets from its inputs (docs: design, Environment).
            "HOLON_MODE": "single",
            "HOLON_RUNTIME": "local",
            "HOLON_AGENT": HOLON_AGENT,
            "HOLON_ENGINE": "replay",
            "HOLON_REPLAY_SESSION": "example:solve-calc",
            "HOLON_MENTION": "holon",
            "HOLON_DRY_RUN": "false",
            "HOLON_STATE_DIR": str(self.state_dir),
            "HOLON_RUNS_DIR": str(self.runner_temp / "holon" / "runs"),
            "HOLON_UPLOAD_DIR": str(self.runner_temp / "holon" / "upload"),
            # Not a runner's: the test's own temp dir and log dir (tests/conftest.py), and no
            # second between writes to the fake.
            "HOLON_GITHUB_WRITE_SPACING": "0",
        }
        for name in ("TMPDIR", "HOLON_LOG_DIR"):
            if name in os.environ:
                env[name] = os.environ[name]
        env.update(self.extra)
        return {k: v for k, v in env.items() if v is not None}

    def argv(self) -> list[str]:
        return [sys.executable, "-m", "holon", "action"]

    def run(self, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(),
            env=self.env(),
            cwd=self.workspace,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def start(self) -> subprocess.Popen[str]:
        """The step as a running process (its own process group, as a runner starts one)."""
        return subprocess.Popen(
            self.argv(),
            env=self.env(),
            cwd=self.workspace,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def new_step(self) -> None:
        """Fresh GITHUB_OUTPUT and step summary files (the next step or job)."""
        self.output_file.write_text("")
        self.summary_file.write_text("")

    # -- what the step left ----------------------------------------------------------------
    def outputs(self) -> dict[str, str]:
        return parse_outputs(self.output_file.read_text(encoding="utf-8"))

    def summary(self) -> str:
        return self.summary_file.read_text(encoding="utf-8")

    def holon_comments(self, number: int) -> list[str]:
        """Bodies of the comments on `number` written by Holon's login (with a Holon marker)."""
        return [
            c.body
            for c in self.repo.comments.values()
            if c.issue == number and c.user == self.server.login and "<!-- holon:" in c.body
        ]

    def state_between_runs(self, following: ActionsEnv) -> None:
        """Carry this run's state to `following`, as the saved cache/artifact restores it."""
        if following.state_dir.exists():
            shutil.rmtree(following.state_dir)
        following.state_dir.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.state_dir, following.state_dir, ignore=_LOCK)


_LOCK = shutil.ignore_patterns("state.lock")


def merge_states(target: Path, sources: Iterable[Path]) -> None:
    """The state directories of several runs merged into `target`, as restoring their
    artifacts merges them: records by the state's lossless merge, journals by entry id."""
    merged: ServeState | None = None
    journals: dict[str, list[dict[str, Any]]] = {}
    for source in sources:
        state = StateStore(source).load()
        merged = state if merged is None else merge(merged, state)
        for path in sorted(source.glob("*.ndjson")):
            entries = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
            journals[path.name] = merge_journal_entries(journals.get(path.name, []), entries)
    assert merged is not None, "no state to merge"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    StateStore(target).save(merged)
    for name, entries in journals.items():
        (target / name).write_text("".join(json.dumps(e) + "\n" for e in entries))


# The runner's cancellation: SIGINT, 7.5 s, SIGTERM, 2.5 s, then the process tree is killed.
RUNNER_GRACE = (7.5, 2.5)


def cancel(proc: subprocess.Popen[str], grace: tuple[float, float] = RUNNER_GRACE) -> str:
    """Cancel a running step as the runner does; which signal ended it: `SIGINT`, `SIGTERM`, or
    `SIGKILL` when it outlived both graces (then its process group is killed, as the runner
    kills the step's process tree)."""
    for sig, wait in zip((signal.SIGINT, signal.SIGTERM), grace, strict=True):
        proc.send_signal(sig)
        try:
            proc.wait(wait)
            return sig.name
        except subprocess.TimeoutExpired:
            pass
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return "SIGKILL"


def git(cwd: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), **_GIT_ENV}
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


__all__ = [
    "HOLON_AGENT",
    "MAINTAINER",
    "REPO",
    "RUN_ID",
    "SERVER_URL",
    "TOKEN",
    "ActionsEnv",
    "MalformedOutput",
    "cancel",
    "merge_states",
    "octokit_example",
    "parse_outputs",
]
