"""The `github-context` host skill's collector: a run's subject, conversation, review threads,
changes and checks written into its context directory (the runner's `--context`, the agent's
`/holon/input/context/`), with `manifest.json` saying what is there and what is not and why.

It reads through a `ContextReader` (the event payload alone, or GitHub's REST API through the
edge) and never fails the whole collection for one part: a part GitHub refuses (403, 404, too
large) or that the payload cannot give is a `missing` entry with a one-line reason. Only a
destination that cannot be written safely, or an event that names no issue or pull request,
fails it.

The destination is an empty directory (made when absent). Nothing in it is followed: it is
opened without following a link, every file is placed under that open directory through a
fresh name and a rename, so a link planted there cannot redirect a write. Every file is
bounded: texts by `context_records.untrusted`, lists by `Limits.json_bytes`, the diff by
`Limits.diff_bytes`, each log by `Limits.log_bytes`. `manifest.json` is written last.

Every comment, review and review comment carries its author's `author_association` and a
`trust` mark (`context_trust.py`); with `untrusted="exclude"` (the policy's
`settings.context.untrusted`) untrusted authors' records are left out and the manifest says how
many. The diff's hidden characters (bidi controls, zero-width, tag characters) are shown as
`<U+202E>`: a patch keeps its text, but nothing in it stays invisible.

Files: `issue.md` or `pull_request.md`, `comments.json`, and for a pull request
`reviews.json`, `review_threads.json`, `files.json`, `diff.patch`, `commits.json`,
`checks.json`, `logs/<check-run-id>.txt` (the failing GitHub Actions jobs' log tails).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from holon.contract.context import (
    ContextManifest,
    ContextSubject,
    MissingPart,
    PartSource,
    PresentPart,
)
from holon.errors import InvalidInput
from holon.fsutil import place_at
from holon.gateway.trigger import TriggerSnapshot, snapshot_of
from holon.github import context_records as rec
from holon.github.context_frozen import LiveTrigger, frozen_item
from holon.github.context_payload import PayloadReader, Trigger, repo_of, subject_of, trigger_of
from holon.github.context_source import ContextReader, Part, PartMissing
from holon.github.context_trust import TrustMarks, Untrusted
from holon.markdown import HIDDEN, clean
from holon.secrets import mask_secret_looking
from holon.templating import render
from holon.terminal import line

MANIFEST = "manifest.json"
RESOLUTION = (
    "whether a thread is resolved is only in GitHub's GraphQL API, which Holon does not read: "
    "`resolved` is null"
)
T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    json_bytes: int = 2 * 1024 * 1024  # each JSON file
    diff_bytes: int = 1024 * 1024
    log_bytes: int = 64 * 1024  # the tail kept of each failing job's log
    logs: int = 5  # failing jobs whose logs are read


class ContextDir:
    """An empty destination directory, written without following anything in it."""

    def __init__(self, dest: Path) -> None:
        try:
            os.mkdir(dest, 0o755)
        except FileExistsError:
            pass
        except OSError as exc:
            why = exc.strerror or "unwritable"
            raise InvalidInput(f"cannot make the context directory {dest}: {why}") from None
        if os.path.islink(dest):
            raise InvalidInput(f"context directory {dest} is a link: never followed")
        try:
            self.fd = os.open(dest, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            # Swapped for a link since, or something that is no directory.
            why = "a link" if exc.errno == errno.ELOOP else exc.strerror or "unreadable"
            raise InvalidInput(f"context directory {dest}: {why}; never followed") from None
        if os.listdir(self.fd):
            os.close(self.fd)
            raise InvalidInput(
                f"context directory {dest} is not empty: context is collected into an empty one"
            )
        self._subdirs: dict[str, int] = {}

    def write(self, relpath: str, data: bytes) -> int:
        folder, _, name = relpath.rpartition("/")
        return place_at(self._subdir(folder) if folder else self.fd, name, [data])

    def _subdir(self, name: str) -> int:
        if name not in self._subdirs:
            # Opened below without following: a planted link is refused there.
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=self.fd)
            flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
            self._subdirs[name] = os.open(name, flags, dir_fd=self.fd)
        return self._subdirs[name]

    def close(self) -> None:
        for fd in (*self._subdirs.values(), self.fd):
            os.close(fd)
        self._subdirs.clear()


class _Collection:
    """What one collection wrote and left out, becoming the manifest."""

    def __init__(self, out: ContextDir, source: PartSource) -> None:
        self.out = out
        self.source = source
        self.present: list[PresentPart] = []
        self.missing: list[MissingPart] = []

    def lack(self, name: str, reason: str) -> None:
        self.missing.append(MissingPart(name=name, reason=line(reason, limit=300) or "unknown"))

    def put(self, name: str, path: str, data: bytes, source: PartSource | None = None) -> None:
        size = self.out.write(path, data)
        self.present.append(
            PresentPart(name=name, path=path, bytes=size, source=source or self.source)
        )

    def read(self, name: str, read: Callable[[], T]) -> T | None:
        try:
            return read()
        except PartMissing as exc:
            self.lack(name, exc.reason)
            return None

    def put_list(
        self,
        name: str,
        path: str,
        part: Part | None,
        limit: int,
        source: PartSource | None = None,
    ) -> None:
        """A list of records as a JSON file, as many as fit in `limit` bytes. A list read in
        part says so (`<name> (more)`); nothing read and a reason is only missing."""
        if part is None:
            return
        if not part.records and part.gap:
            self.lack(name, part.gap)
            return
        data, dropped = bounded_json(part.records, limit)
        self.put(name, path, data, source)
        if part.gap:
            self.lack(f"{name} (more)", part.gap)
        if dropped:
            self.lack(f"{name} (more)", f"{dropped} more left out: over the {limit}-byte bound")


def bounded_json(records: Iterable[Any], limit: int) -> tuple[bytes, int]:
    """`records` as a JSON array of at most `limit` bytes: as many as fit, in order, and how
    many did not."""
    pieces: list[bytes] = []
    size, dropped = 4, 0
    for record in records:
        piece = json.dumps(record, indent=2, ensure_ascii=False).encode("utf-8")
        if dropped or size + len(piece) + 2 > limit:
            dropped += 1
            continue
        pieces.append(piece)
        size += len(piece) + 2
    if not pieces:
        return b"[]\n", dropped
    return b"[\n" + b",\n".join(pieces) + b"\n]\n", dropped


def _marked(
    records: list[dict[str, Any]],
    trigger: Trigger | None,
    kind: str,
    live: LiveTrigger | None = None,
) -> Part:
    """`records` with `trigger` set on each; the trigger's own record added (from the payload)
    when it is of `kind` and the list does not hold it. The trigger's text is always the one
    the event carried (frozen inputs): a live record that differs keeps its other fields, takes
    the event's text, and `live` notes the edit; one the full list lacks is noted deleted."""
    wanted = trigger.info.id if trigger is not None and trigger.info.kind == kind else None
    record = trigger.record if trigger is not None and wanted is not None else None
    marked: list[dict[str, Any]] = []
    for r in records:
        if wanted is None or r.get("id") != wanted:
            marked.append({**r, "trigger": False})
            continue
        if record is not None and r.get("body") != record.get("body"):
            if live is not None:
                live.saw("edited", r.get("updated_at") or r.get("submitted_at"))
            r = {**r, "body": record.get("body")}
        elif live is not None:
            live.saw("unchanged")
        marked.append({**r, "trigger": True})
    if record is not None and not any(r["trigger"] for r in marked):
        if live is not None:
            live.saw("deleted")
        marked.append({**record, "trigger": True})
    return Part(marked)


def collect(
    reader: ContextReader,
    dest: Path,
    *,
    subject: ContextSubject,
    repo: str | None,
    trigger: Trigger | None,
    limits: Limits | None = None,
    untrusted: Untrusted = "mark",
    frozen: TriggerSnapshot | None = None,
) -> ContextManifest:
    """Collect the context of `subject` through `reader` into the empty directory `dest`.
    `frozen`: the trigger as the event carried it; its text is the one written, whatever the
    API answers now (`context_frozen.py`)."""
    limits = limits or Limits()
    out = ContextDir(dest)
    try:
        found = _Collection(out, reader.source)
        marks = TrustMarks(reader, untrusted)
        live = LiveTrigger(frozen) if frozen is not None and reader.source == "api" else None
        _collect(found, reader, subject, trigger, limits, marks, frozen, live)
        for name, reason in marks.reasons():
            found.lack(name, reason)
        info = trigger.info if trigger is not None else None
        if info is not None and frozen is not None:
            state = live.state if live is not None else "unchecked"
            info = info.model_copy(
                update={"sha256": frozen.sha256, "updated_at": frozen.updated_at, "live": state}
            )
        if live is not None and live.state in ("edited", "deleted"):
            found.lack("trigger (live)", live.note())
        manifest = ContextManifest(
            subject=subject,
            repo=repo,
            trigger=info,
            present=found.present,
            missing=found.missing,
        )
        out.write(MANIFEST, (manifest.model_dump_json(indent=2) + "\n").encode("utf-8"))
        return manifest
    finally:
        out.close()


def _collect(
    found: _Collection,
    reader: ContextReader,
    subject: ContextSubject,
    trigger: Trigger | None,
    limits: Limits,
    marks: TrustMarks,
    frozen: TriggerSnapshot | None = None,
    live: LiveTrigger | None = None,
) -> None:
    kind, number = subject.kind, subject.number
    item = found.read(kind, lambda: reader.item(kind, number))
    if item is not None and frozen is not None and frozen.kind == kind and frozen.id == number:
        item = frozen_item(item, frozen, live)
    if item is not None:
        item = marks.item(item)
        heading = "Pull request" if kind == "pull_request" else "Issue"
        text = render("holon.github", "context_item.md.j2", "text", heading=heading, item=item)
        found.put(kind, f"{kind}.md", text.encode("utf-8"))
        for gap in item.gaps:
            found.lack(f"{kind} (fields)", gap)

    comments = found.read("comments", lambda: reader.comments(number))
    _put_marked(
        found, "comments", "comments.json", comments, trigger, "comment", limits, marks, live
    )
    if kind != "pull_request":
        return

    reviews = found.read("reviews", lambda: reader.reviews(number))
    _put_marked(found, "reviews", "reviews.json", reviews, trigger, "review", limits, marks, live)
    review_comments = found.read("review_threads", lambda: reader.review_comments(number))
    if review_comments is not None:
        whole = live if not review_comments.gap else None
        marked = _marked(review_comments.records, trigger, "review_comment", whole)
        kept = marks.records("review_threads", marked.records)
        threads = Part(rec.threads(kept), review_comments.gap)
        found.put_list("review_threads", "review_threads.json", threads, limits.json_bytes)
        if threads.records:
            found.lack("review_threads (resolution)", RESOLUTION)

    files = found.read("files", lambda: reader.files(number))
    found.put_list("files", "files.json", files, limits.json_bytes)
    diff = found.read("diff", lambda: reader.diff(number, limits.diff_bytes))
    if diff is not None:
        data, size = diff
        if size > len(data):
            data = data[: data.rfind(b"\n") + 1] or data  # whole lines
            found.lack("diff (rest)", f"the diff is {size} bytes: cut to its first {len(data)}")
        found.put("diff", "diff.patch", visible_hidden(data))
    commits = found.read("commits", lambda: reader.commits(number))
    found.put_list("commits", "commits.json", commits, limits.json_bytes)

    sha = item.head.sha if item is not None and item.head is not None else None
    if not sha:
        found.lack("checks", "the head commit is not known, so neither are its checks")
        return
    checks = found.read("checks", lambda: reader.check_runs(sha))
    found.put_list("checks", "checks.json", checks, limits.json_bytes)
    if checks is not None:
        _logs(found, reader, checks.records, limits)


def _put_marked(
    found: _Collection,
    name: str,
    path: str,
    part: Part | None,
    trigger: Trigger | None,
    kind: str,
    limits: Limits,
    marks: TrustMarks,
    live: LiveTrigger | None = None,
) -> None:
    # The trigger's own record comes from the payload: it is in the context even when the
    # list could not be read (whether it is still on GitHub is then not known).
    records = part.records if part is not None else []
    whole = live if part is not None and not part.gap else None
    marked = Part(marks.records(name, _marked(records, trigger, kind, whole).records))
    if part is None:
        if marked.records:
            found.put_list(name, path, marked, limits.json_bytes, source="payload")
        return
    found.put_list(name, path, Part(marked.records, part.gap), limits.json_bytes)


def visible_hidden(data: bytes) -> bytes:
    """A patch with each hidden character (`markdown.HIDDEN`) shown as `<U+XXXX>`."""
    text = data.decode("utf-8", "surrogateescape")
    shown = HIDDEN.sub(lambda m: f"<U+{ord(m[0]):04X}>", text)
    return data if shown == text else shown.encode("utf-8", "surrogateescape")


def _logs(
    found: _Collection, reader: ContextReader, checks: list[dict[str, Any]], limits: Limits
) -> None:
    failing = [c for c in checks if c.get("conclusion") in rec.FAILING and c.get("id")]
    jobs = rec.failing_actions_jobs(failing)
    for check in failing:
        if check not in jobs:
            found.lack(
                f"logs/{check['id']}.txt",
                f"check {check.get('name') or check['id']} is not a GitHub Actions job: "
                "its log is with the app that ran it (details_url)",
            )
    for check in jobs[: limits.logs]:
        ident = int(check["id"])
        tail = found.read(f"logs/{ident}.txt", partial(reader.log_tail, ident, limits.log_bytes))
        if tail is None:
            continue
        data = tail.text
        if tail.cut:  # from the first whole line on
            data = data[data.find(b"\n") + 1 :] or data
        text = mask_secret_looking(clean(data.decode("utf-8", "replace")))
        if tail.cut:
            text = f"[... the log's earlier lines left out: its last {len(data)} bytes]\n{text}"
        found.put("logs", f"logs/{ident}.txt", text.encode("utf-8")[: limits.log_bytes + 200])
    if len(jobs) > limits.logs:
        found.lack("logs (more)", f"{len(jobs) - limits.logs} more failing jobs: logs not read")


def collect_event(
    event: str,
    payload: dict[str, Any],
    dest: Path,
    *,
    reader: ContextReader | None = None,
    repo: str | None = None,
    subject: ContextSubject | None = None,
    limits: Limits | None = None,
    untrusted: Untrusted = "mark",
) -> ContextManifest:
    """The context of the issue or pull request an event (`issue_comment`, its payload) is
    about, through `reader` (the payload alone when None). `subject` and `repo` override what
    the payload names (serve knows its intent's target). InvalidInput when neither names an
    issue or pull request."""
    subject = subject or subject_of(event, payload)
    if subject is None:
        raise InvalidInput(
            f"the {line(event, limit=60) or 'event'} payload names no issue or pull request: "
            "there is no context to collect"
        )
    return collect(
        reader or PayloadReader(event, payload),
        dest,
        subject=subject,
        repo=repo or repo_of(payload),
        trigger=trigger_of(event, payload),
        limits=limits,
        untrusted=untrusted,
        # The payload is the event as it was taken in: its trigger text is the frozen one.
        frozen=snapshot_of(event, payload),
    )


__all__ = ["ContextDir", "Limits", "bounded_json", "collect", "collect_event"]
