"""Live facts from configuration: `GitHubFacts` whenever a token is set (docs/github.md, "Facts").

Without a token there is nothing to read GitHub with, and the caller keeps its `StaticFacts`
(given `holon_login=config.login`, so Holon's own writing is still recognized). Inside Actions,
the run's id (`GITHUB_RUN_ID`) marks Holon's own job among the check runs of a sha.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import github

from holon.github.client import GitHubConfig, make_client
from holon.github.facts import GitHubFacts
from holon.github.rest import RestAccess
from holon.github.retry import OnWait


def live_facts(
    config: GitHubConfig,
    env: Mapping[str, str],
    *,
    allowed_bots: Iterable[str] = (),
    on_wait: OnWait | None = None,
    client: github.Github | None = None,
) -> GitHubFacts | None:
    """GitHubFacts over `client` (else a new one for `config`), or None when no token is set.
    Pass the effects' client so reads and writes share one requester: one write-spacing clock
    and one rate-limit state per token."""
    if config.token is None:
        return None
    run_id = env.get("GITHUB_RUN_ID", "") if env.get("GITHUB_ACTIONS") == "true" else ""
    return GitHubFacts(
        RestAccess(client or make_client(config, on_wait=on_wait)),
        login=config.login,
        allowed_bots=allowed_bots,
        own_run_id=run_id if run_id.isascii() and run_id.isdigit() else None,
    )
