"""A `Serve` with its GitHub edge, built from options and an environment mapping: what
`holon serve` and `holon action` both run (one construction, so the two cannot drift).

With a token in the environment and no dry run, the serve acts on GitHub through one edge (its
client, live facts, effects, publishing, progress hooks); otherwise it is offline and its effects
are previews. `run_skill` replaces the skill-run handler (fan-out: `decide` defers runs, `settle`
collects what the run jobs left); None keeps the runner's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from holon.controller.decide import Decider
from holon.controller.facts import RepoFacts
from holon.controller.parts import CrashPoint, no_crash
from holon.controller.policy import Policy, load_policy
from holon.executor.handlers import Handler, LazyHandler
from holon.serve.serve import Serve, ServeOptions

if TYPE_CHECKING:
    from holon.github.access import Pull
    from holon.serve.edge import GitHubEdge, WaitForward


def build_serve(
    options: ServeOptions,
    env: Mapping[str, str],
    *,
    offline_facts: Callable[[str | None], RepoFacts],
    report: Callable[[str], None],
    prefer_offline_facts: bool = False,
    crashpoint: CrashPoint = no_crash,
    policy: Policy | None = None,
    run_skill: Handler | None = None,
    workflow: str = "holon",
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    default_branch: str | None = None,
) -> Serve:
    """The serve for `options`; `offline_facts(login)` gives the facts when not on GitHub (or
    always, with `prefer_offline_facts`: `--facts F` wins over live facts). The decider is the
    policy's `settings.decider` (`default_branch`: where its guidance is read)."""
    from holon.github.client import GitHubConfig
    from holon.github.publish_names import SKILL as PUBLISH
    from holon.github.trigger_check import LiveTriggerCheck
    from holon.serve.edge import Forward, WaitForward, github_edge, wants_github
    from holon.serve.github_hooks import GitHubHooks, run_url_of
    from holon.serve.runs import runs_dir_of

    runs = runs_dir_of(options.state_dir, options.runs_dir)
    edge, hooks = None, None
    waits = WaitForward()  # the client's rate-limit waits, journaled by the serve made below
    notes: Forward[str] = Forward()  # the hooks' failed writes, likewise
    login = GitHubConfig.from_env(env).login  # Holon's own, recognized even offline
    policy = policy or load_policy(options.policy)  # once: edge and passes follow one reading
    if wants_github(env, dry_run=options.dry_run):
        edge = github_edge(
            env,
            options.repo,
            clock=clock,
            on_wait=waits,
            settings=policy.settings,
            workflow=workflow,
        )
        hooks = GitHubHooks(edge.scope, edge.facts, run_url=run_url_of(env), note=notes)
        options.repo = edge.repo  # `--repo`, else GITHUB_REPOSITORY: the only one served
    hosted: Any = None
    if edge is not None:
        # Host skills (github-publish) act through the same edge and client, on runs of the
        # runs dir, as the policy's settings.publish allows; made when a run is first
        # published (most passes publish nothing, and publishing imports the runner's git).
        hosted = {PUBLISH: LazyHandler(lambda: _publisher(edge, runs, clock, waits))}
    # Live facts when acting on GitHub, unless offline facts were asked for.
    facts = edge.facts if edge and not prefer_offline_facts else offline_facts(login)
    serve = Serve(
        options,
        clock=clock,
        facts=facts,
        decider=_decider(policy, facts, env, options, default_branch, report),
        crashpoint=crashpoint,
        report=report,
        github=edge.handlers() if edge else None,
        hooks=hooks,
        policy=policy,
        # Each agent run's context is read through the same client (else from the payload).
        context_client=edge.client if edge else None,
        hosted=hosted,
        run_skill=run_skill,
        # Every write of the work first reads its trigger again (frozen inputs).
        trigger_check=LiveTriggerCheck(edge.client) if edge else None,
        # On timer ticks, Holon's pull requests are read to learn which were merged or closed.
        pull_reader=_pull_reader(edge) if edge else None,
    )
    if hooks is not None:
        hooks.skill_of = serve.last_skill  # a stop settles the comment of the work it stopped
        hooks.made_of = serve.last_made
        hooks.made_by = serve.made_by  # what a publishing settled by recovery made
        hooks.spent_of = serve.unit_spend  # what runs of another process spent
        hooks.heads_of = serve.last_heads  # the check runs a later settle completes
        hooks.announced = serve.journal_progress  # `holon report`'s time to first comment
    waits.to = serve.journal_wait
    notes.to = serve.github_note
    return serve


def _decider(
    policy: Policy,
    facts: RepoFacts,
    env: Mapping[str, str],
    options: ServeOptions,
    default_branch: str | None,
    report: Callable[[str], None],
) -> Decider | None:
    """The agent decider when the policy asks for it (None: the policy's own rules)."""
    if policy.settings.decider != "agent":
        return None  # nothing read, nothing imported
    from holon.controller.deciders import make_decider
    from holon.serve.guidance import read_guidance

    guidance, note = read_guidance(options.workspace or Path.cwd(), default_branch)
    if note is not None:
        report(f"decider: {note}")
    return make_decider(policy, facts, env, guidance, report=report)


def _pull_reader(edge: GitHubEdge) -> Callable[[int], Pull]:
    repo, access = edge.repo, edge.facts.access
    return lambda number: access.pull(repo, number)


def _publisher(
    edge: GitHubEdge, runs: Path, clock: Callable[[], datetime], waits: WaitForward
) -> Handler:
    from holon.github.publish_handler import SKILL, publish_handlers

    found = publish_handlers(
        edge.config, edge.repo, runs, clock, waits, edge.publish, client=edge.client
    )
    return found[SKILL]


__all__ = ["build_serve"]
