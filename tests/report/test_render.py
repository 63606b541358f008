"""`holon report`'s Markdown and text: names read from the journals and the state (a skill, a
closure outcome) are outside text, escaped so they cannot break the table, forge a marker, run
HTML or mention anyone; the CLI does the same on a state dir planted with them."""

from __future__ import annotations

import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from holon.report.aggregate import build_report
from holon.report.render import to_markdown, to_text
from holon.state.journal import Journal
from holon.state.model import Record, ServeState
from holon.state.store import StateStore
from tests.serve.conftest import holon_argv, serve_env

AT = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
HOSTILE = (
    "evil | col\n| --- |\n<img src=x onerror=alert(1)> <!-- holon:v1 --> @admin `x` [a](b)\u202e"
)


def _planted() -> tuple[list[dict[str, Any]], list[dict[str, Any]], ServeState]:
    decisions = [
        {
            "id": "dec:e",
            "at": AT.isoformat(),
            "intents": [{"id": "a", "type": "run_skill", "args": {"skill": HOSTILE}}],
        }
    ]
    actions = [
        {
            "id": "a:1",
            "intent_id": "a",
            "type": "run_skill",
            "subject": "issue:1",
            "attempt": 1,
            "status": "succeeded",
            "run_outcome": "success",
            "at": AT.isoformat(),
        }
    ]
    state = ServeState()
    state.put(
        Record(
            kind="closure",
            key=f"issue:1 {HOSTILE}",
            updated_at=AT,
            writer="w",
            data={"closure_outcome": HOSTILE, "deciding_items": ["run:a"]},
        )
    )
    return decisions, actions, state


def _assert_contained(markdown: str) -> None:
    table = [line for line in markdown.splitlines() if line.startswith("|")]
    # Every table line has the header's number of cells: no name broke out of its cell.
    widths = {line.replace("\\|", "").count("|") for line in table}
    assert len(widths) == 1, table
    assert re.search(r"(?<!\\)<img", markdown) is None  # escaped: shown, never HTML
    assert "<!--" not in markdown
    assert "@admin" not in markdown  # a zero-width space keeps it from mentioning anyone
    assert "\u202e" not in markdown
    assert "[a](b)" not in markdown


def test_hostile_names_stay_in_their_cells() -> None:
    decisions, actions, state = _planted()
    report = build_report(events=[], decisions=decisions, actions=actions, state=state)
    assert report.skills[0].skill == HOSTILE  # JSON keeps the name as it was
    _assert_contained(to_markdown(report))
    text = to_text(report)
    assert "\u202e" not in text
    assert "evil | col | --- | <img" in text  # one line, shown as it is, nothing hidden


def test_the_cli_escapes_hostile_names_of_a_planted_state_dir(tmp_path: Path) -> None:
    decisions, actions, state = _planted()
    store = StateStore(tmp_path / "s")
    store.save(state)
    with Journal(tmp_path / "s" / "decisions.ndjson") as journal:
        journal.append_many(decisions)
    with Journal(tmp_path / "s" / "actions.ndjson") as journal:
        journal.append_many(actions)
    argv = holon_argv("report", "--state-dir", str(tmp_path / "s"), "--markdown")
    done = subprocess.run(argv, env=serve_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    _assert_contained(done.stdout)
