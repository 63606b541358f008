"""Reading a serve state directory for `holon report`: its three journals (every segment) and
state.json, read only: no lock is taken and nothing is written, so a running serve's directory
can be reported on.

Bad input is one line (InvalidInput, exit 64): a directory that is no state directory, a journal
line other than a file's last that is not an entry (CorruptJournal), an unusable state.json. A
torn last line is skipped by the journal reader; a broken delivery the serve journaled as
skipped (an `error` entry) is counted by the aggregation, not fatal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holon.errors import InvalidInput
from holon.state.journal import Journal
from holon.state.model import ServeState
from holon.state.store import StateStore

NAMES = ("events", "decisions", "actions")


@dataclass(frozen=True)
class Sources:
    events: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    actions: list[dict[str, Any]]
    state: ServeState
    dropped: int  # journal entries an operator's `keep` bound deleted (the figures miss them)


def read_state_dir(directory: Path) -> Sources:
    if directory.is_symlink() or not directory.is_dir():
        raise InvalidInput(f"state dir {directory} is not a directory")
    store = StateStore(directory)
    journals = {name: store.journal(name) for name in NAMES}
    if not store.state_path.exists() and not any(j.path.exists() for j in journals.values()):
        raise InvalidInput(
            f"state dir {directory} holds no state.json and no journal: not a serve state dir"
        )
    state = store.load()  # CorruptState: one line
    read: dict[str, list[dict[str, Any]]] = {}
    dropped = 0
    for name, journal in journals.items():
        read[name] = _entries(journal)
        dropped += sum(_count(marker) for marker in journal.dropped())
    return Sources(read["events"], read["decisions"], read["actions"], state, dropped)


def _entries(journal: Journal) -> list[dict[str, Any]]:
    try:
        return list(journal.read())
    except OSError as exc:
        raise InvalidInput(f"journal {journal.path} is unreadable: {exc.strerror or exc}") from None


def _count(marker: dict[str, Any]) -> int:
    what = marker.get("journal_dropped")
    entries = what.get("entries") if isinstance(what, dict) else None
    return entries if isinstance(entries, int) and entries > 0 else 0


__all__ = ["NAMES", "Sources", "read_state_dir"]
