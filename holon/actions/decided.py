"""The decide job's state, handed to the settle job of the same workflow run.

The decide job leaves its deferred runs inflight in its state; the settle job must find them
there, with the journaled events that decided them (the serve's recovery re-checks each against
its event before collecting it). So decide copies its live state directory's `state.json` and
journals (events, decisions and actions, with their rotated segments) into `HOLON_DECIDED_DIR`,
uploaded as the artifact `holon-decided-<run id>-<attempt>`; settle downloads it and, when its
own state directory is still empty (a new job), starts from it. Only those names are copied,
regular files reached without a link, bounded; the state's own reader validates them when the
serve opens.
Nothing secret is in either (no record or journal holds one).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from holon.fsutil import remove_tree
from holon.state.store import STATE

DECIDED_ENV = "HOLON_DECIDED_DIR"
# The state and the controller's journals; never the webhook inbox or the control commands.
_NAMES = re.compile(r"(state\.json|(events|decisions|actions)\.ndjson(\.[0-9]{1,6})?)")
MAX_BYTES = 256 * 1024 * 1024
_CHUNK = 1024 * 1024


def decided_dir(env: Mapping[str, str], state_dir: Path) -> Path:
    """`HOLON_DECIDED_DIR`, else `decided` beside the state directory."""
    value = env.get(DECIDED_ENV, "").strip()
    return Path(value) if value else state_dir.parent / "decided"


def copy_state_files(source: Path, dest: Path) -> list[str]:
    """Copy the state files of `source` into `dest` (made new when absent); the names copied.
    Anything else in `source`, or a link, device or FIFO at one of those names, is skipped."""
    dest.mkdir(parents=True, exist_ok=True)
    copied: list[str] = []
    budget = MAX_BYTES
    try:
        names = sorted(os.listdir(source))
    except (FileNotFoundError, NotADirectoryError):
        return copied
    for name in names:
        if not _NAMES.fullmatch(name):
            continue
        try:
            fd = os.open(source / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            continue  # a link (ELOOP) or unreadable: not taken
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            data = handle.read(budget + 1)
        if len(data) > budget:
            break  # what is left would not fit: the state's reader says what is missing
        budget -= len(data)
        out = os.open(dest / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(out, "wb") as target:
            target.write(data)
        copied.append(name)
    return copied


def hand_over(state_dir: Path, dest: Path) -> list[str]:
    """decide: a fresh copy of its state for the settle job."""
    if dest.is_dir() and not dest.is_symlink():
        remove_tree(dest)
    return copy_state_files(state_dir, dest)


def take_over(source: Path, state_dir: Path) -> list[str]:
    """settle: start from decide's state, unless this state directory has one already (a
    settle run again in the same job keeps what it did)."""
    if (state_dir / STATE).exists() or (state_dir / STATE).is_symlink():
        return []
    return copy_state_files(source, state_dir)


__all__ = ["DECIDED_ENV", "copy_state_files", "decided_dir", "hand_over", "take_over"]
