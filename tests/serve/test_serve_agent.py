"""`holon serve` driving the real agent: the README's offline story in the local runtime. A real
`/holon solve` comment (GitHub's own example payload) is decided by the policy, its context is
collected from the payload, `holon agent` replays the bundled session that fixes the demo
project's failing test for real, and publishing is previewed: the pull request it would open."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.serve.conftest import holon_argv, serve_env

ROOT = Path(__file__).resolve().parents[2]
SOLVE = ROOT / "examples" / "solve"
AGENT = f"{sys.executable} -m holon agent"


def _project(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    for source in (SOLVE / "project").iterdir():
        (repo / source.name).write_text(source.read_text())
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the demo project")
    return repo


def _serve(tmp_path: Path, *extra: str, **env: str) -> subprocess.CompletedProcess[str]:
    argv = holon_argv(
        "serve", "--state-dir", str(tmp_path / "state"), "--replay", str(SOLVE / "replay.ndjson"),
        "--facts", str(SOLVE / "facts.json"), "--workspace", str(_project(tmp_path)),
        "--agent", AGENT, "--dry-run", "--once", *extra,
    )  # fmt: skip
    return subprocess.run(
        argv, env=serve_env(**env), capture_output=True, text=True, timeout=120, check=False
    )


def _actions(tmp_path: Path) -> list[dict[str, object]]:
    lines = (tmp_path / "state" / "actions.ndjson").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_solve_comment_is_fixed_by_the_replayed_agent_and_its_pr_previewed(
    tmp_path: Path,
) -> None:
    replay = ("--agent-env", "HOLON_ENGINE=replay")
    session = ("--agent-env", "HOLON_REPLAY_SESSION=example:solve-calc")
    done = _serve(tmp_path, *replay, *session)
    # Publishing was only previewed: the issue is not finished, and serve says it continues.
    assert done.returncode == 3, done.stdout + done.stderr
    (run_dir,) = (tmp_path / "state.runs").iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert (manifest["status"], manifest["outcome"]) == ("completed", "success")
    record = json.loads((run_dir / "run.json").read_text())
    assert record["closure"]["lifecycle_outcome"] == "finished"
    assert "+    return a + b" in (run_dir / "diff.patch").read_text()
    lines = (run_dir / "evidence" / "commands.ndjson").read_text().splitlines()
    commands = [json.loads(line) for line in lines]
    assert [(c["id"], c["exit_code"]) for c in commands] == [(1, 1), (2, 0)]
    # The agent was shown the issue github-context collected from the payload alone.
    transcript = (run_dir / "evidence" / "transcript.ndjson").read_text()
    assert "add(2, 3)` returns -1" in transcript
    (preview,) = [a for a in _actions(tmp_path) if a.get("dry_run") and a["type"] == "run_skill"]
    assert preview["status"] == "succeeded"
    would = preview["effect"]["would"]  # type: ignore[index]
    assert would["branch"] == "holon/issue-1"
    assert (
        would["pull_request"]["title"] == "Fix #1: add() returns the difference instead of the sum"
    )
    assert would["files"] == ["modify calc.py"]


def test_secrets_reach_the_agent_and_no_record(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, os\n"
        "out = os.environ['HOLON_OUTPUT_DIR']\n"
        "ok = os.environ.get('MODEL_KEY') == 'sk-ant-forwarded-0123456789abcdef'\n"
        "open(os.path.join(out, 'summary.md'), 'w').write('done')\n"
        "ws = os.environ['HOLON_WORKSPACE_DIR']\n"
        "open(os.path.join(ws, 'calc.py'), 'a').write('# changed')\n"
        "json.dump({'status': 'completed', 'outcome': 'success' if ok else 'failure',"
        " 'metadata': {'engine': {'model': os.environ.get('HOLON_MODEL')}}},"
        " open(os.path.join(out, 'manifest.json'), 'w'))\n"
    )
    done = _serve(
        tmp_path, "--agent", f"{sys.executable} {agent}", "--agent-secret", "MODEL_KEY",
        "--agent-env", "HOLON_MODEL=claude-test",
        MODEL_KEY="sk-ant-forwarded-0123456789abcdef",
    )  # fmt: skip
    assert done.returncode in (0, 3), done.stdout + done.stderr
    (run_dir,) = (tmp_path / "state.runs").iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["outcome"] == "success"
    assert manifest["metadata"]["engine"]["model"] == "claude-test"
    for path in [*run_dir.rglob("*"), *(tmp_path / "state").rglob("*")]:
        if path.is_file():
            assert "sk-ant-forwarded" not in path.read_text(errors="replace"), path


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--agent-env", "NOEQUALS", "--agent-env 'NOEQUALS': expected NAME=VALUE"),
        ("--agent-env", "1BAD=x", "'1BAD' is not a valid environment variable name"),
        ("--agent-env", "KEY=ghp_0123456789abcdef0123456789abcdef0123", "looks like a secret"),
        ("--agent-secret", "HOLON_TEST_UNSET_VAR", "--agent-secret HOLON_TEST_UNSET_VAR: not set"),
    ],
)
def test_bad_agent_settings_are_one_line_errors(
    tmp_path: Path, flag: str, value: str, message: str
) -> None:
    done = _serve(tmp_path, flag, value)
    assert done.returncode == 64
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "ghp_0123" not in done.stderr
    assert not (tmp_path / "state.runs").exists()
