"""Restoring the artifacts of runs that raced: every trusted artifact the state does not hold yet
is merged, not only the newest three (which lost the others for good: the next run merged
those three, every later run what came after). Each restore records which artifacts its state
holds, so the next one downloads only those of the runs since."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from holon.actions import coverage
from holon.actions.state_sync import Restored, restore
from holon.state.store import StateStore
from tests.actions.state_support import (
    NOW,
    Settings,
    bundle_zip,
    client_of,
    record,
    settings,
    sync_settings,
)
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.state import Repo


def _at(minutes: int) -> str:
    return (NOW - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _restore(server: LoopbackGitHub, s: Settings) -> Restored:
    warned: list[str] = []
    restored = restore(sync_settings(s), client=client_of(server), warn=warned.append, now=NOW)
    assert warned == []
    return restored


def _keys(s: Settings) -> set[str]:
    return {r.key for r in StateStore(s.state_dir).load().live("dedupe")}


def _racers(repo: Repo, n: int) -> list[int]:
    """`n` runs that each restored nothing and made one record: an artifact each, newest last."""
    return [
        repo.add_artifact(
            f"holon-state-{200 + i}-1",
            bundle_zip(record(f"run-{i}", writer=f"run-{i}")),
            created_at=_at(60 - i),
            run_id=200 + i,
        ).id
        for i in range(n)
    ]


def test_eight_racing_runs_are_all_merged_and_held(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    repo = github_server.state.repos["octocat/Hello-World"]
    ids = _racers(repo, 8)
    s = settings(tmp_path / "next", repo.id)
    restored = _restore(github_server, s)
    assert len(restored.merged) == 8
    assert _keys(s) == {f"run-{i}" for i in range(8)}
    assert coverage.held(StateStore(s.state_dir).load()) == set(ids)


def test_the_next_run_downloads_only_the_artifacts_since(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    repo = github_server.state.repos["octocat/Hello-World"]
    ids = _racers(repo, 8)
    # The run that merged them all uploaded its own artifact, saying it holds them.
    merged = bundle_zip(
        *(record(f"run-{i}", writer=f"run-{i}") for i in range(8)),
        coverage.held_record(ids, NOW - timedelta(minutes=5)),
    )
    repo.add_artifact("holon-state-300-1", merged, created_at=_at(5), run_id=300)
    late = repo.add_artifact(
        "holon-state-301-1", bundle_zip(record("late")), created_at=_at(4), run_id=301
    )
    s = settings(tmp_path / "next", repo.id)
    restored = _restore(github_server, s)
    assert restored.merged == [
        "artifact holon-state-301-1 (run 301)",
        "artifact holon-state-300-1 (run 300)",
    ]
    assert github_server.count("actions/download-artifact") == 2
    assert _keys(s) == {f"run-{i}" for i in range(8)} | {"late"}
    assert coverage.held(StateStore(s.state_dir).load()) == {*ids, late.id, late.id - 1}


def test_an_older_bundle_cannot_vouch_for_a_newer_artifact(
    github_server: LoopbackGitHub, tmp_path: Path
) -> None:
    repo = github_server.state.repos["octocat/Hello-World"]
    newer_id = repo.next_id() + 2  # the id the newer artifact will get (the next but one)
    claim = coverage.held_record([newer_id], NOW - timedelta(minutes=30))
    repo.add_artifact("holon-state-1-1", bundle_zip(record("old"), claim), created_at=_at(30))
    newer = repo.add_artifact("holon-state-2-1", bundle_zip(record("new")), created_at=_at(1))
    assert newer.id == newer_id
    s = settings(tmp_path / "next", repo.id)
    assert len(_restore(github_server, s).merged) == 2
    assert _keys(s) == {"old", "new"}


def test_beyond_the_bound_the_rest_is_merged_by_the_next_runs(
    github_server: LoopbackGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(coverage, "MAX_MERGED", 2)
    repo = github_server.state.repos["octocat/Hello-World"]
    _racers(repo, 5)
    s = settings(tmp_path / "next", repo.id)
    first = _restore(github_server, s)
    assert len(first.merged) == 2
    assert first.skipped == [
        "3 older state artifact(s) not merged: at most 2 are merged per run; the next run "
        "merges them"
    ]
    assert _keys(s) == {"run-4", "run-3"}
    assert len(_restore(github_server, s).merged) == 2
    last = _restore(github_server, s)
    assert (len(last.merged), last.skipped) == (1, [])
    assert _keys(s) == {f"run-{i}" for i in range(5)}
    assert _restore(github_server, s).merged == []
