"""`holon serve` hands an agent skill run the context of the event that decided it: a replayed
`/holon solve` comment, no token, a local agent that reports what it found in
`<input>/context/`. Built from the payload: the issue, the trigger comment marked, and every
part that needs GitHub's API missing with the reason."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from holon.gateway.trigger import text_digest
from holon.github.context_source import NO_TOKEN
from tests.serve.conftest import EXAMPLE, holon_argv, serve_env

AGENT = Path(__file__).resolve().parents[1] / "agents" / "context_agent.py"


def test_a_replayed_solve_reaches_the_agent_with_the_context_of_its_payload(
    tmp_path: Path,
) -> None:
    line = (EXAMPLE / "replay.ndjson").read_text().splitlines()[0]  # /holon solve on issue 1
    payload = json.loads(line)["payload"]
    replay = tmp_path / "replay.ndjson"
    replay.write_text(line + "\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "README.md").write_text("x\n")
    runs = tmp_path / "runs"
    argv = holon_argv(
        "serve", "--state-dir", str(tmp_path / "state"), "--runs-dir", str(runs),
        "--replay", str(replay), "--once", "--facts", str(EXAMPLE / "facts.json"),
        "--workspace", str(workspace), "--agent", f"{sys.executable} {AGENT}",
    )  # fmt: skip
    env = {k: v for k, v in serve_env().items() if k != "GITHUB_TOKEN"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    # The run succeeded; offline, publishing it is only a dry run: not finished, nobody to act.
    assert done.returncode == 3, done.stdout + done.stderr
    (run,) = runs.iterdir()  # the context was a scratch directory: only the run's output stays
    seen = json.loads((run / "context-manifest.json").read_text())
    assert seen["subject"] == {"kind": "issue", "number": 1}
    assert seen["repo"] == "Codertocat/Hello-World"
    assert seen["trigger"] == {"kind": "comment", "id": payload["comment"]["id"],
                               "author": payload["comment"]["user"]["login"],
                               "sha256": text_digest(None, payload["comment"]["body"]),
                               "updated_at": payload["comment"]["updated_at"],
                               "live": "unchecked"}  # fmt: skip
    assert [p["path"] for p in seen["present"]] == ["issue.md", "comments.json"]
    assert all(p["source"] == "payload" for p in seen["present"])
    assert {"name": "comments (more)", "reason": NO_TOKEN} in seen["missing"]
    files = json.loads((run / "context-files.json").read_text())
    assert files == ["comments.json", "issue.md", "manifest.json"]
