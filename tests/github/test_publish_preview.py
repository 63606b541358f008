"""`github-publish` previewed offline (no token, or a dry run): what publishing would do, from a
real run's output alone, refused for the same reasons publishing refuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from holon.github.publish import PublishPolicy
from holon.github.publish_preview import PublishPreviewHandler
from holon.runner import RunRequest, run
from tests.conftest import spec_for
from tests.github.test_publish_handler import NOW, RUN, _intent

AGENT = """
import json, os, pathlib
ws = pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"])
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
for rel, text in json.loads(os.environ["WRITE"]).items():
    (ws / rel).parent.mkdir(parents=True, exist_ok=True)
    (ws / rel).write_text(text)
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
"""


def _repo(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    (source / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git = ["git", "-C", str(source), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    return source


def _run(tmp_path: Path, writes: dict[str, str]) -> Path:
    """A real run through the runner (local runtime) that writes `writes` into its workspace."""
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    runs = tmp_path / "runs"
    run(
        RunRequest(
            spec=spec_for("preview", context={"env": {"WRITE": json.dumps(writes)}}),
            workspace=_repo(tmp_path),
            output=runs / RUN,
            runtime="local",
            agent=[sys.executable, str(script)],
            work_dir=tmp_path,
            run_id=RUN,
        )
    )
    return runs


def test_a_solved_issue_previews_its_branch_title_commit_and_files(tmp_path: Path) -> None:
    runs = _run(tmp_path, {"calc.py": "def add(a, b):\n    return a + b\n", "notes/new.md": "x"})
    preview = PublishPreviewHandler(runs, lambda: NOW, title_of={1: "add() subtracts"}.get)
    result = preview(_intent(), 1)
    assert (result.status, result.dry_run) == ("succeeded", True)
    assert result.effect is not None
    assert result.effect["performed"] is False
    would = result.effect["would"]
    assert would["branch"] == "holon/issue-1"
    assert would["pull_request"] == {
        "title": "Fix #1: add() subtracts",
        "head": "holon/issue-1",
        "draft": True,
        "links": "Fixes #1",
    }
    assert sorted(would["files"]) == ["add notes/new.md", "modify calc.py"]
    assert would["files_changed"] == 2
    head = subprocess.run(
        ["git", "-C", str(tmp_path / "source"), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert would["commit"]["parent"] == head
    assert would["commit"]["message"].startswith("Fix #1: add() subtracts\n")
    assert f"Holon-Run: {RUN}" in would["commit"]["message"]


def test_without_a_title_the_pull_request_is_named_by_its_number(tmp_path: Path) -> None:
    runs = _run(tmp_path, {"calc.py": "fixed\n"})
    result = PublishPreviewHandler(runs, lambda: NOW)(_intent(), 1)
    assert result.effect is not None
    assert result.effect["would"]["pull_request"]["title"] == "Fix #1"


def test_a_preview_refuses_what_publishing_refuses(tmp_path: Path) -> None:
    runs = _run(tmp_path, {".github/workflows/ci.yml": "on: push\n"})
    result = PublishPreviewHandler(runs, lambda: NOW)(_intent(), 1)
    assert (result.status, result.dry_run) == ("failed", True)
    assert result.error is not None
    assert result.error.startswith("publish workflow")
    allowed = PublishPolicy(allow_workflow_changes=True)
    assert PublishPreviewHandler(runs, lambda: NOW, allowed)(_intent(), 1).status == "succeeded"


def test_an_empty_change_or_a_missing_run_is_a_failed_preview(tmp_path: Path) -> None:
    runs = _run(tmp_path, {})
    empty = PublishPreviewHandler(runs, lambda: NOW)(_intent(), 1)
    assert (empty.status, empty.error) == (
        "failed",
        "publish empty: diff.patch is empty: the run changed nothing to publish",
    )
    gone = PublishPreviewHandler(tmp_path / "nowhere", lambda: NOW)(_intent(), 1)
    assert gone.status == "failed"
    named = PublishPreviewHandler(runs, lambda: NOW)(_intent(run="../escape"), 1)
    assert named.error == "publish bad-input: inputs.run must name a run (its id)"


def test_a_planted_link_in_the_run_directory_is_not_followed(tmp_path: Path) -> None:
    runs = _run(tmp_path, {"calc.py": "fixed\n"})
    patch = runs / RUN / "diff.patch"
    patch.unlink()
    secret = tmp_path / "host-file"
    secret.write_text("diff --git a/x b/x\n")
    patch.symlink_to(secret)
    result = PublishPreviewHandler(runs, lambda: NOW)(_intent(), 1)
    assert result.status == "failed"
    assert result.error is not None
    assert "diff.patch" in result.error


def _pr_fix(status: str) -> bytes:
    reply = {"comment_id": 10, "status": status, "message": "Kept as it is."}
    doc = {"review_replies": [reply], "checks": [], "verification": []}
    return json.dumps(doc).encode()


def test_a_fix_that_changed_nothing_previews_its_replies_alone(tmp_path: Path) -> None:
    runs = _run(tmp_path, {})
    (runs / RUN / "pr-fix.json").write_bytes(_pr_fix("wontfix"))
    result = PublishPreviewHandler(runs, lambda: NOW)(_intent(skill="github-pr-fix"), 1)
    assert result.status == "succeeded"
    assert result.effect is not None
    assert result.effect["would"] == {"replies_on": "pull request #1", "replies": 1}
    (runs / RUN / "pr-fix.json").write_bytes(_pr_fix("fixed"))
    refused = PublishPreviewHandler(runs, lambda: NOW)(_intent(skill="github-pr-fix"), 1)
    assert refused.error == (
        "publish bad-input: pr-fix.json says comment 10 is fixed, but the run changed nothing"
    )
