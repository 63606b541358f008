"""Choosing a provider by name or by the credentials set, and the probe's check."""

from __future__ import annotations

import pytest

from holon.agent.providers.anthropic import AnthropicProvider
from holon.agent.providers.base import MissingCredentials, ProviderError
from holon.agent.providers.openai import OpenAIProvider
from holon.agent.providers.registry import NO_CREDENTIALS, make_provider, missing
from tests.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY

BOTH = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "OPENAI_API_KEY": OPENAI_KEY}


def test_by_name() -> None:
    assert isinstance(make_provider("openai", BOTH), OpenAIProvider)
    assert isinstance(make_provider("Anthropic", BOTH), AnthropicProvider)


def test_holon_provider_when_no_name_is_given() -> None:
    assert isinstance(make_provider(None, {**BOTH, "HOLON_PROVIDER": "openai"}), OpenAIProvider)
    # the argument (--provider) wins over the variable
    chosen = make_provider("anthropic", {**BOTH, "HOLON_PROVIDER": "openai"})
    assert isinstance(chosen, AnthropicProvider)


def test_by_the_credentials_set_anthropic_first() -> None:
    assert isinstance(make_provider(None, BOTH), AnthropicProvider)
    assert isinstance(make_provider(None, {"OPENAI_API_KEY": OPENAI_KEY}), OpenAIProvider)
    local = make_provider(None, {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"})
    assert isinstance(local, OpenAIProvider)
    empty_key = {"ANTHROPIC_API_KEY": " ", "OPENAI_API_KEY": OPENAI_KEY}
    assert isinstance(make_provider(None, empty_key), OpenAIProvider)


def test_the_model_is_passed_on() -> None:
    assert make_provider(None, BOTH, model="claude-z").model == "claude-z"
    assert make_provider(None, {**BOTH, "HOLON_MODEL": "claude-q"}).model == "claude-q"


def test_no_credentials_at_all() -> None:
    with pytest.raises(MissingCredentials) as caught:
        make_provider(None, {"HOLON_PROVIDER": ""})
    assert str(caught.value) == NO_CREDENTIALS
    assert NO_CREDENTIALS == (
        "no model credentials: set ANTHROPIC_API_KEY or OPENAI_API_KEY "
        "(or OPENAI_BASE_URL for a local server)"
    )


def test_an_unknown_name_lists_the_known_ones() -> None:
    for chosen, env in (("gemini", BOTH), (None, {**BOTH, "HOLON_PROVIDER": "gemini"})):
        with pytest.raises(ProviderError) as caught:
            make_provider(chosen, env)
        assert not isinstance(caught.value, MissingCredentials)
        assert str(caught.value) == "unknown model provider 'gemini' (known: anthropic, openai)"


def test_an_unknown_name_is_shown_bounded_and_never_as_a_secret() -> None:
    with pytest.raises(ProviderError) as caught:
        make_provider(ANTHROPIC_KEY, BOTH)
    assert ANTHROPIC_KEY.lower() not in str(caught.value)
    with pytest.raises(ProviderError, match=r"'x{40}…'"):
        make_provider("x" * 100, BOTH)


def test_missing_names_what_is_missing_without_a_request() -> None:
    # No request is sent: the test's network guard would fail any connection, and
    # `responses` is not active.
    assert missing(None, BOTH) is None
    assert missing(None, {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}) is None
    assert missing(None, {}) == NO_CREDENTIALS
    assert missing("anthropic", {"OPENAI_API_KEY": OPENAI_KEY}) == "ANTHROPIC_API_KEY is not set"
    assert missing("openai", {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}) == "OPENAI_API_KEY is not set"
    assert missing("nope", BOTH) == "unknown model provider 'nope' (known: anthropic, openai)"
    bad_url = {"OPENAI_BASE_URL": "localhost:8080"}
    assert (missing(None, bad_url) or "").startswith("OPENAI_BASE_URL is not an http(s) URL")
    bad_key = missing(None, {"ANTHROPIC_API_KEY": ANTHROPIC_KEY + " x"})
    assert bad_key == "ANTHROPIC_API_KEY holds whitespace or control characters"
