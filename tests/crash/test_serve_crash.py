"""`holon serve` (the replay example, dry run) killed at its state saves and journal lines, then
started again: the same intents settle as in an uninterrupted serve, each keeping the same result
(what it made: what a settled comment names), each attempt journaled once, nothing left inflight,
state and journals valid."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from holon.crashpoints import CRASH_ENV
from holon.state.journal import Journal
from holon.state.model import ServeState
from holon.state.store import StateStore
from tests.serve.github_serve import holon_comments
from tests.serve.test_recovery import _lines, _serve, _settled
from tests.serve.test_serve_publish import HOLON, REPO, _published_setup

POINTS = [
    "journal.events:after",
    "journal.decisions:after#3",
    "journal.actions:after#2",
    "state.save:after",
]


def _kept(state: Path) -> tuple[dict[str, object], dict[str, object]]:
    """What each settled intent's record keeps of its result, and the spend recorded."""
    loaded: ServeState = StateStore(state).load()
    results = {r.key: r.data.get("result") for r in loaded.live("intent")}
    return results, {r.key: r.data for r in loaded.live("spend")}


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    state = tmp_path_factory.mktemp("clean") / "state"
    assert _serve(state, "--dry-run").returncode == 2
    return state


@pytest.mark.parametrize("point", POINTS)
def test_serve_killed_at_a_write_point_then_started_again(
    tmp_path: Path, clean: Path, point: str
) -> None:
    state = tmp_path / "state"
    first = _serve(state, "--dry-run", crash=point)
    assert first.returncode == -signal.SIGKILL, f"{point} never reached: {first.stderr}"
    second = _serve(state, "--dry-run")
    assert second.returncode == 2, second.stderr
    StateStore(state).load()  # valid
    for name in ("events", "decisions", "actions"):
        with Journal(state / f"{name}.ndjson") as journal:
            list(journal.read())  # valid: no corrupt line
    actions = _lines(state / "actions.ndjson")
    assert len({a["id"] for a in actions}) == len(actions)
    assert sorted(a["id"] for a in actions) == sorted(
        a["id"] for a in _lines(clean / "actions.ndjson")
    )
    assert _settled(state) == _settled(clean)
    assert _kept(state) == _kept(clean)
    assert "inflight" not in _settled(state).values()


@pytest.mark.parametrize(
    "point", ["github:PATCH issues/comments/{n}:before", "github:PATCH issues/comments/{n}:after"]
)
def test_serve_killed_at_the_final_settle_names_what_it_published_on_restart(
    github_server: Any, tmp_path: Path, make_repo: Callable[..., Path], point: str
) -> None:
    """A serve acting on GitHub killed while settling the comment of a solve it published
    (the publishing journaled, the state not saved): the restart settles the comment naming
    the pull request and the commit, as an uninterrupted serve's does; nothing published
    again."""
    repo = github_server.state.repos[REPO]
    run = _published_setup(github_server, tmp_path, make_repo(dirty=False))
    crashed = run(**{CRASH_ENV: point})
    assert crashed.returncode == -signal.SIGKILL, f"{point} never reached: {crashed.stderr}"
    again = run()
    assert again.returncode == 0, again.stderr
    (pull,) = [i for i in repo.issues.values() if i.pull is not None]
    commit = repo.refs["heads/holon/issue-1"]
    (comment,) = holon_comments(repo, HOLON)
    assert "**Outcome:** `finished`" in comment.body, comment.body
    link = f"[pull request \\#{pull.number}](https://github.com/{REPO}/pull/{pull.number})"
    assert link in comment.body, comment.body
    assert f"- commit {commit}" in comment.body, comment.body
    assert "none recorded" not in comment.body, comment.body
    assert github_server.count("pulls/create") == 1
    assert github_server.count("issues/create-comment") == 1
