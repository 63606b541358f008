"""live_facts: GitHubFacts whenever a token is set, Holon's login and own Actions run from the
configuration and the environment; over real HTTP against the loopback GitHub."""

from __future__ import annotations

from holon.github.client import GitHubConfig
from holon.github.live import live_facts
from tests.github.merge_support import REPO, TOKEN
from tests.support.github_fake import LoopbackGitHub


def test_no_token_no_live_facts() -> None:
    assert live_facts(GitHubConfig.from_env({}), {}) is None


def test_a_token_reads_github(github_server: LoopbackGitHub) -> None:
    github_server.state.repos[REPO].permissions["octocat"] = "maintain"
    env = {
        "GITHUB_API_URL": github_server.url,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_ACTIONS": "true",
        "GITHUB_RUN_ID": "4242",
    }
    facts = live_facts(GitHubConfig.from_env(env), env, allowed_bots=["renovate[bot]"])
    assert facts is not None
    assert facts.permission(REPO, "octocat") == "maintain"
    assert facts.is_holon("github-actions[bot]")  # the Actions token's login
    assert facts.allowed_bots == ("renovate[bot]",)
    assert facts.own_run == "/actions/runs/4242/"
    assert github_server.operations() == ["repos/get-collaborator-permission-level"]


def test_the_run_id_counts_only_in_actions_and_only_as_digits() -> None:
    token = {"GITHUB_TOKEN": TOKEN, "HOLON_GITHUB_LOGIN": "holon-user"}
    config = GitHubConfig.from_env(token)
    outside = live_facts(config, {**token, "GITHUB_RUN_ID": "1"})
    assert outside is not None
    assert outside.own_run is None
    odd = live_facts(config, {**token, "GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "1/../2"})
    assert odd is not None
    assert odd.own_run is None
    assert odd.is_holon("Holon-User")
