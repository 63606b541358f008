"""The agent's container created beside the snapshot (`DockerBackend.prepare`, run.py's `ready`):
the create goes out while the snapshot is being taken, the start only after it; a run that ends
before its start (the snapshot failed, an interruption) leaves no container and no output."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from holon.runner import RunRequest, engine, run
from holon.runner import tree as tree_module
from holon.runner.docker_backend import RUN_LABEL
from holon.runner.snapshot import SnapshotError
from tests.conftest import spec_for

pytestmark = pytest.mark.docker
run_module = importlib.import_module("holon.runner.run")  # the package's `run` is the function


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What happened, in order: the create answered, the snapshot taken, the start sent. The
    snapshot's start tree waits (up to 30 s) for the create's answer, so the order is the one
    the overlap allows on any machine."""
    seen: list[str] = []
    created = threading.Event()
    real_create, real_start = engine.Engine.create, engine.Engine.start
    real_write_tree, real_snapshot = tree_module.write_tree, run_module.take_snapshot

    def create(self: engine.Engine, body: dict[str, Any]) -> str:
        ident = real_create(self, body)
        seen.append("created")
        created.set()
        return ident

    def start(self: engine.Engine, ident: str, meanwhile: Any = None) -> None:
        seen.append("start")
        real_start(self, ident, meanwhile)

    def write_tree(*args: Any, **kw: Any) -> str:
        created.wait(30)
        return real_write_tree(*args, **kw)

    def take_snapshot(*args: Any, **kw: Any) -> Any:
        taken = real_snapshot(*args, **kw)
        seen.append("snapshot")
        return taken

    monkeypatch.setattr(engine.Engine, "create", create)
    monkeypatch.setattr(engine.Engine, "start", start)
    monkeypatch.setattr("holon.runner.snapshot.write_tree", write_tree)
    monkeypatch.setattr(run_module, "take_snapshot", take_snapshot)
    return seen


def _request(workspace: Path, output: Path, tmp_path: Path, **kw: Any) -> RunRequest:
    return RunRequest(
        spec=spec_for("success"),
        workspace=workspace,
        output=output,
        runtime="docker",
        work_dir=tmp_path,
        **kw,
    )


def _left(docker_client: Any, run_id: str) -> list[Any]:
    label = f"{RUN_LABEL}={run_id}"
    return list(docker_client.containers.list(all=True, filters={"label": label}))


def test_the_container_is_created_while_the_snapshot_is_taken_and_started_after(
    agent_image: str,
    docker_client: Any,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    events: list[str],
) -> None:
    """Made before its mounts were filled, the container still sees the whole snapshot."""
    script = (
        "ls -a /holon/workspace > /holon/output/ls.txt;"
        " ls /holon/git-objects/pack > /holon/output/pack.txt;"
        " /agents/agent.sh success"
    )
    request = _request(
        make_repo(),
        tmp_path / "out",
        tmp_path,
        image=agent_image,
        agent=["/bin/sh", "-c", script],
    )
    result = run(request)
    assert result.status == "completed", result.reason
    assert events == ["created", "snapshot", "start"]
    listed = (tmp_path / "out" / "ls.txt").read_text().split()
    assert {".git", "tracked.txt", "image.bin", "untracked.txt"} <= set(listed)
    assert "debug.log" not in listed
    assert any(
        name.endswith(".pack") for name in (tmp_path / "out" / "pack.txt").read_text().split()
    )
    assert _left(docker_client, result.run_id) == []


def test_a_directory_workspace_is_created_for_early_too(
    agent_image: str, docker_client: Any, tmp_path: Path, events: list[str]
) -> None:
    workspace = tmp_path / "plain"
    workspace.mkdir()
    (workspace / "file.txt").write_text("plain\n")
    script = "cat /holon/workspace/file.txt > /holon/output/seen.txt; /agents/agent.sh success"
    result = run(
        _request(
            workspace,
            tmp_path / "out",
            tmp_path,
            image=agent_image,
            agent=["/bin/sh", "-c", script],
        )
    )
    assert result.status == "completed", result.reason
    assert events == ["created", "snapshot", "start"]
    assert (tmp_path / "out" / "seen.txt").read_text() == "plain\n"
    assert _left(docker_client, result.run_id) == []


@pytest.mark.parametrize("raised", [SnapshotError, KeyboardInterrupt])
def test_a_run_ended_after_the_early_create_leaves_no_container(
    raised: type[BaseException],
    agent_image: str,
    docker_client: Any,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    events: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The snapshot fails, or an interruption comes, once the container exists: it is removed,
    the output created for the run goes, and the agent never started."""
    waiting = run_module.take_snapshot

    def failing(*args: Any, **kw: Any) -> Any:
        waiting(*args, **kw)
        assert events == ["created", "snapshot"]
        if raised is KeyboardInterrupt:
            raise KeyboardInterrupt
        raise SnapshotError("cannot snapshot: the test says so")

    monkeypatch.setattr(run_module, "take_snapshot", failing)
    out = tmp_path / "out"
    with pytest.raises(raised):
        run(_request(make_repo(), out, tmp_path, image=agent_image, run_id="holon-test-early"))
    assert "start" not in events
    assert not out.exists()
    assert _left(docker_client, "holon-test-early") == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("holon-")] == []


def test_a_failed_early_create_is_the_runs_error(
    agent_image: str,
    docker_client: Any,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine refuses the create made beside the snapshot: the run fails as it would have
    with the create made after it (the SDK's answer, one line), nothing left behind."""
    from docker.errors import APIError

    def refuse(self: engine.Engine, body: dict[str, Any]) -> str:
        raise engine.EngineError("container create answered 400")

    def sdk_refuses(*args: Any, **kw: Any) -> Any:
        raise APIError("refused by the test")

    monkeypatch.setattr(engine.Engine, "create", refuse)
    monkeypatch.setattr("docker.api.container.ContainerApiMixin.create_container", sdk_refuses)
    out = tmp_path / "out"
    from holon.errors import InvalidInput

    with pytest.raises(InvalidInput, match="docker could not create the agent container"):
        run(_request(make_repo(), out, tmp_path, image=agent_image, run_id="holon-test-refused"))
    assert not out.exists()
    assert _left(docker_client, "holon-test-refused") == []
