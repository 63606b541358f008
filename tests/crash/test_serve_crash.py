"""`holon serve` (the replay example, dry run) killed at its state saves and journal lines, then
started again: the same intents settle as in an uninterrupted serve, each attempt journaled once,
nothing left inflight, state and journals valid."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from holon.state.journal import Journal
from holon.state.store import StateStore
from tests.serve.test_recovery import _lines, _serve, _settled

POINTS = [
    "journal.events:after",
    "journal.decisions:after#3",
    "journal.actions:after#2",
    "state.save:after",
]


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
    assert "inflight" not in _settled(state).values()
