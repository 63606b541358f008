"""What `holon action` does around every mode: the runner's tokens dropped, secrets masked
first, the cleanup marker, `--help`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from holon.actions.config import VARIABLES, ActionConfig
from holon.actions.step import (
    RUNTIME_TOKENS,
    drop_runtime_tokens,
    main_finished,
    mark_done,
    mask_lines,
)


def test_the_runners_cache_and_artifact_tokens_are_dropped() -> None:
    environ = {name: "x" for name in RUNTIME_TOKENS} | {"GITHUB_TOKEN": "t", "PATH": "/bin"}
    drop_runtime_tokens(environ)
    assert environ == {"GITHUB_TOKEN": "t", "PATH": "/bin"}


def test_the_token_and_every_model_key_are_masked_line_by_line() -> None:
    env = {"GITHUB_TOKEN": "ghs_1", "OPENAI_API_KEY": "sk-a\nsk-b", "HOLON_MODEL": "m"}
    assert mask_lines(env) == ["::add-mask::ghs_1", "::add-mask::sk-a", "::add-mask::sk-b"]
    assert mask_lines({"GITHUB_TOKEN": " "}) == []


def test_the_marker_names_this_run_only(tmp_path: Path) -> None:
    env = {"HOLON_STATE_DIR": str(tmp_path), "GITHUB_RUN_ID": "5", "GITHUB_RUN_ATTEMPT": "1"}
    config = ActionConfig.from_env(env)
    assert not main_finished(config)
    mark_done(config)
    assert main_finished(config)
    # A marker restored from another run (or a re-run's earlier attempt) is not this run's.
    again = ActionConfig.from_env({**env, "GITHUB_RUN_ATTEMPT": "2"})
    assert not main_finished(again)
    marker = tmp_path / "action-main.done"
    marker.unlink()
    marker.symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_text("5-1\n")
    assert not main_finished(config)


def test_help_lists_every_variable() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "holon", "action", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for name, _ in VARIABLES:
        assert name in done.stdout
