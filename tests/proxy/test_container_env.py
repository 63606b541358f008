"""What the docker backend puts in a container's environment when the run has a model key (no
engine needed: the environment is decided before the container is made)."""

from __future__ import annotations

import pytest

from holon.errors import InvalidInput
from holon.runner.backend import BackendOptions
from holon.runner.docker_backend import DockerBackend
from tests.proxy.conftest import KEY


def _backend(**options: object) -> DockerBackend:
    return DockerBackend(BackendOptions(image="holon-test", **options))  # type: ignore[arg-type]


def test_model_keys_and_their_base_urls_stay_on_the_host() -> None:
    env = {
        "ANTHROPIC_API_KEY": KEY,
        "OPENAI_API_KEY": KEY + "-openai",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/gateway",
        "HOLON_MODEL_PROXY": "/tmp/planted.sock",  # never the spec's to say
        "MODE": "x",
    }
    proxy, notes = _backend()._model_proxy(env)
    assert proxy is not None
    try:
        assert notes == []
        assert env == {
            "MODE": "x",
            "HOLON_MODEL_PROXY": "/holon/proxy/model.sock",
            "HOLON_MODEL_PROVIDER": "anthropic",
            "HOLON_MODEL_PROXY_OPENAI_ITSELF": "1",
        }
        upstreams = {path: route.upstream for path, route in proxy.routes.items()}
        assert upstreams == {
            "/v1/messages": "http://127.0.0.1:9/gateway/v1/messages",
            "/v1/chat/completions": "https://api.openai.com/v1/chat/completions",
        }
        assert proxy.directory is not None
        assert proxy.directory.is_dir()
    finally:
        proxy.stop()
    assert not proxy.directory.exists()


def test_the_network_defaults_to_none_only_behind_the_proxy() -> None:
    assert _backend()._network(True) == ("none", None)
    assert _backend()._network(False) == ("bridge", None)
    assert _backend(network="bridge")._network(True) == ("bridge", None)
    assert _backend(network="mynet")._network(True) == ("mynet", {"EndpointsConfig": {"mynet": {}}})


@pytest.mark.parametrize("engine", ["claude-code", "codex"])
def test_the_cli_engines_get_their_key_as_before_with_a_note(engine: str) -> None:
    env = {"ANTHROPIC_API_KEY": KEY, "HOLON_ENGINE": engine}
    proxy, notes = _backend()._model_proxy(env)
    assert proxy is None
    assert env["ANTHROPIC_API_KEY"] == KEY
    assert notes == [
        f"ANTHROPIC_API_KEY passed into the container: the {engine} engine cannot use it yet"
    ]


def test_a_run_may_ask_for_no_proxy() -> None:
    env = {"OPENAI_API_KEY": KEY}
    proxy, notes = _backend(model_proxy=False)._model_proxy(env)
    assert proxy is None
    assert env == {"OPENAI_API_KEY": KEY}
    assert notes == ["OPENAI_API_KEY passed into the container: the run asked for no model proxy"]


def test_no_model_key_no_proxy_and_no_note() -> None:
    env = {"OTHER_TOKEN": "x" * 20, "ANTHROPIC_API_KEY": "  "}
    assert _backend()._model_proxy(env) == (None, [])


def test_a_bad_base_url_is_one_line_naming_the_variable() -> None:
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "ftp://example.invalid"}
    with pytest.raises(InvalidInput, match=r"OPENAI_BASE_URL is not an http\(s\) URL"):
        _backend()._model_proxy(env)
