"""Restoring serve state across Actions runs from the repository's state artifacts (over real HTTP
to the loopback GitHub, which redirects downloads to an unauthenticated blob URL) and the cache.

Racing runs merge losslessly; a fork's artifact, an expired one and every kind of poisoned or
corrupt bundle are left out, the refused ones with one warning line each, and the rest is still
merged; a token without `actions: read` is one warning and the run goes on."""

from __future__ import annotations

import io
import os
import warnings
import zipfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from holon.actions import bundle, coverage
from holon.actions.state_sync import Restored, restore, restore_state
from holon.state.store import StateStore
from tests.actions.state_support import (
    NOW,
    Settings,
    bundle_zip,
    client_of,
    entry,
    journal_lines,
    ndjson,
    record,
    settings,
    state_json,
    sync_settings,
    zip_of,
)
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.artifacts import BLOB


def _at(days: int) -> str:
    return (NOW - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _restore(server: LoopbackGitHub, s: Settings) -> tuple[Restored, list[str]]:
    warned: list[str] = []
    restored = restore(sync_settings(s), client=client_of(server), warn=warned.append, now=NOW)
    return restored, warned


def _records(s: Settings) -> dict[str, str]:
    """The records restored (less the one saying which artifacts the state holds)."""
    state = StateStore(s.state_dir).load()
    held = f"meta:{coverage.KEY}"
    return {rid: r.status for rid, r in state.records.items() if rid != held}


def test_racing_runs_merge_losslessly_every_artifact_the_state_lacks(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    repo = github_server.state.repos["octocat/Hello-World"]
    s = settings(tmp_path, repo.id)
    # Two runs raced on one intent: one saw it inflight, the other settled it; each journaled
    # the event, and one line both saw.
    first = bundle_zip(
        record("a"),
        record("int_1", "inflight", kind="intent", at=NOW - timedelta(minutes=2)),
        events=[entry("evt_1"), entry("evt_both")],
    )
    second = bundle_zip(
        record("b"),
        record("int_1", "succeeded", kind="intent", at=NOW - timedelta(minutes=3)),
        events=[entry("evt_both"), entry("evt_2")],
        actions=[entry("act_1")],
    )
    third = bundle_zip(record("c"))
    oldest = bundle_zip(record("older"))
    repo.add_artifact("holon-state-104-1", oldest, created_at=_at(4))
    repo.add_artifact("holon-state-101-1", first, created_at=_at(1), run_id=101)
    repo.add_artifact("holon-state-102-1", second, created_at=_at(1), run_id=102)
    repo.add_artifact("holon-state-103-1", third, created_at=_at(2), run_id=103)
    repo.add_artifact("coverage-report", b"not ours", created_at=_at(0))
    StateStore(s.state_dir).save(StateStore(tmp_path).load())  # an empty live state
    live = StateStore(s.state_dir)
    with live:
        state = live.load()
        state.put(record("live"))
        live.save(state)

    restored, warned = _restore(github_server, s)

    assert warned == []
    # Every one the state lacks, however many runs raced (not only the newest few).
    assert sorted(restored.merged) == [
        "artifact holon-state-101-1 (run 101)",
        "artifact holon-state-102-1 (run 102)",
        "artifact holon-state-103-1 (run 103)",
        f"artifact holon-state-104-1 (run {repo.artifacts[1001].run_id})",
    ]
    assert _records(s) == {
        "dedupe:a": "live",
        "dedupe:b": "live",
        "dedupe:c": "live",
        "dedupe:older": "live",
        "dedupe:live": "live",
        "intent:int_1": "succeeded",  # settled beats inflight, whatever the times
    }
    events = [e["id"] for e in journal_lines(s.state_dir / "events.ndjson")]
    assert sorted(events) == ["evt_1", "evt_2", "evt_both"]
    assert [e["id"] for e in journal_lines(s.state_dir / "actions.ndjson")] == ["act_1"]
    # Again (a re-run): the state holds them all; nothing is downloaded, every line still once.
    again, _ = _restore(github_server, s)
    assert again.merged == []
    assert sorted(e["id"] for e in journal_lines(s.state_dir / "events.ndjson")) == events
    assert github_server.count("actions/download-artifact") == 4


def test_no_authorization_header_reaches_the_blob_url(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    repo = github_server.state.repos["octocat/Hello-World"]
    repo.add_artifact("holon-state-7-1", bundle_zip(record("x")))
    restored, _ = _restore(github_server, settings(tmp_path, repo.id))
    assert restored.merged == [f"artifact holon-state-7-1 (run {repo.artifacts[1001].run_id})"]
    (download,) = [c for c in github_server.calls if c.operation == "actions/download-artifact"]
    assert download.headers["authorization"] == f"token {github_server.token}"
    (blob,) = [c for c in github_server.calls if c.operation == BLOB]
    assert "authorization" not in blob.headers
    assert github_server.token is not None
    assert all(github_server.token not in v for v in blob.headers.values())
    assert blob.query == {"sig": ["signed"]}


def test_a_forks_artifact_is_refused_by_name_and_the_others_merged(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    repo = github_server.state.repos["octocat/Hello-World"]
    s = settings(tmp_path, repo.id)
    repo.add_artifact("holon-state-5-1", bundle_zip(record("ours")), created_at=_at(2), run_id=5)
    repo.add_artifact(
        "holon-state-6-1",
        bundle_zip(record("planted", "seen", writer="zzz")),
        head_repository_id=repo.id + 1,
        created_at=_at(1),
        run_id=6,
    )
    restored, warned = _restore(github_server, s)
    assert restored.merged == ["artifact holon-state-5-1 (run 5)"]
    (line,) = warned
    assert line == restored.refused[0]
    assert line.startswith("artifact holon-state-6-1 (run 6) refused: ")
    assert "fork" in line
    assert _records(s) == {"dedupe:ours": "live"}
    # Refused on the listing alone: the fork's bundle was never downloaded.
    assert github_server.count("actions/download-artifact") == 1


def test_an_artifact_of_another_repository_is_refused(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    repo = github_server.state.repos["octocat/Hello-World"]
    repo.add_artifact("holon-state-5-1", bundle_zip(record("x")))
    restored, warned = _restore(github_server, settings(tmp_path, repo.id + 7))
    assert restored.merged == []
    assert "another repository" in warned[0]


def test_an_expired_artifact_is_ignored(github_server: LoopbackGitHub, tmp_path: Path) -> None:
    repo = github_server.state.repos["octocat/Hello-World"]
    s = settings(tmp_path, repo.id)
    repo.add_artifact("holon-state-1-1", bundle_zip(record("gone")), expired=True)
    repo.add_artifact("holon-state-2-1", bundle_zip(record("kept")), created_at=_at(3))
    restored, warned = _restore(github_server, s)
    assert (restored.merged, warned) == (["artifact holon-state-2-1 (run 101002)"], [])
    assert _records(s) == {"dedupe:kept": "live"}


def _many_entries() -> bytes:
    return zip_of({f"events.ndjson.{n}": b"" for n in range(1, 1002)})


def _bomb() -> bytes:
    return zip_of({"state.json": b" " * (4 * 1024 * 1024)})


def _duplicate() -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate it is told to write
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("state.json", state_json())
            archive.writestr("state.json", state_json(record("second")))
    return buffer.getvalue()


POISONED: dict[str, tuple[Callable[[], bytes], str]] = {
    "symlink": (
        lambda: zip_of({"state.json": state_json()}, symlinks={"events.ndjson": "/etc/passwd"}),
        "a symlink",
    ),
    "dot_dot": (lambda: zip_of({"../state.json": state_json()}), "'..'"),
    "absolute": (lambda: zip_of({"/tmp/state.json": state_json()}), "absolute"),
    "nested": (lambda: zip_of({"sub/state.json": state_json()}), "not a file of a state bundle"),
    "unknown_file": (lambda: zip_of({"run.sh": b"echo"}), "not a file of a state bundle"),
    "duplicate": (_duplicate, "appears twice"),
    "too_many_entries": (_many_entries, "over the limit of 1000"),
    "zip_bomb": (_bomb, "packed tighter than 20:1"),
    "not_a_zip": (lambda: b"PK\x03\x04 garbage", "not a readable zip"),
    "corrupt_json": (lambda: zip_of({"state.json": b'{"records": {'}), "state.json: "),
    "schema_invalid": (
        lambda: zip_of({"state.json": b'{"version": 2, "records": {}}'}),
        "state.json: version",
    ),
    "record_out_of_range": (
        lambda: zip_of(
            {
                "state.json": b'{"records": {"dedupe:x": {"updated_at": "9999-01-01T00:00:00Z",'
                b' "writer": "w"}}}'
            }
        ),
        "timestamp out of range",
    ),
    "corrupt_journal": (
        lambda: zip_of({"state.json": state_json(), "events.ndjson": b'{"id": "a"}\nnope\n{}\n'}),
        "line 2 is not a JSON entry",
    ),
    "journal_empty_id": (
        lambda: zip_of({"state.json": state_json(), "events.ndjson": ndjson({"id": ""})}),
        "empty id",
    ),
}


@pytest.mark.parametrize("case", POISONED.values(), ids=POISONED.keys())
def test_a_poisoned_or_corrupt_artifact_is_refused_and_the_rest_merged(
    github_server: LoopbackGitHub, tmp_path: Path, case: tuple[Callable[[], bytes], str]
) -> None:
    make, reason = case
    repo = github_server.state.repos["octocat/Hello-World"]
    s = settings(tmp_path, repo.id)
    repo.add_artifact("holon-state-1-1", bundle_zip(record("good"), events=[entry("e")]),
                      created_at=_at(2), run_id=1)  # fmt: skip
    repo.add_artifact("holon-state-2-1", make(), created_at=_at(1), run_id=2)
    restored, warned = _restore(github_server, s)
    assert restored.merged == ["artifact holon-state-1-1 (run 1)"]
    (line,) = warned
    assert line.startswith("artifact holon-state-2-1 (run 2) refused: "), line
    assert reason in line
    assert "\n" not in line
    assert _records(s) == {"dedupe:good": "live"}
    assert [e["id"] for e in journal_lines(s.state_dir / "events.ndjson")] == ["e"]
    # Nothing of the refused bundle, nor any scratch directory, is left behind.
    assert sorted(p.name for p in s.state_dir.parent.iterdir()) == ["state"]
    assert not (tmp_path / "etc").exists()


def test_an_oversized_bundle_is_refused(
    github_server: LoopbackGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bundle, "MAX_UNPACKED", 2000)
    repo = github_server.state.repos["octocat/Hello-World"]
    big = zip_of({"state.json": state_json(), "events.ndjson": os.urandom(3000).hex().encode()})
    repo.add_artifact("holon-state-1-1", big)
    restored, warned = _restore(github_server, settings(tmp_path, repo.id))
    assert restored.merged == []
    (line,) = warned
    assert line == "artifact holon-state-1-1 (run 101001) refused: over 2000 bytes unpacked"


def test_a_token_without_actions_read_is_one_warning_and_the_run_goes_on(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    repo = github_server.state.repos["octocat/Hello-World"]
    s = settings(tmp_path, repo.id)
    StateStore(s.state_dir).save(StateStore(tmp_path / "nothing").load())
    with StateStore(s.state_dir) as live:
        state = live.load()
        state.put(record("local"))
        live.save(state)
    github_server.fail("actions/list-artifacts-for-repo", 403)
    restored, warned = _restore(github_server, s)
    (line,) = warned
    assert line.startswith("state artifacts not listed, going on with the local state: ")
    assert "actions: read" in line
    assert restored == Restored([], [line])
    assert _records(s) == {"dedupe:local": "live"}


def _write_cache(s: Settings, data: dict[str, bytes]) -> None:
    assert s.cache_dir is not None
    s.cache_dir.mkdir(parents=True)
    for name, raw in data.items():
        (s.cache_dir / name).write_bytes(raw)


@pytest.mark.parametrize("default_branch", [True, False])
def test_the_cache_is_merged_only_on_default_branch_runs(
    tmp_path: Path, default_branch: bool
) -> None:
    s = settings(tmp_path, 1, default_branch=default_branch)
    cached = {"state.json": state_json(record("cached")), "events.ndjson": ndjson(entry("c"))}
    _write_cache(s, cached)
    warned: list[str] = []
    restored = restore_state(s, client=None, warn=warned.append)
    assert warned == []
    if default_branch:
        assert restored.merged == ["cache"]
        assert _records(s) == {"dedupe:cached": "live"}
        assert [e["id"] for e in journal_lines(s.state_dir / "events.ndjson")] == ["c"]
    else:
        assert restored.merged == []
        assert "not on the default branch" in restored.skipped[0]
        assert not s.state_dir.exists()


def test_a_cache_holding_a_symlink_is_refused(tmp_path: Path) -> None:
    s = settings(tmp_path, 1)
    outside = tmp_path / "secret.ndjson"
    outside.write_bytes(ndjson(entry("leaked")))
    _write_cache(s, {"state.json": state_json(record("cached"))})
    assert s.cache_dir is not None
    (s.cache_dir / "events.ndjson").symlink_to(outside)
    warned: list[str] = []
    restored = restore_state(s, client=None, warn=warned.append)
    assert restored.merged == []
    (line,) = warned
    assert line.startswith("cache refused: ")
    assert "symlink" in line
    assert not s.state_dir.exists()


def test_an_empty_or_absent_cache_is_no_source(tmp_path: Path) -> None:
    s = settings(tmp_path, 1)
    assert restore_state(s, client=None, warn=print) == Restored([], [])
    assert s.cache_dir is not None
    s.cache_dir.mkdir(parents=True)
    assert restore_state(s, client=None, warn=print) == Restored([], [])


def test_a_damaged_zip_is_refused_never_a_crash(tmp_path: Path) -> None:
    """Every byte of a valid bundle's zip flipped in turn (a truncated or damaged download):
    each is either still a valid bundle or refused with a one-line reason."""
    good = bundle_zip(record("x"), events=[entry("e1"), entry("e2")])
    outcomes: set[str] = set()
    for index in range(0, len(good), 3):
        damaged = bytearray(good)
        damaged[index] ^= 0xFF
        for data in (bytes(damaged), good[:index]):
            dest = tmp_path / f"d{index}-{len(data)}"
            dest.mkdir()
            try:
                bundle.extract_zip(data, dest)
                bundle.load_bundle(dest)
                outcomes.add("valid")
            except bundle.BundleRefused as exc:
                outcomes.add("refused" if "\n" not in str(exc) else f"not one line: {exc}")
    assert outcomes == {"valid", "refused"}
