"""Serve state across Actions runs: restore it before the serve opens the state directory,
export the bundle to upload after.

Sources, in the order they are merged (docs/state-across-runs.md):

- the repository's artifacts named `holon-state-<run id>-<attempt>[-<suffix>]`, the source of
  truth (caches are scoped by ref and the REST API cannot download them): listed through the REST
  API (`actions: read`), expired ones ignored, ones whose run a fork could influence refused
  (`workflow_run.head_repository_id` must equal `workflow_run.repository_id` and the
  repository's own id), and every one the state does not hold yet downloaded (newest first, at
  most `coverage.MAX_MERGED` a run; `coverage.py`), checked against the digest GitHub lists,
  extracted and validated (`bundle.py`);
- the cache directory (`HOLON_CACHE_DIR`) actions/cache restored, a fast path, only on a run of
  the default branch: a cache entry of `refs/pull/N/merge` could come from a fork-influenced run.

Every source is validated whole before any of it is merged; a refused one is one warning line
(`warn`) and never stops the others. The merge is record by record (`holon.state.model.merge`,
lossless, commutative) with the live state, and journal by journal (`merge_journal_entries`:
the entries the live journal lacks are appended, so each id is there once), under the state
store's lock. Nothing restored authorizes anything: an intent restored inflight is re-checked
by the controller's recovery like any other (`holon.controller.recovery`).

The cache: export writes the same bundle into `HOLON_CACHE_DIR` on default-branch runs, and
the composite action saves that directory with actions/cache (key
`holon-state-<repo id>-<run id>-<attempt>`); the live state directory itself (lock, `.prev`,
unscrubbed journals) is never cached or uploaded.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import github

from holon.actions import artifacts as art
from holon.actions import coverage
from holon.actions.bundle import (
    Bundle,
    BundleRefused,
    copy_dir,
    extract_zip,
    journal_of,
    load_bundle,
)
from holon.actions.trim import scrub, trim_entry
from holon.errors import HolonError, InvalidInput
from holon.fsutil import remove_tree
from holon.secrets import mask_secret_looking
from holon.state.journal import Journal, merge_journal_entries
from holon.state.model import DEFAULT_RETENTION, ServeState, merge
from holon.state.store import StateStore

# `retention-days` of the state artifacts (action.yml, holon.yml): within the prune horizon
# (`DEFAULT_RETENTION`, 30 days), so no restored copy is older than a pruned tombstone.
ARTIFACT_RETENTION_DAYS = 14
# A bundle stays well inside what a restore accepts (64 MiB unpacked), however long the journals
# grow: the oldest entries beyond this are left out (the complete journals are the run's own).
MAX_EXPORT_JOURNAL_BYTES = 32 * 1024 * 1024
Warn = Callable[[str], None]


class StateSyncConfig(Protocol):
    """What `restore_state` and `export_state` read off the action's configuration."""

    @property
    def state_dir(self) -> Path: ...
    @property
    def upload_dir(self) -> Path | None: ...
    @property
    def cache_dir(self) -> Path | None: ...
    @property
    def repo(self) -> str: ...
    @property
    def repo_id(self) -> int | None: ...
    @property
    def default_branch_run(self) -> bool: ...
    @property
    def run_id(self) -> Any: ...
    @property
    def run_attempt(self) -> Any: ...


@dataclass(frozen=True)
class StateSyncSettings:
    state_dir: Path
    upload_dir: Path | None
    cache_dir: Path | None
    repo: str
    repo_id: int | None
    default_branch_run: bool
    run_id: str | int | None = None
    run_attempt: str | int | None = None

    @classmethod
    def of(cls, config: StateSyncConfig) -> StateSyncSettings:
        return cls(
            state_dir=Path(config.state_dir),
            upload_dir=Path(config.upload_dir) if config.upload_dir is not None else None,
            cache_dir=Path(config.cache_dir) if config.cache_dir is not None else None,
            repo=config.repo,
            repo_id=config.repo_id,
            default_branch_run=bool(config.default_branch_run),
            run_id=config.run_id,
            run_attempt=config.run_attempt,
        )


@dataclass(frozen=True)
class Restored:
    merged: list[str]  # one line per source merged ("artifact holon-state-123-1 (run 123)")
    refused: list[str]  # one line per source refused and why (each also given to `warn`)
    skipped: list[str] = field(default_factory=list)  # sources left out by rule, not refused


def _now(now: datetime | None) -> datetime:
    return now if now is not None else datetime.now(UTC)


def _scratch(settings: StateSyncSettings) -> str:
    # Beside the state directory: same filesystem, and under RUNNER_TEMP in Actions.
    parent = settings.state_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    return tempfile.mkdtemp(prefix="holon-restore-", dir=parent)


@dataclass
class _Holding:
    """The artifact ids the restored state holds (see `coverage.py`), and the ids listed."""

    held: set[int]
    listed: set[int] = field(default_factory=set)


def _live_held(settings: StateSyncSettings) -> set[int]:
    try:
        return coverage.held(StateStore(settings.state_dir).load())
    except (HolonError, OSError):  # unreadable: the merge under the lock says so
        return set()


def _artifact_bundles(
    settings: StateSyncSettings,
    client: github.Github,
    now: datetime,
    refuse: Callable[[str], None],
    skipped: list[str],
    holding: _Holding,
) -> Iterable[tuple[str, Bundle]]:
    """Every trusted artifact the state does not hold yet, newest first, up to
    `coverage.MAX_MERGED`; what each one holds is held from then on."""
    try:
        listed = art.list_artifacts(client, settings.repo)
    except HolonError as exc:
        refuse(f"state artifacts not listed, going on with the local state: {_line(exc)}")
        return
    chosen, untrusted = art.choose(listed, repo_id=settings.repo_id, now=now, limit=len(listed))
    for line in untrusted:
        refuse(line)
    holding.listed = {a.id for a in chosen}
    tried = left = 0
    for artifact in chosen:
        if artifact.id in holding.held:
            continue
        if tried >= coverage.MAX_MERGED:
            left += 1
            continue
        tried += 1
        label = artifact.label()
        scratch = _scratch(settings)
        try:
            if artifact.size is not None and artifact.size > art.MAX_ZIP_BYTES:
                raise BundleRefused(f"over {art.MAX_ZIP_BYTES // (1024 * 1024)} MiB packed")
            url = art.download_url(client, settings.repo, artifact)
            data = art.fetch_blob(url)
            art.check_digest(artifact, data)
            extract_zip(data, Path(scratch))
            bundle = load_bundle(Path(scratch))
            holding.held |= {artifact.id} | coverage.held(bundle.state)
            yield label, bundle
        except (HolonError, OSError) as exc:  # whatever it was, it stops only this source
            refuse(f"{label} refused: {_line(exc)}")
        finally:
            remove_tree(Path(scratch))
    if left:
        skipped.append(
            f"{left} older state artifact(s) not merged: at most {coverage.MAX_MERGED} are "
            "merged per run; the next run merges them"
        )


def _cache_bundle(
    settings: StateSyncSettings, refuse: Callable[[str], None], skipped: list[str]
) -> Iterable[tuple[str, Bundle]]:
    if settings.cache_dir is None:
        return
    if not settings.default_branch_run:
        if not _has_entries(settings.cache_dir):
            return
        skipped.append(
            "cache not merged: this run is not on the default branch (a cache of another ref "
            "could come from a run a fork influenced)"
        )
        return
    scratch = _scratch(settings)
    try:
        if copy_dir(settings.cache_dir, Path(scratch)):
            yield "cache", load_bundle(Path(scratch))
    except (HolonError, OSError) as exc:
        refuse(f"cache refused: {_line(exc)}")
    finally:
        remove_tree(Path(scratch))


def _line(exc: BaseException) -> str:
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return " ".join(mask_secret_looking(text).split())[:400]


def _has_entries(directory: Path) -> bool:
    try:
        with os.scandir(directory) as found:
            return any(True for _ in found)
    except OSError:
        return False


def restore(
    settings: StateSyncSettings,
    *,
    client: github.Github | None,
    warn: Warn,
    now: datetime | None = None,
) -> Restored:
    """Merge the trusted artifacts and (on the default branch) the cache into the live state."""
    now = _now(now)
    merged: list[str] = []
    refused: list[str] = []
    skipped: list[str] = []

    def refuse(line: str) -> None:
        refused.append(line)
        warn(line)

    sources: list[tuple[str, Bundle]] = []
    holding = _Holding(_live_held(settings))
    if client is not None:
        sources.extend(_artifact_bundles(settings, client, now, refuse, skipped, holding))
    sources.extend(_cache_bundle(settings, refuse, skipped))
    if not sources:
        return Restored(merged, refused, skipped)
    store = StateStore(settings.state_dir)
    try:
        with store:
            live = store.load()
            state = functools.reduce(merge, (b.state for _, b in sources), live)
            if holding.listed:
                # What this state holds now, of what GitHub still lists (bounded by the listing).
                ids = (holding.held | coverage.held(state)) & holding.listed
                state.put(coverage.held_record(ids, now))
            if state != live:
                store.save(state)
            _merge_journals(store, [b for _, b in sources], refuse)
    except (HolonError, OSError) as exc:  # the live state is locked or unusable
        refuse(f"restored state not merged: {_line(exc)}")
        return Restored([], refused, skipped)
    merged.extend(label for label, _ in sources)
    return Restored(merged, refused, skipped)


def _merge_journals(store: StateStore, bundles: list[Bundle], refuse: Warn) -> None:
    names = sorted({name for bundle in bundles for name in bundle.journals})
    for name in names:
        with store.journal(name) as journal:
            try:
                live = list(journal.read())
            except InvalidInput as exc:
                refuse(f"journal {name} not merged: {_line(exc)}")
                continue
            merged: list[dict[str, Any]] = []
            for bundle in bundles:
                merged = merge_journal_entries(merged, bundle.journals.get(name, ()))
            known = {entry["id"] for entry in live}
            journal.append_many(e for e in merged if e["id"] not in known)


def restore_state(config: StateSyncConfig, *, client: github.Github | None, warn: Warn) -> Restored:
    """The design's entry point: `restore` with the settings read off the action's config."""
    return restore(StateSyncSettings.of(config), client=client, warn=warn)


# Export.


def _journal_names(directory: Path) -> list[str]:
    try:
        found = {journal_of(p.name) for p in directory.iterdir()}
    except FileNotFoundError:
        return []
    return sorted(name for name in found if name is not None)


def bundle_of(
    settings: StateSyncSettings, *, now: datetime, warn: Warn | None = None
) -> tuple[ServeState, dict[str, list[dict[str, Any]]]]:
    """What a bundle holds of the live state directory: the state scrubbed, the journals'
    entries of the retention horizon trimmed and scrubbed, bounded in size (oldest dropped)."""
    store = StateStore(settings.state_dir)
    state = store.load()
    state = ServeState.model_validate(scrub(state.model_dump(mode="json")))
    horizon = now - DEFAULT_RETENTION
    journals: dict[str, list[dict[str, Any]]] = {}
    sized: list[tuple[str, str, int]] = []  # (at, journal, index) of every kept entry
    for name in _journal_names(settings.state_dir):
        try:
            entries = list(Journal(settings.state_dir / f"{name}.ndjson").read())
        except InvalidInput as exc:
            if warn is not None:
                warn(f"journal {name} not exported: {exc}")
            continue
        kept = [trim_entry(e) for e in entries if not _older(e, horizon)]
        journals[name] = kept
        sized.extend((_at(e), name, i) for i, e in enumerate(kept))
    _bound(journals, sized)
    return state, journals


def _older(entry: dict[str, Any], horizon: datetime) -> bool:
    """Whether the entry's time is before `horizon`; an entry without a readable one is kept."""
    try:
        at = datetime.fromisoformat(_at(entry))
    except ValueError:
        return False
    return at.tzinfo is not None and at < horizon


def _at(entry: dict[str, Any]) -> str:
    at = entry.get("at")
    return at if isinstance(at, str) else ""


def _bound(journals: dict[str, list[dict[str, Any]]], sized: list[tuple[str, str, int]]) -> None:
    def size(entry: dict[str, Any]) -> int:
        return len(json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode()) + 1

    total = sum(size(e) for entries in journals.values() for e in entries)
    if total <= MAX_EXPORT_JOURNAL_BYTES:
        return
    dropped: set[tuple[str, int]] = set()
    for _, name, index in sorted(sized):
        if total <= MAX_EXPORT_JOURNAL_BYTES:
            break
        total -= size(journals[name][index])
        dropped.add((name, index))
    for name, entries in journals.items():
        journals[name] = [e for i, e in enumerate(entries) if (name, i) not in dropped]


def _write_bundle(
    target: Path, state: ServeState, journals: dict[str, list[dict[str, Any]]]
) -> None:
    """Replace the directory `target` by the bundle, never leaving half of one: the bundle is
    written whole in a sibling directory and renamed into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
    old: Path | None = None
    try:
        StateStore(fresh).save(state)
        for name, entries in journals.items():
            with Journal(fresh / f"{name}.ndjson", fsync=False) as journal:
                journal.append_many(entries)
                journal.open()  # an empty journal is still a file of the bundle
            _fsync_file(fresh / f"{name}.ndjson")
        _fsync_dir(fresh)
        fresh.chmod(0o755)
        if os.path.lexists(target):
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
            os.rename(target, old / "bundle")
        os.rename(fresh, target)
        _fsync_dir(target.parent)
    except BaseException:
        if old is not None and not os.path.lexists(target):
            with contextlib.suppress(OSError):
                os.rename(old / "bundle", target)
        remove_tree(fresh)
        raise
    finally:
        if old is not None:
            remove_tree(old)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def export(
    settings: StateSyncSettings, *, now: datetime | None = None, warn: Warn | None = None
) -> Path | None:
    """Write the bundle into `upload_dir` (and, on a default-branch run, into `cache_dir`);
    the upload directory, or None when there is none to write."""
    if settings.upload_dir is None:
        return None
    state, journals = bundle_of(settings, now=_now(now), warn=warn)
    _write_bundle(settings.upload_dir, state, journals)
    if settings.default_branch_run and settings.cache_dir is not None:
        _write_bundle(settings.cache_dir, state, journals)
    return settings.upload_dir


def export_state(
    config: StateSyncConfig, *, warn: Warn | None = None, now: datetime | None = None
) -> Path | None:
    """The design's entry point: `export` with the settings read off the action's config."""
    return export(StateSyncSettings.of(config), now=now, warn=warn)


def horizon_days() -> int:
    """The prune horizon in days, for the retention check against the workflows."""
    return DEFAULT_RETENTION // timedelta(days=1)


__all__ = [
    "ARTIFACT_RETENTION_DAYS",
    "Restored",
    "StateSyncConfig",
    "StateSyncSettings",
    "bundle_of",
    "export",
    "export_state",
    "horizon_days",
    "restore",
    "restore_state",
]
