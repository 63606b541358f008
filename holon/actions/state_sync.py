"""State across runs (owner: H2). A minimal stand-in until the real module replaces it: restores
nothing, and exports the live state file into the upload directory."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from holon.state.store import STATE

if TYPE_CHECKING:
    import github

    from holon.actions.config import ActionConfig


@dataclass(frozen=True)
class Restored:
    merged: list[str]  # one line per source merged
    refused: list[str]  # one line per source refused and why


def restore_state(
    config: ActionConfig, *, client: github.Github | None, warn: Callable[[str], None]
) -> Restored:
    return Restored([], [])


def export_state(config: ActionConfig) -> Path | None:
    if config.upload_dir is None:
        return None
    config.upload_dir.mkdir(parents=True, exist_ok=True)
    source = config.state_dir / STATE
    if source.is_file() and not source.is_symlink():
        shutil.copyfile(source, config.upload_dir / STATE)
    return config.upload_dir


__all__ = ["Restored", "export_state", "restore_state"]
