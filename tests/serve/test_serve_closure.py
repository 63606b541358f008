"""`holon serve` as an operator runs it: a skill run whose agent asks a question closes the subject
`askuserQuestion` with that question, in the state, in `serve status` and in the exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    argv = holon_argv(
        "serve",
        "--state-dir",
        str(state),
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
