"""The agent's providers behind the key proxy, end to end: no key in the agent's environment,
HTTP over the proxy's unix socket, the key added on the host, the fake model answering."""

from __future__ import annotations

import json

import pytest

from holon.agent.conversation import UserMessage
from holon.agent.providers.anthropic import AnthropicProvider
from holon.agent.providers.base import ProviderError
from holon.agent.providers.http import JsonHttp, RetryPolicy
from holon.agent.providers.openai import OpenAIProvider
from holon.agent.providers.registry import make_provider, missing
from holon.runner.model_proxy import ModelProxy
from tests.proxy.conftest import KEY, start_proxy
from tests.support.fake_model import FakeModel

HELLO = [UserMessage(text="hello")]


def _env(proxy: ModelProxy, **extra: str) -> dict[str, str]:
    return {"HOLON_MODEL_PROXY": str(proxy.socket_path), **extra}


def test_a_proxied_run_needs_no_key() -> None:
    env = {"HOLON_MODEL_PROXY": "/holon/proxy/model.sock", "HOLON_MODEL_PROVIDER": "anthropic"}
    assert missing(None, env) is None
    assert missing(None, {**env, "HOLON_MODEL_PROVIDER": "openai"}) is None
    assert missing("openai", {"HOLON_MODEL_PROXY": "/holon/proxy/model.sock"}) is None
    # Without the proxy the key is still required, as before.
    assert missing("anthropic", {}) == "ANTHROPIC_API_KEY is not set"


def test_the_proxy_names_the_provider_when_none_is_chosen() -> None:
    base = {"HOLON_MODEL_PROXY": "/holon/proxy/model.sock"}
    assert make_provider(None, {**base, "HOLON_MODEL_PROVIDER": "openai"}).name == "openai"
    assert make_provider(None, {**base, "HOLON_MODEL_PROVIDER": "anthropic"}).name == "anthropic"
    assert make_provider(None, base).name == "anthropic"
    # An explicit choice still wins.
    assert make_provider("openai", {**base, "HOLON_MODEL_PROVIDER": "anthropic"}).name == "openai"


def test_a_relative_socket_path_is_refused() -> None:
    with pytest.raises(ProviderError, match="HOLON_MODEL_PROXY is not an absolute path"):
        make_provider("anthropic", {"HOLON_MODEL_PROXY": "model.sock"})


def test_anthropic_through_the_proxy(fake: FakeModel, proxy: ModelProxy) -> None:
    provider = make_provider(None, _env(proxy, HOLON_MODEL_PROVIDER="anthropic"))
    assert isinstance(provider, AnthropicProvider)
    turn = provider.complete("be brief", HELLO, [], max_tokens=64)
    assert turn.text == "hello from the fake model"
    assert turn.usage.input_tokens == 14
    [seen] = fake.requests
    assert seen.headers["x-api-key"] == KEY
    assert json.loads(seen.body)["messages"][0]["role"] == "user"
    assert proxy.usage().requests == 1


def test_openai_through_the_proxy_to_a_compatible_server(
    fake: FakeModel, proxy: ModelProxy
) -> None:
    env = _env(proxy, HOLON_MODEL_PROVIDER="openai", HOLON_MODEL_PROXY_OPENAI_ITSELF="0")
    provider = make_provider(None, env)
    assert isinstance(provider, OpenAIProvider)
    turn = provider.complete("be brief", HELLO, [], max_tokens=64)
    assert turn.text == "hello from the fake model"
    [seen] = fake.requests
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    body = json.loads(seen.body)
    assert body["max_tokens"] == 64
    assert "max_completion_tokens" not in body


def test_openai_itself_gets_its_own_parameter_names(fake: FakeModel, proxy: ModelProxy) -> None:
    env = _env(proxy, HOLON_MODEL_PROVIDER="openai", HOLON_MODEL_PROXY_OPENAI_ITSELF="1")
    make_provider(None, env).complete("", HELLO, [], max_tokens=64)
    assert json.loads(fake.requests[0].body)["max_completion_tokens"] == 64


def test_many_turns_share_one_connection(fake: FakeModel, proxy: ModelProxy) -> None:
    provider = make_provider(None, _env(proxy))
    for _ in range(5):
        provider.complete("", HELLO, [], max_tokens=8)
    assert proxy.usage().requests == 5
    assert len(fake.requests) == 5
    adapter = provider._http._session.get_adapter("http://model-proxy/")  # type: ignore[attr-defined]
    assert adapter._pool.num_connections == 1


def test_a_token_cap_refusal_is_a_final_provider_error(fake: FakeModel) -> None:
    proxy = start_proxy(fake, token_cap=1)
    try:
        provider = make_provider(None, _env(proxy))
        provider.complete("", HELLO, [], max_tokens=8)
        with pytest.raises(ProviderError, match="token_cap_reached") as caught:
            provider.complete("", HELLO, [], max_tokens=8)
    finally:
        proxy.stop()
    assert caught.value.status == 403
    assert not caught.value.retryable
    assert len(fake.requests) == 1


def test_no_proxy_listening_is_a_clean_retryable_error(tmp_path: object) -> None:
    http = JsonHttp("anthropic", policy=RetryPolicy(attempts=1))
    env = {"HOLON_MODEL_PROXY": "/nonexistent/holon/model.sock"}
    provider = AnthropicProvider.from_env(env, http=http)
    # The session comes with the proxied provider only when it makes its own HTTP layer.
    assert provider.base_url == "http://model-proxy"
    provider = AnthropicProvider.from_env(env)
    provider._http.policy = RetryPolicy(attempts=1)
    with pytest.raises(ProviderError, match="could not connect to http://model-proxy") as caught:
        provider.complete("", HELLO, [], max_tokens=8)
    assert caught.value.retryable
