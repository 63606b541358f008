"""What `holon serve` acts on GitHub with when a token is configured: the client, the event
repository's handle and the executor's GitHub handler, built from an environment mapping the
caller passes in (the CLI passes the process environment; tests pass their own)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from holon.errors import InvalidInput
from holon.github.client import GitHubConfig, make_client
from holon.github.effects import Scope
from holon.github.handler import EFFECTS, GitHubHandler
from holon.github.pygithub_repo import open_repo
from holon.github.retry import Wait

TOKEN_VARIABLE = "GITHUB_TOKEN"  # noqa: S105 (the variable's name, not a token)


class WaitForward:
    """The client's wait reports, passed on to whoever is set later (the serve made after it)."""

    def __init__(self) -> None:
        self.to: Callable[[Wait], None] | None = None

    def __call__(self, wait: Wait) -> None:
        if self.to is not None:
            self.to(wait)


@dataclass(frozen=True)
class GitHubEdge:
    config: GitHubConfig
    repo: str
    handler: GitHubHandler

    def handlers(self) -> dict[str, GitHubHandler]:
        """The executor's handlers this edge performs, by effect."""
        return {name: self.handler for name in EFFECTS}


def wants_github(env: Mapping[str, str], *, dry_run: bool) -> bool:
    """A token in the environment and no dry run: serve acts on GitHub for real."""
    return not dry_run and bool(env.get(TOKEN_VARIABLE))


def github_edge(
    env: Mapping[str, str],
    repo: str | None,
    *,
    clock: Callable[[], datetime],
    on_wait: Callable[[Wait], None],
    workflow: str = "holon",
) -> GitHubEdge:
    """The edge on `repo` (`--repo`, else `GITHUB_REPOSITORY`): effects land there only."""
    repo = repo or env.get("GITHUB_REPOSITORY") or None
    if repo is None:
        raise InvalidInput(
            "acting on GitHub needs the repository: pass --repo OWNER/NAME "
            "(or set GITHUB_REPOSITORY)"
        )
    config = GitHubConfig.from_env(env)
    client = make_client(config, on_wait=on_wait)
    scope = Scope(open_repo(client, repo), repo, config.login, workflow=workflow)
    return GitHubEdge(config, repo, GitHubHandler(scope, clock))
