"""The GitHub benchmark's second workload: every effect the example replay does not decide,
performed through the edge `holon serve` builds, as its executor calls them (`edge.handlers()`,
the merge handler and the `github-publish` handler over the edge's one client), each twice: the
second attempt finds it done and writes nothing (a label present, an issue closed, a run
published).

Publishing needs settled runs: two real local runs (Holon's runner, a tiny Python agent) on a
scratch git repository whose commit the fake holds too, one solving issue 1 (a one-line change to
one text file: k = 1, b = 0) and one reviewing pull request 2 (`review.json`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench._common import BenchError
from bench.github_ledger import Ledger
from bench.github_limits import Limit
from holon.contract.spec import Spec
from holon.executor.handlers import result_of
from holon.executor.result import ActionResult
from holon.github.publish_handler import publish_handlers
from holon.intent import ActionIntent, Target, make_intent
from holon.runner import RunRequest, run
from holon.serve.github_hooks import GitHubHooks

PATCH_VALUES = {"k": 1, "b": 0}  # the solve run changes one text file the base has
SOLVE_RUN = "act_b0b0b0b0b0b0b0b0b0b0b0b0-1"
REVIEW_RUN = "act_c1c1c1c1c1c1c1c1c1c1c1c1-1"
AGENT = """
import json, os, pathlib
ws = pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"])
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
if os.environ["MODE"] == "solve":
    (ws / "README").write_text("Hello World\\nfixed by the agent\\n")
    (out / "summary.md").write_text("Fixed the spelling.")
else:
    (out / "review.json").write_text("[]")  # no finding: a comment review
    (out / "review.md").write_text("Looks fine.")
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
"""
NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def _git(cwd: Path, *args: str) -> str:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Bench",
        "GIT_AUTHOR_EMAIL": "bench@example.invalid",
        "GIT_COMMITTER_NAME": "Bench",
        "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    }
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError(f"git {args[0]}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def settled_runs(work: Path) -> tuple[Path, str, dict[str, bytes]]:
    """A runs directory holding the solve and the review run, the commit both started from and
    its files (for the fake to hold the same commit)."""
    source = work / "checkout"
    source.mkdir(parents=True)
    files = {"README": b"Hello World\n"}
    for name, data in files.items():
        (source / name).write_bytes(data)
    _git(source, "init", "-q", "-b", "main")
    _git(source, "add", "-A")
    _git(source, "commit", "-q", "-m", "base")
    head = _git(source, "rev-parse", "HEAD")
    script = work / "agent.py"
    script.write_text(AGENT)
    runs = work / "runs"
    for run_id, mode in ((SOLVE_RUN, "solve"), (REVIEW_RUN, "review")):
        spec = Spec.model_validate(
            {
                "version": "v1",
                "kind": "Holon",
                "metadata": {"name": f"bench-{mode}"},
                "context": {"env": {"MODE": mode}},
                "goal": {"description": f"bench agent: {mode}"},
            }
        )
        result = run(
            RunRequest(
                spec=spec,
                workspace=source,
                output=runs / run_id,
                runtime="local",
                agent=[sys.executable, str(script)],
                work_dir=work,
                run_id=run_id,
            )
        )
        if (result.status, result.outcome) != ("completed", "success"):
            raise BenchError(f"the {mode} run did not succeed: {result.status}, {result.outcome}")
    return runs, head, files


def seed_effects(server: Any, repo_name: str, head: str, files: Mapping[str, bytes]) -> None:
    """Issue 1 (labelled bug), pull request 2 (branch `feature` at `head`, approved by its
    owner, CI green) and issue 3; `main` at `head`, the commit the runs started from."""
    repo = server.state.repos[repo_name]
    entries = {p: {"mode": "100644", "type": "blob", "sha": repo.blob(d)} for p, d in files.items()}
    base = repo.commit("base", repo.tree(entries), [repo.refs["heads/main"]])
    repo.objects[head] = repo.objects[base]  # GitHub holds the commit the checkout came from
    repo.refs["heads/main"] = head
    repo.refs["heads/feature"] = head
    repo.add_issue("Spelling error in the README file", user="Codertocat", labels=["bug"])
    pull = repo.add_pull("Update the README with new information", head="feature")
    assert pull.pull is not None
    pull.pull.reviews.append(
        {
            "id": 9001,
            "user": "Codertocat",
            "state": "APPROVED",
            "author_association": "OWNER",
            "commit_id": head,
        }
    )
    ident = repo.next_id()
    repo.check_runs[ident] = {
        "id": ident,
        "name": "ci",
        "head_sha": head,
        "status": "completed",
        "conclusion": "success",
        "app": {"id": 15368, "slug": "github-actions"},
        "details_url": None,
    }
    repo.add_issue("A question from outside", user="outsider")


def intent(repo: str, type_: str, kind: str, number: int, args: dict[str, Any]) -> ActionIntent:
    return make_intent(
        type_=type_,
        target=Target(repo=repo, kind=kind, id=str(number)),
        args=args,
        reason=f"bench: {type_}",
        decider="policy",
        event_key=f"bench:{type_}:{kind}:{number}",
        event_id="evt_bench",
        at=NOW,
        skills={"github-publish", "github-pr-fix"},
    )


def _publish(repo: str, kind: str, number: int, run_id: str, skill: str) -> ActionIntent:
    inputs = {"run": run_id, "skill": skill, "actor": "Codertocat"}
    return intent(repo, "run_skill", kind, number, {"skill": "github-publish", "inputs": inputs})


def perform(edge: Any, ledger: Ledger, runs: Path, head: str) -> None:
    """Each effect twice through the edge's handlers; the second finds it done."""
    repo = edge.repo
    handlers = ledger.handlers(edge.handlers())
    hosted = publish_handlers(edge.config, repo, runs, lambda: NOW, client=edge.client)[
        "github-publish"
    ]
    steps: list[tuple[str, Callable[[ActionIntent, int], Any], ActionIntent]] = [
        ("label", handlers["label"], intent(repo, "label", "issue", 1, {"label": "triage"})),
        ("unlabel", handlers["unlabel"], intent(repo, "unlabel", "issue", 1, {"label": "bug"})),
        ("close_issue", handlers["close_issue"], intent(repo, "close_issue", "issue", 3, {})),
        (
            "request_review",
            handlers["request_review"],
            intent(repo, "request_review", "pull_request", 2, {"reviewers": ["hubot"]}),
        ),
        (
            "publish (issue run)",
            _charged_publish(ledger, hosted, "publish an issue run"),
            _publish(repo, "issue", 1, SOLVE_RUN, "github-issue-solve"),
        ),
        (
            "publish (review)",
            _charged_publish(ledger, hosted, "publish a review"),
            _publish(repo, "pull_request", 2, REVIEW_RUN, "github-review"),
        ),
        (
            "merge",
            handlers["merge"],
            intent(
                repo, "merge", "pull_request", 2, {"sha": head, "method": "merge", "base": "main"}
            ),
        ),
    ]
    facts = edge.facts
    ledger.facts(facts)  # the controller's questions, as a pass asks them
    facts.new_pass()
    for label in ("first", "again"):  # again: in the same pass, answered from its cache
        ledger.label = label
        facts.permission(repo, "Codertocat")
        facts.pull(repo, 2)
        facts.is_holon_pr(repo, 2)
        facts.checks_green(repo, head)
    ledger.label = "no pull request has the sha"
    facts.checks_green(repo, "f" * 40)  # no pull request read has it: the default branch's rules
    facts.new_pass()
    for name, handler, action in steps:
        for label in ("first", "again"):
            ledger.label = label
            result = handler(action, 1)
            if result.status != "succeeded":
                raise BenchError(f"{name} ({label}) failed: {result.error}")
    hooks = GitHubHooks(edge.scope, edge.facts, run_url=None)
    fix = intent(repo, "run_skill", "pull_request", 2, {"skill": "github-pr-fix", "head_sha": head})
    # After the merge: an in-progress `Holon` check run on the head holds a merge back.
    with ledger.hooks():
        for label in ("first", "again"):  # the progress comment and the check run started
            ledger.label = label
            hooks.wrap_run_skill(_ran)(fix, 1)
    ledger.label = ""
    # A dispatch is sent once per intent: there is no "again" that writes nothing.
    action = intent(repo, "dispatch", "issue", 1, {"reason": "bench"})
    if handlers["dispatch"](action, 1).status != "succeeded":
        raise BenchError("the dispatch failed")


def _ran(intent: ActionIntent, attempt: int) -> ActionResult:
    """A skill run that costs no call (the agent is not the edge's cost)."""
    return result_of(intent, attempt, NOW, "failed", error="bench: no agent")


def _charged_publish(ledger: Ledger, hosted: Any, row: str) -> Callable[..., Any]:
    """The publish handler, charged to `row` (figure 0 when it wrote, 1 when it found it done)."""

    def publish(action: ActionIntent, attempt: int) -> Any:
        what = "issue run" if "issue" in row else "review"
        with ledger.charge(f"publish ({what})") as item:
            result = hosted(action, attempt)
            done = (result.effect or {}).get("performed") is not False
            item.limit = Limit(row, 0 if done else 1)
            if not done:
                item.row = f"publish ({what}, published already)"
            item.status, item.intent = result.status, action.id
        return result

    return publish


def publish_after_502(edge: Any, server: Any, ledger: Ledger, runs: Path) -> Any:
    """The solve run published with `pulls/create` answered 502 after GitHub opened the PR."""
    server.fail("pulls/create", 502, times=1, done=True)
    hosted = publish_handlers(edge.config, edge.repo, runs, lambda: NOW, client=edge.client)
    publish = _charged_publish(ledger, hosted["github-publish"], "publish an issue run")
    return publish(_publish(edge.repo, "issue", 1, SOLVE_RUN, "github-issue-solve"), 1)


def after_502(
    edge: Any,
    server: Any,
    ledger: Ledger,
    name: str,
    operation: str,
    action: ActionIntent,
    *,
    done: bool,
) -> None:
    """Effect `name` with its `operation` answered 502, after doing it when `done` (GitHub
    accepted it and the answer was lost); a failed attempt is tried again, as the executor
    does."""
    server.fail(operation, 502, times=1, done=done)
    handler = ledger.handler(name, edge.handlers()[name])
    if handler(action, 1).status != "succeeded":
        handler(action, 2)
