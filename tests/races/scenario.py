"""N concurrent `holon action` runs over one restored state, as GitHub starts them when events
arrive together: every run restores the same state artifact, handles its own event (some of
them the same event, delivered to several runs), and uploads its bundle as its own artifact.
The next run, a scheduled tick, restores those artifacts the way every run does (through the
REST API of the loopback GitHub) and reconciles what happened since the cursor.

The story:
- seed: a tick sets the reconcile cursor, then `/holon solve` on issue 1 opens Holon's pull
  request; the seed's bundle is the artifact every racing run restores;
- the race (`PLANS`): the same `/holon solve` comment on a new issue delivered to several runs,
  a change request on the seed's pull request (pr-fix by a small agent script; at 8, delivered
  to two runs), `/holon solve` on other issues (at 8, one of those comments to two runs);
- the tick: a fresh run restores the racing runs' artifacts and reconciles every comment made
  since the cursor; whatever state it lost, it would handle again.
"""

from __future__ import annotations

import io
import json
import shlex
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from holon.state.journal import Journal
from holon.state.model import ServeState
from holon.state.store import StateStore
from tests.support.actions_env import MAINTAINER, ActionsEnv, octokit_example
from tests.support.github_fake.loopback import LoopbackGitHub
from tests.support.github_fake.state import Pull, Repo

Steps = Callable[..., ActionsEnv]
HOLON = "github-actions[bot]"
THREAD = 10  # the review thread the pr-fix addresses
REVIEW = 237895671  # the change request's id (one review, whichever runs it is delivered to)
FIXER = f"""
import json, os, pathlib
ws = pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"])
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
calc = ws / "calc.py"
calc.write_text(calc.read_text() + "\\n\\ndef sub(a, b):\\n    return a - b\\n")
(out / "summary.md").write_text("Added sub(), as the review asked.")
(out / "pr-fix.json").write_text(json.dumps(
    {{"review_replies": [{{"comment_id": {THREAD}, "status": "fixed",
                          "message": "Added sub()."}}],
     "checks": [], "verification": [{{"command": "python -m unittest", "exit_code": 0}}]}}
))
(out / "manifest.json").write_text(json.dumps({{"status": "completed", "outcome": "success"}}))
"""
CRON = "*/15 * * * *"
WORKFLOW = ".github/workflows/holon.yml"
WRITES = (
    "issues/create-comment",
    "pulls/create",
    "git/create-ref",
    "pulls/create-reply-for-review-comment",
    "pulls/delete-review-comment",
)
RUN_TIMEOUT = 90.0


@dataclass
class Delivery:
    """One event as a run receives it: `kind` (`solve` or `review`), its subject's number and
    the GitHub comment (or review) id, shared by every run it is delivered to."""

    kind: str
    number: int
    ident: int


@dataclass
class Race:
    """What a race left: the racing steps, their processes' results, the artifacts they
    uploaded (in upload order) and the tick that ran after them."""

    seed: ActionsEnv
    steps: list[ActionsEnv]
    results: list[subprocess.CompletedProcess[str]]
    deliveries: list[Delivery]
    pull: int
    tick: ActionsEnv | None = None
    tick_result: subprocess.CompletedProcess[str] | None = None
    artifacts: list[str] = field(default_factory=list)


def now_text(offset: float = 0.0) -> str:
    at = datetime.now(UTC) + timedelta(seconds=offset)
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def schedule_event(step: ActionsEnv) -> None:
    """GitHub's `schedule` payload (a run's event file; no webhook example exists for it)."""
    repository = step._targeted(octokit_example("issue_comment", "created"), MAINTAINER)
    step.write_event(
        "schedule", {"schedule": CRON, "repository": repository["repository"], "workflow": WORKFLOW}
    )


def zip_dir(directory: Path) -> bytes:
    """The directory's files as actions/upload-artifact zips them."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.iterdir()):
            archive.writestr(path.name, path.read_bytes())
    return buffer.getvalue()


def upload(step: ActionsEnv, created_at: str) -> str:
    """The step's exported bundle as its run's state artifact on the fake."""
    name = f"holon-state-{step.run_id}-{step.attempt}"
    bundle = step.runner_temp / "holon" / "upload"
    assert (bundle / "state.json").is_file(), f"{step.name} exported no bundle"
    artifact = step.repo.add_artifact(
        name, zip_dir(bundle), created_at=created_at, run_id=int(step.run_id)
    )
    # The run's repository as GitHub names it to the run (GITHUB_REPOSITORY_ID), not a fork.
    artifact.repository_id = artifact.head_repository_id = int(step.repository_id)
    return name


def finish(proc: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    try:
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


# What each racing run receives (`sN`: the one `/holon solve` comment on the N-th new issue,
# shared by every run it appears in; `review`: the change request on Holon's pull request).
PLANS = {
    2: ("s1", "s1"),
    4: ("s1", "s1", "review", "s2"),
    8: ("s1", "s1", "s1", "review", "review", "s2", "s3", "s3"),
}


def deliveries(plan: tuple[str, ...], first_issue: int, pull: int) -> list[Delivery]:
    """The deliveries of `plan` (`PLANS`' form), `sN` on issue `first_issue + N - 1`."""
    return [
        Delivery("review", pull, 0)
        if name == "review"
        else Delivery("solve", first_issue + int(name[1:]) - 1, 0)
        for name in plan
    ]


def seed(steps: Steps, server: LoopbackGitHub) -> tuple[ActionsEnv, int]:
    """The restored state: a tick's cursor, then issue 1 solved (its pull request open)."""
    tick = steps("seed-tick", run_id="3000")
    schedule_event(tick)
    done = tick.run()
    assert done.returncode == 0, done.stdout + done.stderr
    solve = steps("seed", run_id="3001")
    tick.state_between_runs(solve)
    issue = solve.add_issue()
    solve.comment_event(issue.number, "/holon solve")
    done = solve.run()
    assert done.returncode == 0, done.stdout + done.stderr
    (pull,) = [i for i in solve.repo.issues.values() if i.pull is not None]
    assert pull.pull is not None
    pull.pull.review_comments.append(
        {"id": THREAD, "body": "add sub() too?", "user": MAINTAINER, "path": "calc.py", "line": 1}
    )
    return solve, pull.number


def race(
    steps: Steps,
    server: LoopbackGitHub,
    n: int,
    tmp_path: Path,
    plan: tuple[str, ...] | None = None,
) -> Race:
    """Seed, then `n` runs (`PLANS[n]`, or `plan`) started together over the seed's
    artifact; each uploads its own."""
    seeded, pull = seed(steps, server)
    repo = seeded.repo
    base = datetime.now(UTC)
    upload(seeded, _at(base, 0))
    planned = deliveries(plan or PLANS[n], len(repo.issues) + 1, pull)
    numbers = sorted({d.number for d in planned if d.kind == "solve"})
    for number in numbers:
        while len(repo.issues) < number:
            repo.add_issue(f"calc bug {len(repo.issues) + 1}", "`add(2, 3)` returns -1.",
                           user=MAINTAINER)  # fmt: skip
    comments: dict[int, int] = {}  # issue: the comment id its deliveries share
    racing: list[ActionsEnv] = []
    for i, delivery in enumerate(planned):
        step = steps(f"race-{i}", run_id=str(4000 + i))
        if delivery.kind == "review":
            step.extra["HOLON_AGENT"] = agent_script(tmp_path, FIXER)
            step.checkout(_pull(repo, pull).head)
            step.review_event(pull, "changes_requested", "Please add sub() as well.")
            delivery.ident = REVIEW
        elif delivery.number in comments:
            delivery.ident = comments[delivery.number]
            step.comment_event(delivery.number, "/holon solve", comment_id=delivery.ident)
            # One comment on GitHub, delivered again: the fake holds it once.
            repo.comments.pop(max(repo.comments))
        else:
            payload = step.comment_event(delivery.number, "/holon solve")
            delivery.ident = comments[delivery.number] = payload["comment"]["id"]
            repo.comments[delivery.ident].created_at = now_text()
            repo.comments[delivery.ident].updated_at = now_text()
        racing.append(step)
    procs = [step.start() for step in racing]
    results = [finish(proc) for proc in procs]
    result = Race(seeded, racing, results, planned, pull)
    result.artifacts = [upload(step, _at(base, i + 1)) for i, step in enumerate(racing)]
    return result


def tick(steps: Steps, result: Race) -> None:
    """The next scheduled run: a fresh runner restoring the artifacts."""
    step = steps("tick", run_id="5000")
    schedule_event(step)
    result.tick = step
    result.tick_result = step.run(timeout=RUN_TIMEOUT)


def _at(base: datetime, seconds: int) -> str:
    return (base + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pull(repo: Repo, number: int) -> Pull:
    found = repo.issue(number).pull
    assert found is not None
    return found


def agent_script(directory: Path, source: str) -> str:
    path = directory / "fixer.py"
    path.write_text(source)
    return shlex.join([sys.executable, str(path)])


def exported_state(step: ActionsEnv) -> ServeState:
    return StateStore(step.runner_temp / "holon" / "upload").load()


def live_state(step: ActionsEnv) -> ServeState:
    return StateStore(step.state_dir).load()


def journal_entries(directory: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(directory.glob("*.ndjson")):
        for entry in Journal(path).read():
            yield path.stem, entry


def dump(result: Race) -> str:
    """Everything a failing assertion needs to be read."""
    lines = []
    for step, done in zip(result.steps, result.results, strict=True):
        tail = done.stdout[-3000:] + done.stderr[-3000:]
        if done.returncode != 0:
            tail += step.summary()[-3000:]
        lines.append(f"== {step.name} rc={done.returncode}\n{tail}")
    if result.tick_result is not None:
        done = result.tick_result
        lines.append(f"== tick rc={done.returncode}\n{done.stdout[-4000:]}{done.stderr[-3000:]}")
    return "\n".join(lines) + "\n" + json.dumps([d.__dict__ for d in result.deliveries])
