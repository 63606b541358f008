"""A real run through the runner (local runtime), its output directory read for publishing,
and its change published: the whole host-side path, the agent never holding a token."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import github
import pytest

from holon.github.errors import PublishError
from holon.github.publish import publish_change
from holon.github.publish_artifacts import read_artifacts
from holon.runner import RunRequest, run
from tests.conftest import spec_for
from tests.github.publish_support import seed
from tests.github.test_publish import LOGIN, REPO, gh, request  # noqa: F401  (a fixture)
from tests.support.github_fake import LoopbackGitHub

AGENT = """
import json, os, pathlib
ws = pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"])
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(ws / "tracked.txt").write_text("line 1\\nfixed by the agent\\n")
(ws / "image.bin").write_bytes(bytes(range(255, -1, -1)))
(ws / "doomed.txt").unlink()
(out / "summary.md").write_text("Fixed it.")
REVIEW
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": OUTCOME}))
"""


def _run(tmp_path: Path, repo: Path, outcome: str = "success", review: str = "") -> Path:
    script = tmp_path / "agent.py"
    script.write_text(AGENT.replace("REVIEW", review).replace("OUTCOME", repr(outcome)))
    output = tmp_path / "out"
    run(
        RunRequest(
            spec=spec_for("publish"),
            workspace=repo,
            output=output,
            runtime="local",
            agent=[sys.executable, str(script)],
            work_dir=tmp_path,
        )
    )
    return output


def test_a_successful_runs_output_is_published(
    tmp_path: Path,
    make_repo: Callable[..., Path],
    gh: github.Github,  # noqa: F811
    github_server: LoopbackGitHub,
) -> None:
    source = make_repo(dirty=False)
    output = _run(tmp_path, source)
    artifacts = read_artifacts(output, 1_000_000)
    assert artifacts.summary == "Fixed it."
    assert artifacts.review is None
    assert artifacts.base_sha is not None
    assert b"GIT binary patch" in artifacts.patch
    # GitHub holds the same commit the run started from (in Actions, the checkout came from it).
    files = {p.name: p.read_bytes() for p in source.iterdir() if p.is_file()}
    repo = github_server.state.repos[REPO]
    repo.add_issue("Crash on start")
    base = seed(repo, files)
    outcome = publish_change(
        gh, LOGIN, request(base, run_id=artifacts.run_id), artifacts.patch, artifacts.summary
    )
    after = {
        p: repo.objects[e["sha"]]["data"] for p, e in repo.files(outcome.output["commit"]).items()
    }
    assert after["tracked.txt"] == b"line 1\nfixed by the agent\n"
    assert after["image.bin"] == bytes(range(255, -1, -1))
    assert "doomed.txt" not in after


def test_a_run_that_did_not_succeed_is_not_published(
    tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    output = _run(tmp_path, make_repo(dirty=False), outcome="failure")
    with pytest.raises(PublishError, match=r"did not succeed \(failed, failure\)") as caught:
        read_artifacts(output, 1_000_000)
    assert caught.value.reason == "not-allowed"


def test_a_review_json_that_is_a_link_to_a_host_file_is_refused(
    tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    link = "os.symlink('/etc/passwd', out / 'review.json')"
    output = _run(tmp_path, make_repo(dirty=False), review=link)
    assert json.loads((output / "run.json").read_text())["outcome"] == "success"
    with pytest.raises(PublishError, match=r"review\.json is refused") as caught:
        read_artifacts(output, 1_000_000)
    assert caught.value.reason == "unsafe-path"


def test_an_output_without_a_record_is_not_a_settled_run(tmp_path: Path) -> None:
    with pytest.raises(PublishError, match=r"run\.json is missing"):
        read_artifacts(tmp_path, 1_000_000)
