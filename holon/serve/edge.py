"""What `holon serve` acts on GitHub with when a token is configured: the client, the event
repository's handle, the live facts (read by the decider, the guardrails and the merge alike),
the executor's GitHub handlers and what publishing may do (`settings.publish`), built from an
environment mapping the caller passes in (the CLI passes the process environment; tests pass
their own) and the policy's settings.

One client serves them all (and publishing, `publish_handlers(client=edge.client)`): write
spacing and rate-limit waits are per token, so they must be kept by one requester, not one per
caller (two clients would each space their own writes and send them back to back)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

import github

from holon.controller.policy import Settings
from holon.errors import InvalidInput
from holon.executor.handlers import Handler
from holon.github.client import GitHubConfig, make_client
from holon.github.effects import Scope
from holon.github.errors import GitHubError
from holon.github.facts import GitHubFacts
from holon.github.handler import EFFECTS, GitHubHandler
from holon.github.live import live_facts
from holon.github.merge_handler import MergeHandler
from holon.github.neutralize import rules_for
from holon.github.publish_policy import PublishPolicy
from holon.github.pygithub_repo import open_repo
from holon.github.rest import repo_path
from holon.github.retry import Wait
from holon.terminal import line

T = TypeVar("T")
TOKEN_VARIABLE = "GITHUB_TOKEN"  # noqa: S105 (the variable's name, not a token)


class Forward(Generic[T]):
    """Reports (the client's waits, failed writes), passed on to whoever is set later (the
    serve made after the edge)."""

    def __init__(self) -> None:
        self.to: Callable[[T], None] | None = None

    def __call__(self, item: T) -> None:
        if self.to is not None:
            self.to(item)


class WaitForward(Forward[Wait]):
    """The client's wait reports."""


@dataclass(frozen=True)
class GitHubEdge:
    config: GitHubConfig
    client: github.Github  # the one requester facts, effects and publishing go through
    repo: str
    scope: Scope
    facts: GitHubFacts
    handler: GitHubHandler
    merge: MergeHandler
    publish: PublishPolicy  # for the host skill github-publish (publish_handlers)

    def handlers(self) -> dict[str, Handler]:
        """The executor's handlers this edge performs, by effect."""
        found: dict[str, Handler] = {name: self.handler for name in EFFECTS}
        found["merge"] = self.merge
        return found


def wants_github(env: Mapping[str, str], *, dry_run: bool) -> bool:
    """A token in the environment and no dry run: serve acts on GitHub for real."""
    return not dry_run and bool(env.get(TOKEN_VARIABLE))


def github_edge(
    env: Mapping[str, str],
    repo: str | None,
    *,
    clock: Callable[[], datetime],
    on_wait: Callable[[Wait], None],
    settings: Settings,
    workflow: str = "holon",
) -> GitHubEdge:
    """The edge on `repo` (`--repo`, else `GITHUB_REPOSITORY`): effects land there only."""
    source = "--repo" if repo else "GITHUB_REPOSITORY"
    repo = repo or env.get("GITHUB_REPOSITORY") or None
    if repo is None:
        raise InvalidInput(
            "acting on GitHub needs the repository: pass --repo OWNER/NAME "
            "(or set GITHUB_REPOSITORY)"
        )
    try:
        repo_path(repo)  # a name GitHub could not have (`a/b/c`, `../x`, a newline) is refused
    except GitHubError:
        shown = line(repr(repo), limit=120)
        raise InvalidInput(f"{source} must name a repository as OWNER/NAME, not {shown}") from None
    config = GitHubConfig.from_env(env)
    client = make_client(config, on_wait=on_wait)
    # What Holon's bodies may link to: the policy's hosts and the repository's own.
    rules = rules_for(settings.link_domains, config.api_url, env.get("GITHUB_SERVER_URL"))
    scope = Scope(open_repo(client, repo), repo, config.login, workflow=workflow, rules=rules)
    facts = live_facts(
        config, env, allowed_bots=settings.allowed_bots, on_wait=on_wait, client=client
    )
    if facts is None:  # wants_github saw a token, so the configuration holds one
        raise InvalidInput(f"acting on GitHub needs {TOKEN_VARIABLE}")
    merge = MergeHandler(
        scope,
        facts,
        clock,
        hold_labels=settings.hold_labels,
        wip_markers=settings.wip_markers,
    )
    # The marker's workflow name is the edge's, as every other effect's; the rest is the policy's.
    publish = PublishPolicy(
        **settings.publish.model_dump(),
        workflow=workflow,
        link_domains=tuple(sorted(rules.domains)),
    )
    return GitHubEdge(
        config, client, repo, scope, facts, GitHubHandler(scope, clock), merge, publish
    )
