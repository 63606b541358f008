"""Crash recovery: SIGKILL between an effect and its journal line, and between the journal line
and the state save; on restart nothing is lost and nothing is performed twice."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from holon.cli.serve_cmd import CRASH_ENV
from tests.serve.conftest import EXAMPLE, holon_argv, serve_env


def _serve(state: Path, *extra: str, crash: str | None = None) -> subprocess.CompletedProcess[str]:
    argv = holon_argv(
        "serve",
        "--state-dir",
        str(state),
        "--replay",
        str(EXAMPLE / "replay.ndjson"),
        "--once",
        "--facts",
        str(EXAMPLE / "facts.json"),
        *extra,
    )
    env = serve_env(**({CRASH_ENV: crash} if crash else {}))
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _settled(state: Path) -> dict[str, str]:
    records = json.loads((state / "state.json").read_text())["records"]
    # state.json files each record under its id, kind:key.
    return {
        rid.partition(":")[2]: r.get("status", "live")
        for rid, r in records.items()
        if rid.startswith("intent:")
    }


@pytest.mark.parametrize("point", ["after_effect_before_journal", "after_journal_before_state"])
def test_dry_run_crash_then_restart(tmp_path: Path, point: str) -> None:
    clean = tmp_path / "clean"
    assert _serve(clean, "--dry-run").returncode == 2
    crashed = tmp_path / "crashed"
    first = _serve(crashed, "--dry-run", crash=point)
    assert first.returncode == -signal.SIGKILL
    second = _serve(crashed, "--dry-run")
    assert second.returncode == 2, second.stderr
    actions = _lines(crashed / "actions.ndjson")
    # Each intent attempt appears once: performed once, never repeated.
    assert len({a["id"] for a in actions}) == len(actions)
    assert sorted(a["id"] for a in actions) == sorted(
        a["id"] for a in _lines(clean / "actions.ndjson")
    )
    assert _settled(crashed) == _settled(clean)
    assert "inflight" not in _settled(crashed).values()


# Enough of each skill the replay runs for the runner's checks: it writes the artifacts of the
# skill folder it was given (and a change, which github-issue-solve requires).
AGENT = """
import json, os
out = os.environ["HOLON_OUTPUT_DIR"]
skills = os.listdir(os.path.join(os.environ["HOLON_INPUT_DIR"], "skills"))
files = {"summary.md": "Done."}
if "github-review" in skills:
    files.update({"review.json": "[]", "review.md": "Nothing to add."})
if "github-pr-fix" in skills:
    files["pr-fix.json"] = json.dumps(
        {"review_replies": [], "checks": [], "verification": [{"command": "true", "exit_code": 0}]}
    )
with open(os.path.join(os.environ["HOLON_WORKSPACE_DIR"], "README.md"), "a") as f:
    f.write("worked on\\n")
for name, text in files.items():
    with open(os.path.join(out, name), "w") as f:
        f.write(text)
with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump({"status": "completed", "outcome": "success"}, f)
"""


@pytest.mark.parametrize("point", ["after_effect_before_journal", "after_journal_before_state"])
def test_skill_run_is_never_run_twice(tmp_path: Path, point: str) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("x\n")
    agent_file = tmp_path / "agent.py"
    agent_file.write_text(AGENT)
    agent = ["--workspace", str(workspace), "--agent", f"{sys.executable} {agent_file}"]
    state = tmp_path / "state"
    outputs = tmp_path / "state.runs"  # the default: beside the state directory, never in it
    first = _serve(state, *agent, crash=point)
    assert first.returncode == -signal.SIGKILL
    runs_before = sorted(p.name for p in outputs.iterdir())
    assert len(runs_before) == 1
    second = _serve(state, *agent)
    assert second.returncode in (1, 2, 3), second.stderr
    runs = sorted(p.name for p in outputs.iterdir())
    # The first run's output was recovered, not re-run: its directory holds one run record.
    assert runs_before[0] in runs
    assert (outputs / runs_before[0] / "run.json").is_file()
    assert not list(state.rglob("run.json"))
    actions = _lines(state / "actions.ndjson")
    run_actions = [a for a in actions if a["type"] == "run_skill" and not a["dry_run"]]
    assert len({a["id"] for a in run_actions}) == len(run_actions)
    # The settled runs' publishes, without a token previewed: the effects they would perform.
    publish = [a for a in actions if a["type"] == "run_skill" and a["dry_run"]]
    assert publish
    assert all(a["status"] == "succeeded" for a in publish), [a["error"] for a in publish]
    changes = [a["effect"]["would"] for a in publish if "files" in a["effect"]["would"]]
    assert changes
    assert [c["files"] for c in changes] == [["modify README.md"]] * len(changes)
    assert all(a["status"] == "succeeded" for a in run_actions), [a["error"] for a in run_actions]
    assert len(run_actions) == len(runs)
    assert "inflight" not in _settled(state).values()
