"""Fan-out's parts one at a time (docs/fan-out.md): the decide side's bundle and matrix entry,
`holon run --bundle` in a run job, the settle side's intake and collection."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from holon.actions.collect import NO_OUTPUT, CollectHandler
from holon.actions.defer import DeferHandler
from holon.actions.matrix import MatrixEntry, matrix_json, matrix_runs
from holon.actions.run_bundle import BUNDLE_FILE, RunBundle, read_bundle
from holon.actions.run_intake import take_run_outputs
from holon.actions.safe_tree import Refused, copy_tree
from holon.executor.deferral import Deferred
from holon.executor.handlers import skill_spec
from holon.intent import ActionIntent, Target
from holon.skills.catalog import default_catalog
from tests.serve.conftest import holon_argv, serve_env

NOW = datetime(2026, 11, 26, tzinfo=UTC)
REPO = "octocat/Hello-World"
AGENT = """
import json, os, pathlib
ws = pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"])
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(ws / "tracked.txt").write_text("line 1\\nfixed by the agent\\n")
(out / "summary.md").write_text("Fixed it.")
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
"""


def _intent(skill: str = "github-issue-solve", number: int = 1, **head: str) -> ActionIntent:
    inputs = {"issue": str(number)} if skill != "github-pr-fix" else {"pull_request": str(number)}
    kind = "issue" if skill != "github-pr-fix" else "pull_request"
    return ActionIntent(
        id=f"int-{skill[7:11]}{number}",
        type="run_skill",
        target=Target(kind=kind, id=str(number), repo=REPO),
        args={"skill": skill, "inputs": inputs, **head},
        reason="test",
        idempotency_key="k",
        decider="policy",
        event_id="evt-1",
        created_at=NOW,
    )


class Context:
    def collect(self, intent: ActionIntent, dest: Path) -> None:
        dest.mkdir()
        (dest / "issue.md").write_text(f"the issue of {intent.id}")


def _defer(tmp_path: Path, **kw: object) -> DeferHandler:
    catalog = default_catalog()
    kw.setdefault("base_sha", "a" * 40)
    return DeferHandler(
        bundle_root=tmp_path / "bundles",
        clock=lambda: NOW,
        describe=lambda s: f"run {s}",
        catalog=catalog,
        env={"HOLON_ENGINE": "replay"},
        context=Context(),
        host=frozenset({"github-publish", "github-context"}),
        **kw,  # type: ignore[arg-type]
    )


def test_defer_writes_the_bundle_the_runner_would_run_and_a_matrix_entry(tmp_path: Path) -> None:
    handler, intent = _defer(tmp_path), _intent()
    with pytest.raises(Deferred) as raised:
        handler(intent, 1)
    run = f"{intent.id}-1"
    assert raised.value.run == run
    loaded = read_bundle(tmp_path / "bundles" / run)
    bundle = loaded.bundle
    assert bundle.spec == skill_spec(intent, {"HOLON_ENGINE": "replay"}, lambda s: f"run {s}")
    assert (bundle.skill, bundle.subject, bundle.user_prompt) == (
        "github-issue-solve", "issue:1", "issue: 1",
    )  # fmt: skip
    assert loaded.context is not None
    assert (loaded.context / "issue.md").read_text() == f"the issue of {intent.id}"
    assert [s.name for s in loaded.skills] == ["github-issue-solve"]
    assert json.loads(matrix_json(handler.entries)) == {
        "include": [
            {"run": run, "skill": "github-issue-solve", "subject": "issue:1", "ref": "a" * 40}
        ]
    }
    assert bundle.base_sha == "a" * 40  # an issue's run starts from decide's checkout
    assert matrix_runs(matrix_json(handler.entries)) == {run}
    assert "ghs_" not in (tmp_path / "bundles" / run / BUNDLE_FILE).read_text()


def test_defer_bounds_the_matrix_and_leaves_the_rest_for_the_next_pass(tmp_path: Path) -> None:
    handler = _defer(tmp_path, limit=1)
    for number in (1, 2):
        with pytest.raises(Deferred):
            handler(_intent(number=number), 1)
    assert [e.run for e in handler.entries] == [f"{_intent(number=1).id}-1"]
    assert handler.overflow == [f"{_intent(number=2).id}-1"]
    assert not (tmp_path / "bundles" / f"{_intent(number=2).id}-1").exists()


def test_defer_never_bundles_a_host_skill(tmp_path: Path) -> None:
    result = _defer(tmp_path)(_intent("github-publish"), 1)
    assert result.status == "failed"
    assert "host skill" in (result.error or "")


def test_a_tree_with_a_link_fifo_or_too_many_bytes_is_refused_whole(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "evidence").mkdir(parents=True)
    (src / "run.json").write_text("{}")
    (src / "evidence" / "a.txt").write_text("a" * 100)
    assert copy_tree(src, tmp_path / "ok") == 102
    assert (tmp_path / "ok" / "evidence" / "a.txt").read_text() == "a" * 100
    with pytest.raises(Refused, match="MiB in all"):
        copy_tree(src, tmp_path / "big", max_bytes=50)
    assert not (tmp_path / "big").exists()
    (src / "evidence" / "link").symlink_to("/etc/passwd")
    with pytest.raises(Refused, match="evidence/link: a symlink"):
        copy_tree(src, tmp_path / "linked")
    assert not (tmp_path / "linked").exists()
    (src / "evidence" / "link").unlink()
    os.mkfifo(src / "pipe")
    with pytest.raises(Refused, match="pipe: a special file"):
        copy_tree(src, tmp_path / "fifo")


def test_intake_takes_expected_runs_and_reports_refusals(tmp_path: Path) -> None:
    source, runs = tmp_path / "downloads", tmp_path / "runs"
    for name in ("holon-run-a1-good-1", "holon-run-a1-bad-1", "holon-run-a1-other-1", "stray"):
        (source / name).mkdir(parents=True)
        (source / name / "run.json").write_text("{}")
    (source / "holon-run-a1-bad-1" / "x").symlink_to("/etc/passwd")
    intake = take_run_outputs(source, runs, expected={"good-1", "bad-1"})
    assert intake.taken == ["good-1"]
    assert list(intake.refused) == ["bad-1"]
    assert "x: a symlink" in intake.refused["bad-1"]
    assert len(intake.ignored) == 2
    assert sorted(p.name for p in runs.iterdir()) == ["good-1"]
    assert take_run_outputs(tmp_path / "absent", runs).taken == []


def _run_bundle(
    tmp_path: Path, workspace: Path, intent: ActionIntent, agent: str = AGENT
) -> tuple[subprocess.CompletedProcess[str], Path]:
    # Decide's checkout is the workspace's commit (every job of the run checked it out).
    handler = _defer(tmp_path, base_sha=_head(workspace))
    with pytest.raises(Deferred):
        handler(intent, 1)
    script = tmp_path / "agent.py"
    script.write_text(agent)
    output = tmp_path / "out"
    argv = holon_argv(
        "run", "--bundle", str(tmp_path / "bundles" / f"{intent.id}-1"), "--output", str(output),
        "--runtime", "local", "--agent", shlex.join([sys.executable, str(script)]), "--json",
    )  # fmt: skip
    done = subprocess.run(
        argv, cwd=workspace, env=serve_env(), capture_output=True, text=True, timeout=120
    )
    return done, output


def _head(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def _collect(tmp_path: Path, **kw: object) -> CollectHandler:
    return CollectHandler(
        runs_dir=tmp_path / "runs",
        clock=lambda: NOW,
        catalog=default_catalog(),
        **kw,  # type: ignore[arg-type]
    )


def test_a_bundle_runs_with_its_run_id_and_is_collected_on_the_settle_side(
    tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    intent = _intent()
    done, output = _run_bundle(tmp_path, make_repo(dirty=False), intent)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert (record["run_id"], record["outcome"]) == (f"{intent.id}-1", "success")
    # The settle side gets the output as a downloaded directory, elsewhere.
    downloads = tmp_path / "downloads" / f"holon-run-a1-{intent.id}-1"
    downloads.parent.mkdir()
    output.rename(downloads)
    intake = take_run_outputs(tmp_path / "downloads", tmp_path / "runs")
    assert intake.taken == [f"{intent.id}-1"]
    result = _collect(tmp_path)(intent, 1)
    assert (result.status, result.run_outcome) == ("succeeded", "success")
    # Its paths are the settle side's, never what run.json says.
    assert result.run_output_path == str(tmp_path / "runs" / f"{intent.id}-1")


def test_collect_without_output_fails_saying_the_run_job_left_none(tmp_path: Path) -> None:
    result = _collect(tmp_path)(_intent(), 1)
    assert (result.status, result.error) == ("failed", NO_OUTPUT)


def test_collect_hands_on_a_run_not_in_its_matrix(tmp_path: Path) -> None:
    with pytest.raises(Deferred):
        _collect(tmp_path, expected=frozenset({"other-1"}))(_intent(), 1)


def test_collect_settles_an_intake_refusal_as_failed_with_its_evidence(tmp_path: Path) -> None:
    intent = _intent()
    why = "the run job's output is refused: x: a symlink"
    result = _collect(tmp_path, refused={f"{intent.id}-1": why})(intent, 1)
    assert (result.status, result.error) == ("failed", why)


PR_FIX_AGENT = """
import json, os, pathlib
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(out / "summary.md").write_text("Fixed.")
(out / "pr-fix.json").write_text(json.dumps(%s))
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
"""


def test_a_record_claiming_success_with_an_invalid_artifact_is_refused_and_set_aside(
    tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    intent = _intent("github-pr-fix", 4)
    done, output = _run_bundle(tmp_path, make_repo(dirty=False), intent, PR_FIX_AGENT % "{}")
    record = json.loads(done.stdout)
    assert record["outcome"] == "failure"  # the runner itself refuses the invalid artifact
    # A run job that rewrote its record to claim success is not believed by the settle side.
    forged = {**record, "status": "completed", "outcome": "success", "exit_code": 0}
    forged.update(reason="completed successfully", violations=[])
    (output / "run.json").write_text(json.dumps(forged))
    (output / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
    runs = tmp_path / "runs"
    runs.mkdir()
    output.rename(runs / f"{intent.id}-1")
    result = _collect(tmp_path)(intent, 1)
    assert result.status == "failed"
    assert "refused: run.json claims completed/success but github-pr-fix artifact pr-fix.json" in (
        result.error or ""
    )
    assert not (runs / f"{intent.id}-1").exists()  # nothing under the run's name to publish
    assert (runs / f"{intent.id}-1.refused").is_dir()


def test_collect_refuses_a_record_of_another_run(tmp_path: Path) -> None:
    intent = _intent()
    out = tmp_path / "runs" / f"{intent.id}-1"
    out.mkdir(parents=True)
    (out / "run.json").write_text("{not json")
    result = _collect(tmp_path)(intent, 1)
    assert result.status == "failed"
    assert (result.error or "").startswith("the run job's output is refused: run.json")


def test_run_rejects_a_bundle_mixed_with_its_own_flags(tmp_path: Path) -> None:
    argv = holon_argv("run", "--bundle", str(tmp_path), "--output", str(tmp_path / "o"))
    done = subprocess.run(
        [*argv, "--context", str(tmp_path)], env=serve_env(), capture_output=True, text=True
    )
    assert done.returncode == 64
    assert "--context cannot be combined with --bundle" in done.stderr
    assert RunBundle.model_fields["run"].metadata  # the run name is pattern-checked


@pytest.mark.parametrize(
    ("by", "hours", "bundled"),
    [("99-1", 1, False), ("99-1", 13, True), ("100-1", 1, True), (None, 1, True)],
)
def test_a_run_another_workflow_run_still_has_is_not_bundled_twice(
    tmp_path: Path, by: str | None, hours: int, bundled: bool
) -> None:
    from datetime import timedelta

    earlier = {"attempt": 1, "run": "x", "at": (NOW - timedelta(hours=hours)).isoformat(), "by": by}
    handler = _defer(tmp_path, by="100-2", prior=lambda intent_id: earlier)
    with pytest.raises(Deferred) as raised:
        handler(_intent(), 1)
    assert raised.value.keep is not bundled
    assert bool(handler.entries) is bundled
    assert raised.value.by == (None if not bundled else "100-2")


HEAD = "b" * 40
PR_FIXER = """
import json, os, pathlib
ws = pathlib.Path(os.environ["HOLON_WORKSPACE_DIR"])
out = pathlib.Path(os.environ["HOLON_OUTPUT_DIR"])
(ws / "tracked.txt").write_text("line 1\\nfixed as the review asked\\n")
(out / "summary.md").write_text("Fixed.")
(out / "pr-fix.json").write_text(json.dumps({"review_replies": [], "checks": [],
    "verification": [{"command": "true", "exit_code": 0}]}))
(out / "manifest.json").write_text(json.dumps({"status": "completed", "outcome": "success"}))
"""


def test_a_pull_requests_run_starts_from_its_head_a_fork_s_too(tmp_path: Path) -> None:
    handler = _defer(tmp_path)
    for number, where in ((4, "same"), (5, "fork")):
        intent = _intent("github-pr-fix", number, head_sha=HEAD, head_repo=where)
        with pytest.raises(Deferred):
            handler(intent, 1)
        assert read_bundle(tmp_path / "bundles" / f"{intent.id}-1").bundle.base_sha == HEAD
    # The run job checks out the head (the untrusted half: no write token, no cache token).
    assert [e.ref for e in handler.entries] == [HEAD, HEAD]
    include = json.loads(matrix_json(handler.entries))["include"]
    assert [entry["ref"] for entry in include] == [HEAD, HEAD]


@pytest.mark.parametrize(
    ("head", "checkout"),
    [
        ("B" * 40, "a" * 40),  # not lowercase
        ("b" * 39, "a" * 40),
        ("b" * 64, "a" * 40),  # a sha-256 id is not what the run job's checkout takes
        ("main", "a" * 40),  # a branch name moves; the run needs the commit
        ("b" * 40 + "\n", "a" * 40),
        ("${{ github.token }}", "a" * 40),
        (None, "not-a-sha"),  # decide's own checkout, malformed
    ],
)
def test_a_malformed_start_commit_never_reaches_the_matrix(
    tmp_path: Path, head: str | None, checkout: str
) -> None:
    handler = _defer(tmp_path, base_sha=checkout)
    intent = _intent("github-pr-fix", 4, **({"head_sha": head} if head is not None else {}))
    result = handler(intent, 1)
    assert result.status == "failed"
    assert "is not a full commit id" in (result.error or "")
    assert handler.entries == []
    assert json.loads(matrix_json(handler.entries)) == {"include": []}
    assert not (tmp_path / "bundles" / f"{intent.id}-1").exists()
    with pytest.raises(ValidationError):
        MatrixEntry(run="r-1", skill="s", subject="issue:1", ref=head or checkout)


def test_run_refuses_a_workspace_at_another_commit_than_its_bundles_start(
    tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    workspace = make_repo(dirty=False)
    intent = _intent("github-pr-fix", 4, head_sha=HEAD, head_repo="same")
    handler = _defer(tmp_path, base_sha=_head(workspace))
    with pytest.raises(Deferred):
        handler(intent, 1)
    argv = holon_argv(
        "run", "--bundle", str(tmp_path / "bundles" / f"{intent.id}-1"), "--output",
        str(tmp_path / "out"), "--runtime", "local", "--agent", "false",
    )  # fmt: skip
    done = subprocess.run(
        argv, cwd=workspace, env=serve_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 64, done.stdout + done.stderr
    assert f"not at {HEAD}, the commit this bundle's run starts from" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "run.json").exists()


def test_collect_accepts_only_the_run_jobs_start_commit(
    tmp_path: Path, make_repo: Callable[..., Path]
) -> None:
    workspace = make_repo(dirty=False)
    at = _head(workspace)
    intent = _intent("github-pr-fix", 4, head_sha=at, head_repo="same")
    done, output = _run_bundle(tmp_path, workspace, intent, PR_FIXER)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["snapshot"]["head"] == at  # the start the runner saw, recorded
    runs = tmp_path / "runs"
    runs.mkdir()
    output.rename(runs / f"{intent.id}-1")
    # Settle's checkout (GITHUB_SHA) is another commit: the head is what the run must start at.
    result = _collect(tmp_path, base_sha="c" * 40)(intent, 1)
    assert (result.status, result.run_outcome) == ("succeeded", "success"), result.error
    # The same output for an intent whose head is elsewhere: refused, set aside.
    moved = _intent("github-pr-fix", 4, head_sha=HEAD, head_repo="same")
    result = _collect(tmp_path, base_sha=at)(moved, 1)
    assert result.status == "failed"
    assert f"started at '{at}', not at {HEAD}" in (result.error or "")
    assert (runs / f"{intent.id}-1.refused").is_dir()
