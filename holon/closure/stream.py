"""`holon closure derive FILE` streamed: the closure of an evidence file of any number of items,
in memory that does not grow with it (docs/cli.md).

One pass folds each item into the derivation as it is read (holon/closure/reader.py) and checks
what `Evidence` checks of the whole document: ids unique, one run item, every wait on a task
names a task some item creates (before or after it). Ids go through a fixed-size Bloom filter;
the few it flags as maybe seen before are checked exactly by a second pass over the file, which
happens only when there are any. The errors are the whole-document ones, in the same order: the
first item (in the document's order) with a duplicate id or a wait on a task nobody creates,
else a second run item.

What stays in memory grows with the tasks only: the latest item of each task and the waits on
tasks named before their task (the derivation needs each task's latest state). Long lists (the
deciding items, the rejected claims) are spooled to temporary files (holon/closure/spool.py).

A file that is not a regular file (a pipe), and a refused regular file no larger than the
in-memory path's 25 MiB limit, go through `parse_evidence` as before, so what is refused and
the line that says so are unchanged for every document the CLI accepted or refused before.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from holon import jsonio
from holon.closure.derive import RULES, Derived, Rule, decide, fold, new_facts
from holon.closure.evidence import (
    EvidenceItem,
    RunItem,
    TaskItem,
    WaitItem,
    parse_evidence,
    validate_evidence,
)
from holon.closure.reader import EvidenceReader
from holon.closure.spool import Bloom, SpooledIds
from holon.errors import InvalidInput

MAX_DOCUMENT_BYTES = 25 * 1024 * 1024  # the in-memory path's limit (holon/cli/_io.py)
# Deciding items and rejected claims at most this many are listed in the closure itself; more
# are streamed to the output.
MAX_LISTED = 10_000
MAX_CANDIDATES = 100_000  # ids the filter flags, checked exactly by the second pass


@dataclass
class _Checks:
    """What `Evidence._consistent` checks, with state that does not grow with the items."""

    seen: Bloom = field(default_factory=Bloom)
    candidates: set[str] = field(default_factory=set)
    tasks: set[str] = field(default_factory=set)
    # Waits on a task not created yet when read: (index, id, task id).
    forward: list[tuple[int, str, str]] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)

    def add(self, index: int, item: EvidenceItem) -> None:
        if self.seen.add(item.id) and len(self.candidates) < MAX_CANDIDATES:
            self.candidates.add(item.id)
        if isinstance(item, TaskItem):
            self.tasks.add(item.task_id)
        elif isinstance(item, WaitItem) and item.on == "task":
            task = item.task_id or ""
            if task not in self.tasks:
                self.forward.append((index, item.id, task))
        elif isinstance(item, RunItem) and len(self.runs) < 2:
            self.runs.append(item.id)

    def first_dangling(self) -> tuple[int, str] | None:
        for index, ident, task in self.forward:
            if task not in self.tasks:
                return index, (
                    f"evidence item {ident!r} (wait): waits on task {task!r}, "
                    "which no task item creates"
                )
        return None


def _open(path: str) -> tuple[IO[bytes], bool]:
    """`path` opened for reading (as jsonio.read_path opens it) and whether it is a regular
    file, which alone can be read twice."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise InvalidInput(f"file not found: {path}") from None
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        os.close(fd)
        raise InvalidInput(f"cannot read {path}: a directory, not a file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb"), stat.S_ISREG(mode)


def _items(handle: IO[bytes], source: str) -> Iterator[tuple[str, Any]]:
    return EvidenceReader(handle, source).members()


def _first_duplicate(path: str, candidates: set[str], before: int) -> tuple[int, str] | None:
    """The first item (before index `before`) whose id an earlier item has: a second pass,
    exact for the ids the filter flagged."""
    seen: set[str] = set()
    with open(path, "rb") as handle:
        for name, value in _items(handle, path):
            if name != "items":
                continue
            for index, item in enumerate(value):
                if index > before:
                    return None
                if item.id in candidates:
                    if item.id in seen:
                        return index, f"evidence item {item.id!r}: duplicate id"
                    seen.add(item.id)
    return None


def _stream(handle: IO[bytes], path: str, rules: Any, max_listed: int | None) -> Derived:
    facts = new_facts(SpooledIds)
    checks = _Checks()
    others: dict[str, Any] = {}
    seen_items = False
    for name, value in _items(handle, path):
        if name in others or (name == "items" and seen_items):
            # The in-memory path keeps the last; a fold cannot take an earlier one back.
            raise InvalidInput(f"{path}: member {name!r} given twice")
        if name == "items" and isinstance(value, Iterator):
            seen_items = True
            add, check = facts.add, checks.add
            for index, item in enumerate(value):
                check(index, item)
                add(item)
        else:
            others[name] = value
    # The unit and unknown members (and `items` when it is not a list) as `Evidence` says.
    evidence = validate_evidence(others, path)
    # The first item that repeats an id or waits on a task nobody creates; on the same item,
    # the duplicate id is named (as `Evidence` checks it first).
    problems: list[tuple[int, int, str]] = []
    dangling = checks.first_dangling()
    if dangling is not None:
        problems.append((dangling[0], 1, dangling[1]))
    if checks.candidates:
        before = dangling[0] if dangling is not None else 1 << 62
        duplicate = _first_duplicate(path, checks.candidates, before)
        if duplicate is not None:
            problems.append((duplicate[0], 0, duplicate[1]))
    if problems:
        raise InvalidInput(f"{path}: {min(problems)[2]}")
    if len(checks.runs) > 1:
        first, second = checks.runs
        raise InvalidInput(
            f"{path}: evidence item {second!r} (run): a unit has one run item, already {first!r}"
        )
    return decide(facts.close(), evidence.unit.id, rules, max_listed=max_listed)


def derive_file(
    path: str,
    rules: tuple[Rule, ...] = RULES,
    *,
    max_listed: int | None = MAX_LISTED,
    fallback: bool = True,
) -> Derived:
    """The closure of the evidence file at `path` ('-': standard input, read whole as before).
    `fallback=False` (tests) reports the streamed path's own refusal for every file."""
    if path == "-":
        return _whole(jsonio.read_path(path, MAX_DOCUMENT_BYTES), path, rules)
    handle, regular = _open(path)
    with handle:
        if not regular:
            return _whole(jsonio.read_stream(handle, MAX_DOCUMENT_BYTES, path), path, rules)
        try:
            return _stream(handle, path, rules, max_listed)
        except InvalidInput:
            if not fallback or os.fstat(handle.fileno()).st_size > MAX_DOCUMENT_BYTES:
                raise
            handle.seek(0)
            raw = jsonio.read_stream(handle, MAX_DOCUMENT_BYTES, path)
    # Refused while streamed: the in-memory path says why in its own words (or, for what only
    # the fold refuses, such as a member given twice, derives the closure itself).
    return _whole(raw, path, rules)


def _whole(raw: bytes, source: str, rules: tuple[Rule, ...]) -> Derived:
    evidence = parse_evidence(raw, source=source)
    return decide(fold(evidence.items), evidence.unit.id, rules)
