"""Around every mode of `holon action`: what the process must do before anything else (drop the
runner's cache and artifact tokens, mask every secret) and after (outputs, summary, the marker
the cleanup phase looks for)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path

from holon.actions.commands import command, mask
from holon.actions.config import MODEL_KEYS, TOKEN, ActionConfig
from holon.actions.files import append_summary, write_outputs
from holon.actions.outputs import NAMES
from holon.actions.result import StepResult
from holon.fsutil import atomic_write_text

# Tokens of the runner's cache, artifact and OIDC services: nothing Holon spawns (an agent, git)
# may hold them, so they leave this process's environment before anything runs.
RUNTIME_TOKENS = (
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_CACHE_URL",
    "ACTIONS_RESULTS_URL",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
)
DONE_MARKER = "action-main.done"


def drop_runtime_tokens(environ: MutableMapping[str, str]) -> None:
    for name in RUNTIME_TOKENS:
        environ.pop(name, None)


def mask_lines(env: Mapping[str, str]) -> list[str]:
    """`::add-mask::` for the token and every model key present (forwarded to agents)."""
    lines: list[str] = []
    for name in (TOKEN, *MODEL_KEYS):
        value = env.get(name, "")
        if value.strip():
            lines.extend(mask(value))
    return lines


def warning(text: str) -> str:
    return command("warning", text)


def run_key(config: ActionConfig) -> str:
    return f"{config.run_id or '-'}-{config.run_attempt or '-'}"


def marker_path(config: ActionConfig) -> Path:
    return config.state_dir / DONE_MARKER


def clear_marker(config: ActionConfig) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(marker_path(config))


def mark_done(config: ActionConfig) -> None:
    """The main phase's very last act: the cleanup phase then knows nothing was left."""
    config.state_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(marker_path(config), run_key(config) + "\n")


def main_finished(config: ActionConfig) -> bool:
    """This run's main phase wrote its marker (a restored state never carries one of this run)."""
    path = marker_path(config)
    try:
        if path.is_symlink() or not path.is_file():
            return False
        return path.read_text(encoding="utf-8").strip() == run_key(config)
    except (OSError, UnicodeDecodeError):
        return False


def empty_outputs() -> dict[str, str]:
    return dict.fromkeys(NAMES, "")


def finish(env: Mapping[str, str], result: StepResult, say: Callable[[str], None]) -> None:
    """Outputs (every one, even empty) and the step summary of `result`."""
    from holon.actions.summary import render_summary

    if env.get("GITHUB_OUTPUT"):
        write_outputs(env, result.outputs)
    if not append_summary(env, render_summary(result)):
        say(warning("the step summary was cut: GitHub shows at most 1 MiB"))


def finish_refused(env: Mapping[str, str], reason: str) -> None:
    """Bad input: the outputs still exist (empty) and the summary says why, in one line."""
    from holon.markdown import inline

    with contextlib.suppress(Exception):
        if env.get("GITHUB_OUTPUT"):
            write_outputs(env, empty_outputs())
        append_summary(env, f"## Holon\n\nNot run: {inline(reason)}\n")


__all__ = [
    "DONE_MARKER",
    "RUNTIME_TOKENS",
    "clear_marker",
    "drop_runtime_tokens",
    "empty_outputs",
    "finish",
    "finish_refused",
    "main_finished",
    "mark_done",
    "mask_lines",
]
