"""The providers' timeouts and retries from the environment (`HOLON_MODEL_*`): the defaults when
unset or empty, each value as written, and a bad one refused in one line naming its variable:
by the provider (the agent's run fails, `--probe` says it) and by `holon action` (exit 64)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from holon.actions.config import ActionConfig
from holon.agent.providers import env as settings
from holon.agent.providers.base import ProviderError
from holon.agent.providers.http import RetryPolicy
from holon.agent.providers.registry import make_provider, missing
from holon.errors import InvalidInput
from tests.providers.conftest import ANTHROPIC_KEY, OPENAI_KEY

DEFAULT = RetryPolicy()


def test_unset_or_empty_settings_keep_the_defaults() -> None:
    assert settings.http_policy({}) == DEFAULT
    empty = {name: " " for name in ("HOLON_MODEL_READ_TIMEOUT", "HOLON_MODEL_RETRIES")}
    assert settings.http_policy(empty) == DEFAULT
    assert (DEFAULT.connect_timeout, DEFAULT.read_timeout) == (10, 600)
    assert (DEFAULT.attempts, DEFAULT.max_total_wait) == (5, 120)


def test_each_setting_as_written() -> None:
    policy = settings.http_policy(
        {
            "HOLON_MODEL_CONNECT_TIMEOUT": "250ms",
            "HOLON_MODEL_READ_TIMEOUT": "15m",
            "HOLON_MODEL_RETRIES": "0",
            "HOLON_MODEL_RETRY_DEADLINE": "90",
        }
    )
    assert policy == RetryPolicy(
        attempts=1,
        base_delay=DEFAULT.base_delay,
        max_delay=DEFAULT.max_delay,
        max_total_wait=90,
        connect_timeout=0.25,
        read_timeout=900,
    )
    assert settings.http_policy({"HOLON_MODEL_RETRY_DEADLINE": "0"}).max_total_wait == 0
    assert settings.http_policy({"HOLON_MODEL_RETRIES": "10"}).attempts == 11


@pytest.mark.parametrize(
    ("variable", "value", "why"),
    [
        ("HOLON_MODEL_READ_TIMEOUT", "soon", "invalid duration 'soon'"),
        ("HOLON_MODEL_READ_TIMEOUT", "0", "must be greater than zero"),
        ("HOLON_MODEL_READ_TIMEOUT", "-5s", "invalid duration '-5s'"),
        ("HOLON_MODEL_READ_TIMEOUT", "25h", "at most 1d"),
        ("HOLON_MODEL_CONNECT_TIMEOUT", "nan", "invalid duration 'nan'"),
        ("HOLON_MODEL_RETRY_DEADLINE", "1e9", "invalid duration '1e9'"),
        ("HOLON_MODEL_RETRIES", "11", "must be a whole number from 0 to 10, not '11'"),
        ("HOLON_MODEL_RETRIES", "-1", "must be a whole number from 0 to 10"),
        ("HOLON_MODEL_RETRIES", "٣", "must be a whole number from 0 to 10"),
        ("HOLON_MODEL_RETRIES", "2.5", "must be a whole number from 0 to 10"),
    ],
)
def test_a_bad_setting_is_one_line_naming_its_variable(variable: str, value: str, why: str) -> None:
    with pytest.raises(ProviderError) as caught:
        settings.http_policy({variable: value})
    message = str(caught.value)
    assert message.startswith(f"{variable}: "), message
    assert why in message
    assert "\n" not in message
    with pytest.raises(InvalidInput) as refused:
        ActionConfig.from_env({"GITHUB_WORKSPACE": "/ws", variable: value})
    assert str(refused.value) == message


def test_a_secret_pasted_as_a_setting_is_not_echoed() -> None:
    with pytest.raises(ProviderError) as caught:
        settings.http_policy({"HOLON_MODEL_READ_TIMEOUT": ANTHROPIC_KEY})
    assert ANTHROPIC_KEY not in str(caught.value)
    assert ANTHROPIC_KEY[:20] not in str(caught.value)


def test_the_providers_use_the_settings_direct_and_behind_the_key_proxy() -> None:
    env = {"HOLON_MODEL_READ_TIMEOUT": "3s", "HOLON_MODEL_RETRIES": "2"}
    direct = [
        make_provider("anthropic", {**env, "ANTHROPIC_API_KEY": ANTHROPIC_KEY}),
        make_provider("openai", {**env, "OPENAI_API_KEY": OPENAI_KEY}),
        make_provider("openai", {**env, "HOLON_MODEL_PROXY": "/run/holon/model.sock"}),
        make_provider("anthropic", {**env, "HOLON_MODEL_PROXY": "/run/holon/model.sock"}),
    ]
    for provider in direct:
        policy = provider._http.policy  # type: ignore[attr-defined]
        assert (policy.read_timeout, policy.attempts) == (3, 3), provider


def test_a_bad_setting_stops_the_provider_and_the_probe_names_it() -> None:
    env = {"OPENAI_API_KEY": OPENAI_KEY, "HOLON_MODEL_CONNECT_TIMEOUT": "forever"}
    with pytest.raises(ProviderError, match=r"^HOLON_MODEL_CONNECT_TIMEOUT: invalid duration"):
        make_provider(None, env)
    assert str(missing(None, env)).startswith("HOLON_MODEL_CONNECT_TIMEOUT: invalid duration")


def test_holon_action_refuses_a_bad_setting_with_exit_64(tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "RUNNER_TEMP": str(tmp_path / "temp"),
        "GITHUB_WORKSPACE": str(tmp_path),
        "HOLON_MODEL_READ_TIMEOUT": "600hours",
    }
    done = subprocess.run(
        [sys.executable, "-m", "holon", "action"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 64, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        "holon: error: HOLON_MODEL_READ_TIMEOUT: invalid duration '600hours': "
        "use 90s, 5m, 1h30m, 250ms or bare seconds"
    ]


def test_holon_action_forwards_the_settings_to_every_run() -> None:
    config = ActionConfig.from_env(
        {"GITHUB_WORKSPACE": "/ws", "HOLON_MODEL_READ_TIMEOUT": " 90s ", "HOLON_MODEL_RETRIES": ""}
    )
    assert config.agent_env() == {"HOLON_MODEL_READ_TIMEOUT": "90s"}
