"""GitHub configuration from an environment mapping: API URL, token, login, spacing, limits."""

from __future__ import annotations

import pytest

from holon.errors import InvalidInput
from holon.github.client import ACTIONS_LOGIN, DEFAULT_API_URL, GitHubConfig

ACTIONS_TOKEN = "ghs_" + "b2" * 18
PAT = "ghp_" + "c3" * 18


def test_defaults() -> None:
    config = GitHubConfig.from_env({})
    assert config.api_url == DEFAULT_API_URL == "https://api.github.com"
    assert config.token is None
    assert config.login is None
    assert (config.write_spacing, config.timeout, config.max_wait, config.retries) == (
        1.0,
        30.0,
        90.0,
        3,
    )


def test_only_the_mapping_passed_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", PAT)
    monkeypatch.setenv("GITHUB_API_URL", "https://elsewhere.example")
    config = GitHubConfig.from_env({})
    assert config.token is None
    assert config.api_url == DEFAULT_API_URL


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("https://api.github.com/", "https://api.github.com"),
        ("https://ghe.example.com/api/v3", "https://ghe.example.com/api/v3"),
        ("https://ghe.example.com/api/v3/", "https://ghe.example.com/api/v3"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://localhost:1/api/v3", "http://localhost:1/api/v3"),
        ("http://[::1]:9", "http://[::1]:9"),
    ],
)
def test_github_api_url_is_honoured(given: str, kept: str) -> None:
    assert GitHubConfig.from_env({"GITHUB_API_URL": given}).api_url == kept


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ("http://ghe.example.com/api/v3", "must be https (http only to a loopback address)"),
        ("ftp://ghe.example.com", "must be an http(s) URL"),
        ("api.github.com", "must be an http(s) URL"),
        (f"https://x:{PAT}@ghe.example.com", "no user, password, query or fragment"),
        ("https://ghe.example.com/api/v3?token=1", "no user, password, query or fragment"),
    ],
)
def test_a_bad_api_url_is_refused_without_echoing_it(given: str, words: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        GitHubConfig.from_env({"GITHUB_API_URL": given})
    assert str(caught.value).startswith("GITHUB_API_URL: ")
    assert words in str(caught.value)
    assert given not in str(caught.value)
    assert PAT not in str(caught.value)


def test_the_token_is_never_shown() -> None:
    config = GitHubConfig.from_env({"GITHUB_TOKEN": PAT})
    assert config.token is not None
    assert config.token.get_secret_value() == PAT
    for shown in (repr(config), str(config), config.model_dump_json(), str(config.model_dump())):
        assert PAT not in shown


@pytest.mark.parametrize(
    ("env", "login"),
    [
        ({"GITHUB_ACTIONS": "true", "GITHUB_TOKEN": ACTIONS_TOKEN}, ACTIONS_LOGIN),
        ({"GITHUB_ACTIONS": "true", "GITHUB_TOKEN": PAT}, None),  # a person's token: unknown
        ({"GITHUB_ACTIONS": "true"}, None),
        ({"GITHUB_TOKEN": ACTIONS_TOKEN}, None),  # not in Actions
        (
            {
                "GITHUB_ACTIONS": "true",
                "GITHUB_TOKEN": ACTIONS_TOKEN,
                "HOLON_GITHUB_LOGIN": "my-app[bot]",
            },
            "my-app[bot]",
        ),
        ({"HOLON_GITHUB_LOGIN": "octocat"}, "octocat"),
    ],
)
def test_holons_login(env: dict[str, str], login: str | None) -> None:
    assert GitHubConfig.from_env(env).login == login


@pytest.mark.parametrize(
    "login", ["octo cat", "-octocat", "a" * 40, "octocat[bot]x", "<b>", "a--b"]
)
def test_a_login_github_would_not_have_is_refused(login: str) -> None:
    with pytest.raises(InvalidInput, match="HOLON_GITHUB_LOGIN: must be a GitHub login"):
        GitHubConfig.from_env({"HOLON_GITHUB_LOGIN": login})


def test_spacing_timeout_wait_and_retries() -> None:
    config = GitHubConfig.from_env(
        {
            "HOLON_GITHUB_WRITE_SPACING": "0",
            "HOLON_GITHUB_TIMEOUT": "1m",
            "HOLON_GITHUB_MAX_WAIT": "250ms",
            "HOLON_GITHUB_RETRIES": "0",
            "HOLON_GITHUB_BACKOFF": "0",
        }
    )
    assert (
        config.write_spacing,
        config.timeout,
        config.max_wait,
        config.retries,
        config.backoff,
    ) == (0.0, 60.0, 0.25, 0, 0.0)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HOLON_GITHUB_TIMEOUT", "0"),
        ("HOLON_GITHUB_TIMEOUT", "soon"),
        ("HOLON_GITHUB_WRITE_SPACING", "-1"),
        ("HOLON_GITHUB_MAX_WAIT", "nan"),
        ("HOLON_GITHUB_RETRIES", "11"),
        ("HOLON_GITHUB_RETRIES", "two"),
        ("HOLON_GITHUB_BACKOFF", "-1s"),
    ],
)
def test_a_bad_number_names_its_variable(name: str, value: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        GitHubConfig.from_env({name: value})
    assert str(caught.value).startswith(f"{name}: ")
