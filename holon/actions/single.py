"""Single mode: one Actions step is a serve of exactly one event (plus what a tick reconciles,
and the follow-ups), with the Actions I/O around it (`run_step`).

Order: the event is read first (bad input costs nothing), then a privileged run on a fork's
checked-out head is refused, state is restored, the serve is built as `holon serve` builds it
(one construction), the event handled, continuable work re-dispatched, the state saved and
exported; the caller writes the outputs and the summary from the `StepResult`.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from holon.actions.conclude import conclude
from holon.actions.config import ActionConfig
from holon.actions.event import envelope_from_actions
from holon.actions.result import StepResult
from holon.errors import InvalidInput
from holon.gateway.envelope import EventEnvelope

if TYPE_CHECKING:
    import github

    from holon.closure.record import ClosureRecord
    from holon.controller.facts import RepoFacts
    from holon.controller.policy import Policy
    from holon.github.effects import Scope
    from holon.serve.serve import Serve
    from holon.state.model import Record, ServeState

TICKS = ("schedule", "workflow_dispatch")
WRITE_FAILED = "GitHub: progress not written"
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
FORK_HEAD = (
    "pull_request_target from a fork: the workspace holds the fork's head commit in a "
    "privileged run; check out the base"
)


def run_step(
    env: Mapping[str, str],
    config: ActionConfig,
    *,
    clock: Callable[[], datetime],
    say: Callable[[str], None],
    on_serve: Callable[[Serve], None] = lambda serve: None,
) -> StepResult:
    """One event, decided, done and settled. `say` prints one log line; `on_serve` is given
    the serve once it is open (the CLI stops it on SIGTERM through it)."""
    envelope = envelope_from_actions(env, config, clock())
    config = config.with_event(envelope.payload)
    refuse_fork_head(config, envelope)
    client = _client(env, config)
    from holon.actions import state_sync
    from holon.actions.step import warning

    warnings: list[str] = []

    def warn(text: str) -> None:
        # Said at once (a ::warning:: line) and kept for the summary.
        warnings.append(text)
        say(warning(text))

    restored = state_sync.restore_state(config, client=client, warn=warn)
    policy = step_policy(config)
    serve = build_step_serve(env, config, policy, clock=clock, say=quiet_writes(say))
    notes = [f"state restored from {line}" for line in restored.merged]
    notes += [f"state refused: {line}" for line in restored.refused]
    serve.open()
    try:
        on_serve(serve)
        serve.handle_follow_ups()  # of the runs the restored state's recovery settled
        notes += handle_with_tick(serve, envelope, env, config, client, clock, warn)
        notes += _reactivate(serve, config, clock())
    finally:
        serve.close()
    # A refused source is already a note of its own: each problem is one line of the summary.
    notes += [f"warning: {text}" for text in warnings if text not in restored.refused]
    return conclude(serve, envelope, config, notes)


def handle_with_tick(
    serve: Serve,
    envelope: EventEnvelope,
    env: Mapping[str, str],
    config: ActionConfig,
    client: github.Github | None,
    clock: Callable[[], datetime],
    warn: Callable[[str], None],
) -> list[str]:
    """Handle the step's event; on a tick first what a dropped run missed since the cursor
    (every mode that decides does this, single and fan-out's decide). The new cursor is put
    only once every event of its window was handled: a failed or stopped step leaves the old
    one, so the next tick reads the same window again."""
    notes: list[str] = []
    cursor: Record | None = None
    if config.event_name in TICKS and client is not None and serve.options.repo:
        from holon.github.client import GitHubConfig

        login = GitHubConfig.from_env(env).login
        notes, cursor = _reconcile(serve, client, serve.options.repo, clock(), config, login, warn)
    if not serve.stopping.is_set():
        serve.handle(envelope)
    if cursor is not None and not serve.failed and not serve.stopping.is_set():
        serve.state.put(cursor)
    return notes


def quiet_writes(say: Callable[[str], None]) -> Callable[[str], None]:
    """`say`, less the failed GitHub writes: the step reports those once each, at its end."""

    def filtered(text: str) -> None:
        if WRITE_FAILED not in text:
            say(text)

    return filtered


def refuse_fork_head(config: ActionConfig, envelope: EventEnvelope) -> None:
    """`pull_request_target` runs with the base repository's token and secrets: when the
    workspace holds the fork's head commit (checked out, or merged into what is), its code may
    already have run in this job. Refused before anything else (design: "no checkout of its
    head in a privileged job, ever")."""
    if config.event_name != "pull_request_target":
        return
    pull = envelope.payload.get("pull_request")
    if not isinstance(pull, dict):
        return
    head, base = pull.get("head"), pull.get("base")
    if not isinstance(head, dict) or not isinstance(base, dict):
        return
    head_repo, base_repo = head.get("repo"), base.get("repo")
    head_id = head_repo.get("id") if isinstance(head_repo, dict) else None
    base_id = base_repo.get("id") if isinstance(base_repo, dict) else None
    if head_id is not None and head_id == base_id:
        return  # not a fork: the head is the repository's own branch
    sha = head.get("sha")
    if isinstance(sha, str) and _SHA.fullmatch(sha) and _holds_commit(config, sha):
        raise InvalidInput(FORK_HEAD)


def _holds_commit(config: ActionConfig, sha: str) -> bool:
    """The workspace's HEAD is `sha` or has it in its history (a checkout of the fork's head,
    or of `refs/pull/N/merge`, which merges it): git, no shell."""
    if workspace_head(config) == sha:
        return True
    try:
        done = subprocess.run(
            ["git", "-C", str(config.workspace), "merge-base", "--is-ancestor", sha, "HEAD"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0  # 1: not an ancestor; 128: the commit is not in the workspace


def workspace_head(config: ActionConfig) -> str | None:
    """The commit GITHUB_WORKSPACE has checked out (git, no shell); None when it is no
    repository."""
    try:
        done = subprocess.run(
            ["git", "-C", str(config.workspace), "rev-parse", "--verify", "-q", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    found = done.stdout.strip()
    return found if done.returncode == 0 and found else None


def step_policy(config: ActionConfig) -> Policy:
    """The policy file (from the base checkout) with the step's inputs over its settings."""
    from holon.controller.policy import load_policy

    policy = load_policy(config.policy)
    update: dict[str, Any] = {"intents_per_pass": config.intents_per_pass}
    if config.allowed_bots is not None:
        update["allowed_bots"] = list(config.allowed_bots)
    settings = policy.settings.model_copy(update=update)
    return policy.model_copy(update={"settings": settings})


def _client(env: Mapping[str, str], config: ActionConfig) -> github.Github | None:
    """A client for reading (state artifacts, reconciliation), or None without a token."""
    if not config.has_token:
        return None
    from holon.github.client import GitHubConfig, make_client

    return make_client(GitHubConfig.from_env(env))


def build_step_serve(
    env: Mapping[str, str],
    config: ActionConfig,
    policy: Policy,
    *,
    clock: Callable[[], datetime],
    say: Callable[[str], None],
    run_skill: Any = None,
) -> Serve:
    from holon.crashpoints import arm
    from holon.serve.build import build_serve
    from holon.serve.serve import ServeOptions

    options = ServeOptions(
        state_dir=config.state_dir,
        runs_dir=config.runs_dir,
        workspace=config.workspace,
        policy=config.policy,
        dry_run=config.dry_run,
        once=True,
        keep_reports=True,
        runtime=config.runtime,
        agent=config.agent if config.runtime == "local" else None,
        image=config.agent_image if config.runtime == "docker" else None,
        agent_env=config.agent_env(),
        agent_secrets=dict(config.secrets),
        mention=config.mention,
        repo=config.repository,
    )
    return build_serve(
        options,
        env,
        offline_facts=lambda login: _offline_facts(env, config, policy, login),
        report=say,
        policy=policy,
        run_skill=run_skill,
        clock=clock,
        default_branch=config.default_branch,
        crashpoint=arm(env),  # crash-safety tests' write points (holon/crashpoints.py)
    )


def _offline_facts(
    env: Mapping[str, str], config: ActionConfig, policy: Policy, login: str | None
) -> RepoFacts:
    """A dry run with a token still reads GitHub (who may command Holon, a pull request's
    state): reading changes nothing. Without a token nothing is known but Holon's login."""
    from holon.controller.facts import StaticFacts

    if config.has_token:
        from holon.github.client import GitHubConfig
        from holon.github.live import live_facts

        facts = live_facts(
            GitHubConfig.from_env(env), env, allowed_bots=policy.settings.allowed_bots
        )
        if facts is not None:
            return facts
    return StaticFacts(holon_login=login)


def _reconcile(
    serve: Serve,
    client: github.Github,
    repo: str,
    now: datetime,
    config: ActionConfig,
    login: str | None,
    warn: Callable[[str], None],
) -> tuple[list[str], Record | None]:
    """A tick: the events a dropped or cancelled run missed since the cursor, handled before
    the tick itself (dedupe makes those already handled no-ops); and the new cursor, for the
    caller to put once the step handled every event (`login`: Holon's own items are no
    commands; `warn`: a kind GitHub did not answer, one line)."""
    from holon.actions.reconcile import reconcile

    missed, cursor = reconcile(
        serve.state,
        client,
        repo,
        now=now,
        mention=config.mention,
        login=login,
        warn=warn,
        writer=serve.writer,
    )
    for envelope in missed:
        if serve.stopping.is_set():
            break
        serve.handle(envelope)
    note = [f"reconciled {len(missed)} event(s) a previous run may have missed"] if missed else []
    return note, cursor


def _reactivate(serve: Serve, config: ActionConfig, now: datetime) -> list[str]:
    """Continuable subjects re-dispatch the workflow, within the budget (reactivate.py); a
    spent budget is an operator wait, whose closure the step reports and the comment says."""
    from holon.actions.reactivate import dispatch_reactivations, reactivations
    from holon.closure.record import ClosureRecord

    hooks: Any = serve.hooks
    scope: Scope | None = getattr(hooks, "scope", None)
    workflow_file, ref = config.workflow_file, config.ref
    closures = serve.closures()
    if config.event_name in TICKS:
        closures = {**continuable_in(serve.state), **closures}
    items, records = reactivations(
        closures,
        serve.state,
        budget=config.reactivation_budget,
        now=now,
        writer=serve.writer,
        mention=config.mention or "holon",
    )
    sending = scope is not None and bool(workflow_file) and bool(ref)
    dispatched = {item.subject for item in items}
    for record in records:
        if record.kind == "meta" and not sending and record.data.get("subject") in dispatched:
            continue  # nothing is sent (a dry run, no workflow to dispatch): nothing is pending
        serve.state.put(record)
        if record.kind == "closure":
            closure = ClosureRecord.model_validate(record.data)
            serve.answered[record.key] = closure  # what the step reports for the subject
            if hooks is not None:
                hooks.settle_subject(record.key, closure)
    if not items:
        return []
    if scope is None or not workflow_file or not ref:
        return [f"{item.subject} is continuable; no re-activation sent" for item in items]
    lines = dispatch_reactivations(items, scope, workflow_file=workflow_file, ref=ref)
    for item, text in zip(items, lines, strict=True):
        continuing = closures.get(item.subject)
        if continuing is None:
            continue
        serve.answered[item.subject] = continuing  # a tick reports the work it re-activated
        if text.startswith("re-activated "):
            # The comment says the work continues, and which re-activation carries it.
            recorded = (f"re-activation {item.generation} dispatched",)
            hooks.settle_subject(item.subject, continuing, recorded=recorded)
    return lines


def continuable_in(state: ServeState) -> dict[str, ClosureRecord]:
    """The continuable closures the state holds: a tick re-activates them even when no event
    of its own touched them (their step's dispatch failed or was lost, or that step could not
    send one). A record this build cannot read is left alone."""
    from pydantic import ValidationError

    from holon.closure.record import ClosureRecord

    found: dict[str, ClosureRecord] = {}
    for record in state.live("closure"):
        if record.data.get("closure_outcome") != "continuable":
            continue
        try:
            found[record.key] = ClosureRecord.model_validate(record.data)
        except ValidationError:
            continue
    return found


__all__ = [
    "FORK_HEAD",
    "TICKS",
    "build_step_serve",
    "continuable_in",
    "handle_with_tick",
    "refuse_fork_head",
    "run_step",
    "step_policy",
    "workspace_head",
]
