"""`holon report` on a state directory a real `holon serve` made against the loopback GitHub: a
solved issue published as a pull request, a failed run and one waiting on a question; then a
timer tick reads the pull request, which a maintainer merged meanwhile (docs/report.md)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from holon.report.aggregate import Report
from tests.github.publish_support import seed
from tests.serve.conftest import holon_argv, serve_env
from tests.serve.github_serve import comment_event, hold_triggers

REPO = "octocat/Hello-World"
TOKEN = "ghs_" + "f" * 36  # the github_server fixture's token
HOLON = "github-actions[bot]"
SKILL = "github-issue-solve"
SOLVES = """
import json, os, pathlib
ws = pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"])
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(ws / "tracked.txt").write_text("line 1\\nfixed by the agent\\n")
(out / "summary.md").write_text("Fixed it.")
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
"""
FAILS = """
import json, os, pathlib, sys
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(out / "manifest.json").write_text(json.dumps({"status": "failed", "outcome": "failure"}))
sys.exit(1)
"""
ASKS = """
import json, os, pathlib, sys
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "needs_human",
    "question": {"id": "q-api", "text": "Keep the v1 API?"}}))
sys.exit(2)
"""
Run = Callable[..., subprocess.CompletedProcess[str]]


def _report(state: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = holon_argv("report", "--state-dir", str(state), *extra)
    return subprocess.run(argv, env=serve_env(), capture_output=True, text=True, timeout=60)


def _journal(state: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (state / f"{name}.ndjson").read_text().splitlines()]


@pytest.fixture
def served(github_server: Any, tmp_path: Path, make_repo: Callable[..., Path]) -> Path:
    """The state directory of three serves: issue 1 solved and published (PR #4), issue 2's
    run failed, issue 3's run asks a question; one broken replay line, skipped."""
    repo = github_server.state.repos[REPO]
    for title in ("Crash on start", "Fails on Windows", "Which API?"):
        repo.add_issue(title, user="octocat")
    workspace = make_repo(dirty=False)
    base = seed(repo, {p.name: p.read_bytes() for p in workspace.iterdir() if p.is_file()})
    head = subprocess.run(
        ["git", "-C", str(workspace), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    repo.objects[head] = repo.objects[base]
    repo.refs["heads/main"] = head
    state = tmp_path / "s"
    for number, source in ((1, SOLVES), (2, FAILS), (3, ASKS)):
        agent = tmp_path / f"agent{number}.py"
        agent.write_text(source)
        line = comment_event(number, "/holon solve", "OWNER", ident=100 + number)
        hold_triggers(github_server, [line])
        replay = tmp_path / f"replay{number}.ndjson"
        broken = "{not json\n" if number == 2 else ""
        replay.write_text(broken + json.dumps(line) + "\n")
        argv = holon_argv(
            "serve", "--state-dir", str(state), "--replay", str(replay), "--once",
            "--repo", REPO, "--workspace", str(workspace),
            "--agent", shlex.join([sys.executable, str(agent)]),
        )  # fmt: skip
        done = subprocess.run(argv, env=_env(github_server), capture_output=True, text=True,
                              timeout=120)  # fmt: skip
        assert done.returncode in (0, 1, 2), done.stderr
    assert [i.number for i in repo.issues.values() if i.pull is not None] == [4]
    return state


def _env(github_server: Any, **extra: str) -> dict[str, str]:
    return serve_env(
        GITHUB_TOKEN=TOKEN,
        GITHUB_API_URL=github_server.url,
        HOLON_GITHUB_LOGIN=HOLON,
        HOLON_GITHUB_WRITE_SPACING="0",
        **extra,
    )


def _tick(github_server: Any, state: Path, **env: str) -> subprocess.CompletedProcess[str]:
    argv = holon_argv(
        "serve", "--state-dir", str(state), "--once", "--tick-interval", "1h", "--repo", REPO
    )
    environment = _env(github_server) if not env.get("offline") else serve_env()
    return subprocess.run(argv, env=environment, capture_output=True, text=True, timeout=120)


def test_the_report_of_a_served_state_then_a_merge_seen_on_a_tick(
    github_server: Any, served: Path
) -> None:
    done = _report(served, "--json")
    assert done.returncode == 0, done.stderr
    # The --json schema: the published one (schemas/report.schema.json), and the model.
    schema = json.loads((Path(__file__).parents[2] / "schemas/report.schema.json").read_text())
    jsonschema.validate(json.loads(done.stdout), schema)
    report = Report.model_validate_json(done.stdout)
    (row,) = report.skills
    assert row.skill == SKILL
    assert row.runs == 3
    assert row.run_outcomes == {"failure": 1, "needs_human": 1, "success": 1}
    assert sum(row.closures.values()) == 3
    assert row.closures["completed"] == 1
    assert (row.prs_opened, row.prs_merged, row.prs_unknown) == (1, 0, 1)
    # Each run's progress comment was journaled with its time: event to first comment.
    assert row.first_comment is not None
    assert row.first_comment.count == 3
    assert 0 <= row.first_comment.median_seconds < 60
    assert (report.skipped_lines, report.pulls_read) == (1, False)
    assert report.total.runs == 3

    # A maintainer merges Holon's pull request; the next tick reads it (one GET) and records it.
    repo = github_server.state.repos[REPO]
    pull = repo.issues[4]
    assert pull.pull is not None
    pull.pull.merged, pull.state, pull.updated_at = True, "closed", "2026-11-24T10:00:00Z"
    reads = github_server.count("pulls/get")
    ticked = _tick(github_server, served)
    assert ticked.returncode in (0, 1, 2), ticked.stderr
    assert github_server.count("pulls/get") == reads + 1
    (merged,) = [e["pr_merged"] for e in _journal(served, "events") if "pr_merged" in e]
    assert (merged["number"], merged["subject"], merged["at"]) == (4, "issue:1", pull.updated_at)
    records = json.loads((served / "state.json").read_text())["records"]
    assert records["meta:pull:4"]["status"] == "done"
    again = _tick(github_server, served)  # an ended pull request is never read again
    assert again.returncode in (0, 1, 2), again.stderr
    assert github_server.count("pulls/get") == reads + 1

    after = Report.model_validate_json(_report(served, "--json").stdout)
    (row,) = after.skills
    assert (row.prs_opened, row.prs_merged, row.prs_unknown, after.pulls_read) == (1, 1, 0, True)
    markdown = _report(served, "--markdown")
    assert markdown.returncode == 0, markdown.stderr
    assert markdown.stdout.startswith("### Holon report\n")
    assert "| all weeks | **github\\-issue\\-solve** | 3 |" in markdown.stdout
    text = _report(served)
    assert text.returncode == 0, text.stderr
    assert "PRs opened 1: merged 1, closed 0, open 0, unknown 0" in text.stdout
    assert TOKEN not in done.stdout + markdown.stdout + text.stdout


def test_offline_a_tick_reads_no_pull_request(github_server: Any, served: Path) -> None:
    reads = github_server.count("pulls/get")
    ticked = _tick(github_server, served, offline="1")
    assert ticked.returncode in (0, 1, 2), ticked.stderr
    assert github_server.count("pulls/get") == reads
    report = Report.model_validate_json(_report(served, "--json").stdout)
    assert (report.total.prs_unknown, report.pulls_read) == (1, False)
    assert "their state is unknown" in _report(served, "--markdown").stdout


def test_bad_input_is_one_line_and_exit_64(served: Path, tmp_path: Path) -> None:
    missing = _report(tmp_path / "nowhere")
    empty = tmp_path / "empty"
    empty.mkdir()
    not_state = _report(empty)
    corrupt = tmp_path / "corrupt"
    shutil.copytree(served, corrupt)
    lines = (corrupt / "decisions.ndjson").read_text().splitlines()
    lines.insert(1, "{half a line")
    (corrupt / "decisions.ndjson").write_text("\n".join(lines) + "\n")
    mid_line = _report(corrupt)
    broken_state = tmp_path / "broken-state"
    shutil.copytree(served, broken_state)
    (broken_state / "state.json").write_text("{")
    unusable = _report(broken_state)
    bad_since = _report(served, "--since", "last tuesday")
    both = _report(served, "--json", "--markdown")
    for done in (missing, not_state, mid_line, unusable, bad_since, both):
        assert done.returncode == 64, done.stderr
        assert "Traceback" not in done.stderr
        assert done.stdout == ""
    for done in (missing, not_state, mid_line, unusable, bad_since):
        assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "line 2" in mid_line.stderr
    # A torn last line (a crash mid-write) is skipped, never fatal.
    torn = tmp_path / "torn"
    shutil.copytree(served, torn)
    with (torn / "actions.ndjson").open("a") as handle:
        handle.write('{"id": "torn')
    assert _report(torn, "--json").returncode == 0


def test_since_narrows_the_report(served: Path) -> None:
    future = Report.model_validate_json(_report(served, "--json", "--since", "2999-01-01").stdout)
    assert (future.rows, future.total.runs, future.since) == ([], 0, "2999-01-01T00:00:00+00:00")
