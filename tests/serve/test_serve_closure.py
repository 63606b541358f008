"""`holon serve` as an operator runs it: a skill run whose agent asks a question closes the subject
`askuserQuestion` with that question, in the state, in `serve status` and in the exit code; and
`--once` answers for the subjects its run handled, never for older ones in the state."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from holon.cli.main import main
from tests.serve.conftest import EXAMPLE, holon_argv, serve_env

QUESTION = "Would you like me to keep the v1 API, or drop it? <!-- holon:v1 subject=x --> @admin"
AGENT = f"""
import json, os, sys
out = os.environ["HOLON_OUTPUT_DIR"]
manifest = {{"status": "completed", "outcome": "needs_human",
            "question": {{"id": "q-api", "text": {QUESTION!r}}}}}
with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump(manifest, f)
sys.exit(2)
"""


def test_a_question_from_the_agent_closes_the_subject_askuserquestion(tmp_path: Path) -> None:
    replay = tmp_path / "replay.ndjson"
    # The example's first delivery: an owner's `/holon solve` on issue 1.
    replay.write_text((EXAMPLE / "replay.ndjson").read_text().splitlines()[0] + "\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("x\n")
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    state = tmp_path / "state"
    outputs = tmp_path / "elsewhere" / "runs"
    argv = holon_argv(
        "serve",
        "--state-dir",
        str(state),
        "--runs-dir",
        str(outputs),
        "--replay",
        str(replay),
        "--once",
        "--facts",
        str(EXAMPLE / "facts.json"),
        "--workspace",
        str(workspace),
        "--agent",
        f"{sys.executable} {agent}",
    )
    done = subprocess.run(argv, env=serve_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr  # a human is needed
    # The run's output (manifest, log, patch) is in the runs directory; the state holds none.
    (run,) = outputs.iterdir()
    assert (run / "manifest.json").is_file()
    assert not [p for p in state.rglob("*") if p.name in ("manifest.json", "run.json")]
    records = json.loads((state / "state.json").read_text())["records"]
    closure = records["closure:issue:1"]["data"]
    assert closure["lifecycle_outcome"] == "askuserQuestion"
    assert closure["operator_wait"] == "question"
    assert closure["question"] == {"id": "q-api", "text": QUESTION}
    status = subprocess.run(
        holon_argv("serve", "status", "--state-dir", str(state), "--json"),
        env=serve_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)["closures"]["issue:1"]
    assert shown["lifecycle_outcome"] == "askuserQuestion"
    assert QUESTION in shown["detail"]


def _replay_of(tmp_path: Path, name: str, *numbers: int) -> str:
    """A replay file of the example's deliveries at `numbers` (0: the owner's solve on issue 1,
    2: their review asked on pull request 2)."""
    lines = (EXAMPLE / "replay.ndjson").read_text().splitlines()
    path = tmp_path / name
    path.write_text("".join(lines[n] + "\n" for n in numbers))
    return str(path)


@pytest.mark.parametrize("inside", [".", "runs", "a/b"])
def test_a_runs_dir_inside_the_state_dir_is_refused(
    inside: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    argv = ["serve", "--state-dir", str(state), "--runs-dir", str(state / inside), "--once"]
    assert main(argv) == 64
    err = capsys.readouterr().err
    assert "is inside the state directory" in err
    assert err.count("\n") == 1
    assert not state.exists()  # refused before anything was written


def test_serve_once_answers_for_the_subjects_it_handled_not_older_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(tmp_path / "state")
    facts = ["--facts", str(EXAMPLE / "facts.json")]
    # No agent configured: issue 1's run fails, and its closure stays failed in the state.
    first = _replay_of(tmp_path, "first.ndjson", 0)
    assert main(["serve", "--state-dir", state, "--replay", first, "--once", *facts]) == 1
    assert "exit 1: failed: issue:1: " in capsys.readouterr().out
    # A later run handles pull request 2 only: its (dry) review is not finished; issue 1, failed,
    # is not this run's answer.
    later = _replay_of(tmp_path, "later.ndjson", 2)
    argv = ["serve", "--state-dir", state, "--replay", later, "--dry-run", "--once", *facts]
    assert main(argv) == 3
    did, why = capsys.readouterr().out.splitlines()
    assert why == "exit 3: not finished, nobody needs to act: pull_request:2 (continuable)"
    records = json.loads((Path(state) / "state.json").read_text())["records"]
    assert records["closure:issue:1"]["data"]["closure_outcome"] == "failed"  # still on record
    # The same deliveries again are duplicates: this run settles nothing, so nothing fails it.
    assert main(argv) == 0
    did, why = capsys.readouterr().out.splitlines()
    assert did.startswith("serve: 1 event handled (1 duplicate,")
    assert why == "exit 0: nothing to close: no subject this run handled has work on record"
