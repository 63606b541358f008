"""The run_skill handler's context collaborator: what it collects is the run's context
directory (the agent reads it at `<input>/context/`), it is gone once the run is over, and a
context that cannot be collected at all fails the attempt before any agent starts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from holon.errors import InvalidInput
from holon.intent import ActionIntent
from tests.executor.conftest import intent, run_skill_handler

AGENT = Path(__file__).resolve().parents[1] / "agents" / "context_agent.py"


class Written:
    """Writes a context manifest naming the intent, remembering where."""

    def __init__(self) -> None:
        self.dests: list[Path] = []

    def collect(self, intent: ActionIntent, dest: Path) -> None:
        self.dests.append(dest)
        dest.mkdir()
        (dest / "manifest.json").write_text(json.dumps({"for": intent.id}))


class Refusing:
    def collect(self, intent: ActionIntent, dest: Path) -> None:
        raise InvalidInput("the event names no issue or pull request")


def test_the_collected_context_reaches_the_agent_and_is_removed_after(tmp_path: Path) -> None:
    source = Written()
    handler = run_skill_handler(tmp_path, [sys.executable, str(AGENT)])
    handler.context = source
    act = intent("run_skill")
    result = handler(act, 1)
    assert result.status == "succeeded", result.error
    output = tmp_path / "runs" / f"{act.id}-1"
    assert json.loads((output / "context-manifest.json").read_text()) == {"for": act.id}
    (dest,) = source.dests
    assert not dest.exists()
    assert not dest.parent.exists()


def test_a_context_that_cannot_be_collected_fails_before_any_agent(tmp_path: Path) -> None:
    handler = run_skill_handler(tmp_path, [sys.executable, str(AGENT)])
    handler.context = Refusing()
    act = intent("run_skill")
    result = handler(act, 1)
    assert result.status == "failed"
    assert result.error == "context: the event names no issue or pull request"
    assert not (tmp_path / "runs" / f"{act.id}-1").exists()  # the next attempt starts afresh
