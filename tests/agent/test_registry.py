"""Choosing the engine and the model, and telling secret variables from the rest."""

from __future__ import annotations

import pytest

from holon.agent.engines.registry import engine_name, model_name
from holon.agent.hygiene import is_secret, split_environment
from tests.agent.fakes import KEY


def test_engine_flag_then_env_then_builtin() -> None:
    assert engine_name("codex", {"HOLON_ENGINE": "replay"}) == "codex"
    assert engine_name(None, {"HOLON_ENGINE": "replay"}) == "replay"
    assert engine_name(None, {}) == "builtin"


def test_model_flag_then_env_then_the_engines_default() -> None:
    assert model_name("m1", {"HOLON_MODEL": "m2"}) == "m1"
    assert model_name(None, {"HOLON_MODEL": "m2"}) == "m2"
    assert model_name(None, {"HOLON_MODEL": ""}) is None


@pytest.mark.parametrize(
    ("name", "value", "secret"),
    [
        ("ANTHROPIC_API_KEY", "x", True),
        ("OPENAI_API_KEY", "x", True),
        ("CLAUDE_CODE_OAUTH_TOKEN", "x", True),
        ("GH_TOKEN", "x", True),
        ("AWS_SECRET_ACCESS_KEY", "x", True),
        ("PGPASSWORD", "x", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", "x", True),
        ("HARMLESS", KEY, True),  # the value gives it away
        ("PROXY", "https://user:pw@proxy.example", True),
        ("PATH", "/usr/bin", False),
        ("HOLON_REPLAY_SESSION", "/holon/input/session.ndjson", False),
        ("TOKENIZERS_PARALLELISM", "false", False),
        ("GIT_SHA", "0123456789abcdef0123456789abcdef01234567", False),
    ],
)
def test_what_is_secret(name: str, value: str, secret: bool) -> None:
    assert is_secret(name, value) is secret


def test_split_environment_redacts_what_it_leaves_out() -> None:
    kept, redactor = split_environment({"PATH": "/bin", "MY_TOKEN": "value-of-token"})
    assert kept == {"PATH": "/bin"}
    assert redactor("say value-of-token") == "say ***"
