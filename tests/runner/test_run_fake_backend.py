"""run() with an in-memory backend: the orchestration without any process or container."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from holon.errors import Interrupted, Unavailable
from holon.runner import RunRequest, run
from holon.runner.backend import Execution, Job
from tests.conftest import spec_for


class FakeBackend:
    """Writes what a scripted agent would write; records the job it was given."""

    name = "fake"

    def __init__(self, act: Callable[[Job], int | None], fail_preflight: bool = False) -> None:
        self.act = act
        self.fail_preflight = fail_preflight
        self.jobs: list[Job] = []
        self.closed = False

    def preflight(self) -> None:
        if self.fail_preflight:
            raise Unavailable("fake engine missing")

    def execute(self, job: Job) -> Execution:
        self.jobs.append(job)
        start = datetime.now(UTC)
        code = self.act(job)
        return Execution(code, False, start, datetime.now(UTC))

    def close(self) -> None:
        self.closed = True


def _request(repo: Path, out: Path, **kw: object) -> RunRequest:
    return RunRequest(spec=spec_for("fake"), workspace=repo, output=out, runtime="local", **kw)  # type: ignore[arg-type]


def test_job_gets_layout_env_and_empty_output(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    from pydantic import SecretStr

    def act(job: Job) -> int:
        assert list(job.paths.output.iterdir()) == []
        assert (job.paths.input / "spec.yaml").is_file()
        assert (job.paths.workspace / "tracked.txt").is_file()
        (job.paths.output / "manifest.json").write_text(
            '{"status":"completed","outcome":"success"}'
        )
        return 0

    backend = FakeBackend(act)
    out = tmp_path / "out"
    result = run(
        _request(make_repo(), out, secrets={"API_KEY": SecretStr("sk-x123456")}), backend=backend
    )
    assert result.exit_code == 0
    assert not backend.closed  # the caller's backend stays usable for its next run
    job = backend.jobs[0]
    assert job.env == {"MODE": "fake", "API_KEY": "sk-x123456"}
    assert job.timeout == 30 * 60
    assert job.paths.git_objects is not None
    # The run root (snapshot, inputs) is gone afterwards unless asked to keep it.
    assert not job.paths.workspace.exists()


def test_keep_workspace(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    def act(job: Job) -> int:
        (job.paths.output / "manifest.json").write_text(
            '{"status":"completed","outcome":"success"}'
        )
        return 0

    backend = FakeBackend(act)
    result = run(_request(make_repo(), tmp_path / "out", keep_workspace=True), backend=backend)
    kept = backend.jobs[0].paths.workspace
    assert kept.is_dir()
    assert any("workspace kept at" in n for n in result.notes)
    # Kept on purpose for the user to inspect; this test is that user and removes it.
    shutil.rmtree(kept.parent)


def test_interrupt_records_and_raises(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    def act(job: Job) -> int:
        raise KeyboardInterrupt

    out = tmp_path / "out"
    backend = FakeBackend(act)
    with pytest.raises(Interrupted, match="run record in"):
        run(_request(make_repo(), out), backend=backend)
    record = json.loads((out / "run.json").read_text())
    assert record["status"] == "interrupted"
    assert record["exit_code"] == 1
    assert record["closure"]["lifecycle_outcome"] == "userinterlude"
    assert record["closure"]["waiting_reason"] == "awaiting_operator_input"
    assert not backend.closed


def test_preflight_failure_leaves_nothing(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(Unavailable, match="fake engine missing"):
        run(_request(make_repo(), out), backend=FakeBackend(lambda job: 0, fail_preflight=True))
    assert not out.exists()
    assert not list(tmp_path.glob("holon-*"))


def test_existing_empty_output_is_used_and_agent_run_json_replaced(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()

    def act(job: Job) -> int:
        (job.paths.output / "manifest.json").write_text(
            '{"status":"completed","outcome":"success"}'
        )
        (job.paths.output / "run.json").write_text("forged by the agent")
        return 0

    result = run(_request(make_repo(), out), backend=FakeBackend(act))
    assert json.loads((out / "run.json").read_text())["run_id"] == result.run_id
    assert any("the agent wrote run.json" in n for n in result.notes)


def test_agent_patch_kept(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    def act(job: Job) -> int:
        (job.paths.output / "manifest.json").write_text(
            '{"status":"completed","outcome":"success"}'
        )
        (job.paths.output / "diff.patch").write_text("agent's own patch\n")
        (job.paths.workspace / "tracked.txt").write_text("changed\n")
        return 0

    out = tmp_path / "out"
    result = run(_request(make_repo(), out), backend=FakeBackend(act))
    assert result.patch is not None
    assert result.patch.source == "agent"
    assert (out / "diff.patch").read_text() == "agent's own patch\n"


@pytest.mark.parametrize("existing", [False, True], ids=["new-output", "existing-output"])
def test_backend_failing_after_a_deep_tree_in_the_output_leaves_nothing(
    make_repo: Callable[..., Path], tmp_path: Path, existing: bool
) -> None:
    def act(job: Job) -> int:
        fd = os.open(job.paths.output, os.O_RDONLY)
        for _ in range(1500):  # deeper than shutil.rmtree can recurse
            os.mkdir("a", dir_fd=fd)
            step = os.open("a", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = step
        os.close(fd)
        raise RuntimeError("backend broke mid-run")

    out = tmp_path / "out"
    if existing:
        out.mkdir()
    with pytest.raises(RuntimeError, match="backend broke mid-run"):
        run(_request(make_repo(), out), backend=FakeBackend(act))
    assert out.exists() == existing
    assert not existing or list(out.iterdir()) == []


def _manifest_and(edit: Callable[[Job], None]) -> Callable[[Job], int]:
    def act(job: Job) -> int:
        edit(job)
        (job.paths.output / "manifest.json").write_text(
            '{"status":"completed","outcome":"success"}'
        )
        return 0

    return act


def test_the_runner_patch_is_taken_beside_the_log_and_manifest(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the agent is gone its changes are diffed in a thread while the main thread places
    run.log and reads the manifest; the patch is the same, the snapshot removed afterwards."""
    import threading

    from holon.runner import outputs
    from holon.runner.snapshot import Snapshot

    seen: dict[str, str] = {}
    diffed = threading.Event()
    real_diff, real_read = Snapshot.diff, outputs.OutputDir.read_manifest

    def diff(self: Snapshot) -> bytes:
        seen["diff"] = threading.current_thread().name
        patch = real_diff(self)
        diffed.set()
        return patch

    def read_manifest(self: outputs.OutputDir) -> object:
        # The diff runs beside this: it can finish while the manifest is being read.
        seen["diffed while reading"] = str(diffed.wait(30))
        return real_read(self)

    monkeypatch.setattr(Snapshot, "diff", diff)
    monkeypatch.setattr(outputs.OutputDir, "read_manifest", read_manifest)
    backend = FakeBackend(
        _manifest_and(lambda job: (job.paths.workspace / "tracked.txt").write_text("changed\n"))
    )
    out, work = tmp_path / "out", tmp_path / "work"
    work.mkdir()
    result = run(_request(make_repo(), out, work_dir=work), backend=backend)
    assert result.exit_code == 0
    assert seen == {"diff": "holon-diff", "diffed while reading": "True"}
    patch = (out / "diff.patch").read_text()
    assert "+changed" in patch
    assert result.patch.source == "runner"
    assert list((tmp_path / "work").iterdir()) == []


def test_an_agents_own_patch_is_not_diffed_by_the_runner(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from holon.runner.snapshot import Snapshot

    def diff(self: Snapshot) -> bytes:
        raise AssertionError("the runner's patch was taken")

    monkeypatch.setattr(Snapshot, "diff", diff)

    def own_patch(job: Job) -> None:
        (job.paths.output / "diff.patch").write_text("the agent's own\n")

    out = tmp_path / "out"
    result = run(_request(make_repo(), out), backend=FakeBackend(_manifest_and(own_patch)))
    assert result.exit_code == 0
    assert result.patch.source == "agent"
    assert (out / "diff.patch").read_text() == "the agent's own\n"


def test_the_input_is_written_while_the_backend_prepares_the_agent(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backend that prepares (docker's create) is asked once the directories it mounts exist,
    the input still empty; what the agent reads there is written meanwhile, before it runs."""
    import importlib
    import threading

    run_module = importlib.import_module("holon.runner.run")
    prepared = threading.Event()
    seen: dict[str, list[Any]] = {}

    class Preparing(FakeBackend):
        def prepare(self, job: Job) -> None:
            seen["prepare"] = sorted(p.name for p in job.paths.input.iterdir())
            prepared.set()

    real_fill = run_module._fill_input

    def fill(*args: object) -> None:
        assert prepared.wait(30)  # the order the overlap gives, made certain
        seen["fill"] = [threading.current_thread() is threading.main_thread()]
        real_fill(*args)

    def act(job: Job) -> int:
        seen["agent"] = sorted(p.name for p in job.paths.input.iterdir())
        (job.paths.output / "manifest.json").write_text(
            '{"status":"completed","outcome":"success"}'
        )
        return 0

    monkeypatch.setattr(run_module, "_fill_input", fill)
    result = run(_request(make_repo(), tmp_path / "out"), backend=Preparing(act))
    assert result.exit_code == 0
    # Written beside the snapshot (off the thread taking it), after the prepare went out.
    assert seen == {"prepare": [], "fill": [False], "agent": ["context", "spec.yaml"]}
