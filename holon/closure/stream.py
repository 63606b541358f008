"""`holon closure derive FILE` streamed: the closure of an evidence file of any number of items,
in memory that does not grow with it (docs/cli.md).

One pass folds each item into the derivation as it is read (holon/closure/reader.py) and checks
what `Evidence` checks of the whole document: ids unique, one run item, every wait on a task
names a task some item creates (before or after it). Ids are partitioned by hash to temporary
files and each partition checked for repeats at the end (holon/closure/spool.py); only when an
id repeats does a second pass over the file find the first item that repeats one. The errors
are the whole-document ones, in the same order: the first item (in the document's order) with
a duplicate id or a wait on a task nobody creates, else a second run item.

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
from typing import IO, Any, cast

from pydantic import ValidationError

from holon import jsonio
from holon.closure.derive import RULES, Derived, Rule, decide, fold, new_facts
from holon.closure.evidence import (
    EvidenceItem,
    PostureItem,
    RunItem,
    TaskItem,
    WaitItem,
    WorkItem,
    describe_item,
    parse_evidence,
    validate_evidence,
)
from holon.closure.fast import complete_wait
from holon.closure.reader import EvidenceReader, item_adapter
from holon.closure.spool import FLUSH_IDS, SeenIds, SpooledIds
from holon.errors import InvalidInput

_FLUSH_MASK = FLUSH_IDS - 1  # ids are written out every FLUSH_IDS items
MAX_DOCUMENT_BYTES = 25 * 1024 * 1024  # the in-memory path's limit (holon/cli/_io.py)
# Deciding items and rejected claims at most this many are listed in the closure itself; more
# are streamed to the output.
MAX_LISTED = 10_000


@dataclass
class _Checks:
    """What `Evidence._consistent` checks, in memory that does not grow with the items."""

    ids: SeenIds
    tasks: set[str] = field(default_factory=set)
    # Waits on a task not created yet when read: (index, id, task id).
    forward: list[tuple[int, str, str]] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)

    def wait_on_task(self, index: int, ident: str, task: str) -> None:
        if task not in self.tasks:
            self.forward.append((index, ident, task))

    def first_dangling(self) -> tuple[int, str] | None:
        for index, ident, task in self.forward:
            if task not in self.tasks:
                return index, (
                    f"evidence item {ident!r} (wait): waits on task {task!r}, "
                    "which no task item creates"
                )
        return None


class _Fold:
    """Each item, a dictionary (the fast path) or a model, checked and folded in."""

    def __init__(self, document_bytes: int, source: str) -> None:
        self.facts = new_facts(SpooledIds)
        self.checks = _Checks(SeenIds(document_bytes))
        self._source = source
        self._model = item_adapter()

    def items(self, items: Iterator[EvidenceItem | dict[str, Any]]) -> None:
        seen = self.checks.ids
        parts, mask = seen.parts, seen.mask
        facts, checks = self.facts, self.checks
        add_model, claim = self._add_model, facts.add_claim
        for index, item in enumerate(items):
            if type(item) is not dict:
                add_model(index, item, counted=False)  # type: ignore[arg-type]
                continue
            ident = item["id"]
            parts[hash(ident) & mask].append(ident)
            if index & _FLUSH_MASK == _FLUSH_MASK:
                seen.flush()
            kind = item["kind"]
            if kind == "text":
                continue
            if kind == "claim":
                claim(ident)
            elif kind == "wait":
                if not complete_wait(item):
                    self._refuse(index, item)
                if item.get("on") == "task":
                    checks.wait_on_task(index, ident, item.get("task_id") or "")
                if item.get("resolved"):
                    continue
                if item.get("question") is None:
                    facts.add(WaitItem.model_construct(**item))
                else:
                    facts.add(self._validate(index, item))
            elif kind == "work_item":
                if item.get("state", "runnable") == "runnable":
                    facts.add(WorkItem.model_construct(**item))
            elif kind == "posture":
                current = facts.posture
                if current is None or (item["at"], ident) > (current.at, current.id):
                    facts.add(PostureItem.model_construct(**item))
            else:  # run, task, interruption: only told apart, validated by their models
                add_model(index, self._validate(index, item), counted=True)

    def _validate(self, index: int, item: dict[str, Any]) -> EvidenceItem:
        try:
            return cast(EvidenceItem, self._model.validate_python(item))
        except ValidationError as exc:
            raise InvalidInput(f"{self._source}: {describe_item(exc, index, item)}") from None

    def _refuse(self, index: int, item: dict[str, Any]) -> None:
        self._validate(index, item)
        raise AssertionError("fast.complete_wait refused an item its model accepts")

    def _add_model(self, index: int, item: EvidenceItem, *, counted: bool) -> None:
        if not counted:
            seen = self.checks.ids
            seen.parts[hash(item.id) & seen.mask].append(item.id)
            if index & _FLUSH_MASK == _FLUSH_MASK:
                seen.flush()
        checks = self.checks
        if isinstance(item, TaskItem):
            checks.tasks.add(item.task_id)
        elif isinstance(item, WaitItem) and item.on == "task":
            checks.wait_on_task(index, item.id, item.task_id or "")
        elif isinstance(item, RunItem) and len(checks.runs) < 2:
            checks.runs.append(item.id)
        self.facts.add(item)


def _open(path: str) -> tuple[IO[bytes], bool]:
    """`path` opened for reading and whether it is a regular file, which alone can be read
    twice."""
    handle, mode = jsonio.open_path(path)
    return handle, stat.S_ISREG(mode)


def _items(handle: IO[bytes], source: str) -> Iterator[tuple[str, Any]]:
    return EvidenceReader(handle, source).members()


def _first_duplicate(path: str, repeated: set[str], before: int) -> tuple[int, str] | None:
    """The first item (up to index `before`) whose id an earlier item has: a second pass,
    made only when some id is known to repeat."""
    seen: set[str] = set()
    with open(path, "rb") as handle:
        for name, value in _items(handle, path):
            if name != "items":
                continue
            for index, item in enumerate(value):
                if index > before:
                    return None
                ident = item["id"] if isinstance(item, dict) else item.id
                if ident in repeated:
                    if ident in seen:
                        return index, f"evidence item {ident!r}: duplicate id"
                    seen.add(ident)
    return None


def _stream(handle: IO[bytes], path: str, rules: Any, max_listed: int | None) -> Derived:
    fold = _Fold(os.fstat(handle.fileno()).st_size, path)
    others: dict[str, Any] = {}
    seen_items = False
    try:
        for name, value in _items(handle, path):
            if name in others or (name == "items" and seen_items):
                # The in-memory path keeps the last; a fold cannot take an earlier one back.
                raise InvalidInput(f"{path}: member {name!r} given twice")
            if name == "items" and isinstance(value, Iterator):
                seen_items = True
                fold.items(value)
            else:
                others[name] = value
        # The unit and unknown members (and `items` when it is not a list) as `Evidence` says.
        evidence = validate_evidence(others, path)
        checks = fold.checks
        # The first item that repeats an id or waits on a task nobody creates; on the same
        # item, the duplicate id is named (as `Evidence` checks it first).
        problems: list[tuple[int, int, str]] = []
        dangling = checks.first_dangling()
        if dangling is not None:
            problems.append((dangling[0], 1, dangling[1]))
        repeated = checks.ids.repeated()
        if repeated:
            before = dangling[0] if dangling is not None else 1 << 62
            duplicate = _first_duplicate(path, repeated, before)
            if duplicate is not None:
                problems.append((duplicate[0], 0, duplicate[1]))
        if problems:
            raise InvalidInput(f"{path}: {min(problems)[2]}")
        if len(checks.runs) > 1:
            first, second = checks.runs
            raise InvalidInput(
                f"{path}: evidence item {second!r} (run): a unit has one run item, "
                f"already {first!r}"
            )
        return decide(fold.facts.close(), evidence.unit.id, rules, max_listed=max_listed)
    finally:
        fold.checks.ids.close()


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
