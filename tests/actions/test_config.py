"""`ActionConfig.from_env`: every variable of the design table, and one line per bad value."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from holon import __version__
from holon.actions.config import IMAGE, ActionConfig
from holon.errors import InvalidInput


def test_defaults_without_any_variable(tmp_path: Path) -> None:
    config = ActionConfig.from_env({"RUNNER_TEMP": str(tmp_path), "GITHUB_WORKSPACE": "/ws"})
    assert (config.mode, config.phase, config.runtime) == ("single", "main", "docker")
    assert config.agent_image == f"{IMAGE}:{__version__}"
    assert config.agent == [sys.executable, "-m", "holon", "agent"]
    assert (config.dry_run, config.fail_on_waiting) == (False, False)
    assert (config.intents_per_pass, config.reactivation_budget) == (5, 3)
    assert config.mention == "holon"
    assert config.allowed_bots is None
    assert config.state_dir == tmp_path / "holon/state"
    assert config.runs_dir == tmp_path / "holon/runs"
    assert config.upload_dir == tmp_path / "holon/upload"
    assert config.policy is None
    assert not config.has_token
    assert config.secrets == {}
    assert config.agent_env() == {}


def test_every_variable_is_read() -> None:
    env = {
        "GITHUB_TOKEN": "ghs_x",
        "ANTHROPIC_API_KEY": "sk-ant-1",
        "HOLON_POLICY": ".github/holon.yaml",
        "HOLON_MODE": "decide",
        "HOLON_PHASE": "cleanup",
        "HOLON_RUNTIME": "LOCAL",
        "HOLON_AGENT_IMAGE": "ghcr.io/me/agent:1",
        "HOLON_AGENT": "holon agent --flag",
        "HOLON_ENGINE": "replay",
        "HOLON_REPLAY_SESSION": "example:solve-calc",
        "HOLON_MODEL": "claude-sonnet-4",
        "HOLON_MENTION": "bot",
        "HOLON_ALLOWED_BOTS": "renovate[bot], dependabot[bot]",
        "HOLON_DRY_RUN": "TRUE",
        "HOLON_INTENTS_PER_PASS": "2",
        "HOLON_REACTIVATION_BUDGET": "0",
        "HOLON_FAIL_ON_WAITING": "true",
        "HOLON_STATE_DIR": "/s",
        "HOLON_RUNS_DIR": "/r",
        "HOLON_CACHE_DIR": "/c",
        "HOLON_UPLOAD_DIR": "/u",
        "HOLON_RUN_OUTPUTS": "/o",
        "HOLON_BUNDLE_DIR": "/b",
        "GITHUB_WORKSPACE": "/ws",
        "GITHUB_WORKFLOW_REF": "o/r/.github/workflows/holon.yml@refs/heads/main",
        "GITHUB_RUN_ID": "12",
        "GITHUB_RUN_ATTEMPT": "3",
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_REPOSITORY_ID": "99",
    }
    config = ActionConfig.from_env(env)
    assert (config.mode, config.phase, config.runtime) == ("decide", "cleanup", "local")
    assert config.policy == Path("/ws/.github/holon.yaml")
    assert config.agent == ["holon", "agent", "--flag"]
    assert config.agent_image == "ghcr.io/me/agent:1"
    assert config.agent_env() == {
        "HOLON_ENGINE": "replay",
        "HOLON_REPLAY_SESSION": "example:solve-calc",
        "HOLON_MODEL": "claude-sonnet-4",
    }
    assert config.mention == "bot"
    assert config.allowed_bots == ["renovate[bot]", "dependabot[bot]"]
    assert (config.dry_run, config.fail_on_waiting) == (True, True)
    assert (config.intents_per_pass, config.reactivation_budget) == (2, 0)
    assert (config.state_dir, config.runs_dir, config.cache_dir) == (
        Path("/s"),
        Path("/r"),
        Path("/c"),
    )
    assert (config.upload_dir, config.run_outputs, config.bundle_dir) == (
        Path("/u"),
        Path("/o"),
        Path("/b"),
    )
    assert config.workflow_file == "holon.yml"
    assert (config.run_id, config.run_attempt, config.repository_id) == ("12", "3", "99")
    assert config.has_token
    assert list(config.secrets) == ["ANTHROPIC_API_KEY"]
    assert "sk-ant-1" not in repr(config)  # a SecretStr never shows its value


def test_replay_settings_are_forwarded_only_to_the_replay_engine() -> None:
    env = {"HOLON_ENGINE": "builtin", "HOLON_REPLAY_SESSION": "example:x"}
    assert ActionConfig.from_env(env).agent_env() == {"HOLON_ENGINE": "builtin"}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("HOLON_DRY_RUN", "yes"),
        ("HOLON_DRY_RUN", "1"),
        ("HOLON_FAIL_ON_WAITING", "on"),
        ("HOLON_INTENTS_PER_PASS", "0"),
        ("HOLON_INTENTS_PER_PASS", "-1"),
        ("HOLON_INTENTS_PER_PASS", "٣"),  # a digit, but not an ASCII one
        ("HOLON_REACTIVATION_BUDGET", "lots"),
        ("HOLON_MODE", "fanout"),
        ("HOLON_PHASE", "after"),
        ("HOLON_RUNTIME", "podman"),
        ("HOLON_ENGINE", "gpt"),
        ("HOLON_MENTION", "/holon"),
        ("HOLON_ALLOWED_BOTS", "renovate[bot],bad login"),
        ("HOLON_AGENT", "'unclosed"),
        ("HOLON_AGENT_IMAGE", "image name; rm -rf /"),
        ("HOLON_MODEL", "model\nname"),
        ("HOLON_WORKFLOW_FILE", "../x.yml"),
        ("GITHUB_RUN_ID", "12; echo"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_input(name: str, value: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        ActionConfig.from_env({name: value})
    message = str(caught.value)
    assert message.startswith(f"{name}:")
    assert "\n" not in message


def test_booleans_are_exactly_true_or_false_in_any_case() -> None:
    for value, expected in (("true", True), ("True", True), ("false", False), ("FALSE", False)):
        assert ActionConfig.from_env({"HOLON_DRY_RUN": value}).dry_run is expected


def test_the_agents_own_directories_are_never_read(tmp_path: Path) -> None:
    env = {"HOLON_OUTPUT_DIR": "/evil", "HOLON_INPUT_DIR": "/evil", "RUNNER_TEMP": str(tmp_path)}
    config = ActionConfig.from_env(env)
    assert "/evil" not in repr(config)


def test_the_cache_is_merged_only_on_a_run_of_the_default_branch() -> None:
    on_main = ActionConfig.from_env({"GITHUB_REF": "refs/heads/main"})
    assert not on_main.default_branch_run  # unknown default branch: no
    event = {"repository": {"default_branch": "main"}}
    assert on_main.with_event(event).default_branch_run
    pull = ActionConfig.from_env({"GITHUB_REF": "refs/pull/7/merge"}).with_event(event)
    assert not pull.default_branch_run
    named = ActionConfig.from_env(
        {"GITHUB_REF": "refs/heads/trunk", "HOLON_DEFAULT_BRANCH": "trunk"}
    )
    assert named.with_event(event).default_branch_run  # the variable wins over the event
    ids = ActionConfig.from_env({"GITHUB_REPOSITORY": "o/r", "GITHUB_REPOSITORY_ID": "42"})
    assert (ids.repo, ids.repo_id) == ("o/r", 42)


def _composite_variables() -> list[str]:
    """Every variable the composite's holon and cleanup steps set, every one of the design's
    table, and every GITHUB_* one the config reads."""
    import yaml

    from holon.actions.config import VARIABLES

    root = Path(__file__).resolve().parents[2]
    steps = yaml.safe_load((root / "action.yml").read_text())["runs"]["steps"]
    names = {n for s in steps if s.get("id") in ("holon", "cleanup") for n in s["env"]}
    for listed, _ in VARIABLES:
        names.update(n.strip() for n in listed.split(",") if "*" not in n)
    github = ("EVENT_NAME", "EVENT_PATH", "REPOSITORY", "REPOSITORY_ID", "RUN_ID", "RUN_ATTEMPT")
    github += ("SERVER_URL", "REF", "WORKSPACE", "WORKFLOW_REF", "ACTOR")
    names.update(f"GITHUB_{n}" for n in github)
    names.update(("RUNNER_TEMP", "HOLON_REPLAY_SESSION"))
    return sorted(names - {"HOLON_BIN"})  # the step's own, not read by holon action


@pytest.mark.parametrize("name", _composite_variables())
@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_variable_is_exactly_an_unset_one(name: str, empty: str) -> None:
    """The composite passes "" for an input left unset (`${{ inputs.x }}`): every variable
    then means what its absence means, its default, never a bad value."""
    base = {"RUNNER_TEMP": "/runner/temp", "GITHUB_WORKSPACE": "/ws", "HOLON_ENGINE": "replay"}
    if name in base:
        base = {k: v for k, v in base.items() if k != name}
    assert ActionConfig.from_env({**base, name: empty}) == ActionConfig.from_env(base)


def test_empty_variables_can_differ_from_unset() -> None:
    """The check above can fail: a value that is not empty is read."""
    base = {"RUNNER_TEMP": "/runner/temp", "GITHUB_WORKSPACE": "/ws"}
    assert ActionConfig.from_env({**base, "HOLON_MENTION": "bot"}) != ActionConfig.from_env(base)
