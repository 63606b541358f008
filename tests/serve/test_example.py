"""The committed serve example replays to the hand-written expected intents."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from holon.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "serve"


def _journal(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def replayed_intents(state: Path) -> list[dict[str, Any]]:
    """What each replayed delivery decided, in the shape of `expected.json`."""
    events = _journal(state / "events.ndjson")
    decisions = _journal(state / "decisions.ndjson")
    # One decision per event, in order (a duplicate has the same event id as its original).
    assert [d["event_id"] for d in decisions] == [e["id"] for e in events]
    got = []
    for event, decision in zip(events, decisions, strict=True):
        intents = []
        for intent in decision["intents"]:
            args = intent["args"]
            detail = args.get("skill") or args.get("kind") or args.get("on")
            intents.append([intent["type"], intent["target"], detail])
        got.append(
            {
                "delivery": event["envelope"]["delivery"],
                "outcome": decision["outcome"],
                "intents": intents,
                "refused": [r["guard"] for r in decision["refused"]],
            }
        )
    return got


def test_replay_file_is_built_from_the_edits() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import build; print(build.build(), end='')"],
        cwd=EXAMPLE,
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout == (EXAMPLE / "replay.ndjson").read_text()


def test_example_replays_to_the_expected_intents(tmp_path: Path) -> None:
    state = tmp_path / "state"
    argv = [
        "serve",
        "--state-dir",
        str(state),
        "--replay",
        str(EXAMPLE / "replay.ndjson"),
        "--dry-run",
        "--once",
        "--facts",
        str(EXAMPLE / "facts.json"),
    ]
    assert main(argv) == 2  # issue 1 was stopped: a human is needed
    assert replayed_intents(state) == json.loads((EXAMPLE / "expected.json").read_text())
    # Every intent was performed exactly once, as a dry run.
    actions = _journal(state / "actions.ndjson")
    assert len({a["id"] for a in actions}) == len(actions) == 6
    assert all(a["dry_run"] or a["type"] == "wait" for a in actions)
