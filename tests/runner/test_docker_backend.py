"""What only the docker backend promises: mounts, ownership, network, limits, clean-up, errors."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from holon.errors import InvalidInput, Unavailable
from holon.runner import RunRequest, run
from holon.runner.backend import BackendOptions
from holon.runner.docker_backend import RUN_LABEL, DockerBackend
from tests.conftest import spec_for
from tests.support.socket_proxy import SocketProxy, engine_socket

pytestmark = pytest.mark.docker


def _request(image: str, mode: str, workspace: Path, output: Path, **kw: Any) -> RunRequest:
    return RunRequest(
        spec=spec_for(mode),
        workspace=workspace,
        output=output,
        runtime="docker",
        image=image,
        work_dir=output.parent,
        **kw,
    )


def test_input_is_read_only(
    agent_image: str, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    # The invoking user here is root: only the read-only mount can refuse the write.
    result = run(_request(agent_image, "write_input", make_repo(), tmp_path / "out"))
    out = tmp_path / "out"
    assert result.status == "completed"
    assert (out / "input_result.txt").read_text().strip() == "refused"
    assert "Read-only file system" in (out / "input_error.txt").read_text()


def test_output_owned_by_container_user(
    agent_image: str, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.chown(out, 4321, 4321)
    result = run(_request(agent_image, "inspect", make_repo(), out, user="4321:4321"))
    assert result.status == "completed", result.reason
    for path in [
        out / "manifest.json",
        out / "net.txt",
        out / "nested",
        out / "nested" / "file.txt",
    ]:
        st = path.stat()
        assert (st.st_uid, st.st_gid) == (4321, 4321), path


def test_default_user_is_the_invoking_user() -> None:
    backend = DockerBackend(BackendOptions(image="x"))
    assert backend.user == f"{os.getuid()}:{os.getgid()}"


def test_runner_files_owned_by_invoking_user(
    agent_image: str, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    run(_request(agent_image, "success", make_repo(), out))
    for name in ("manifest.json", "run.json", "diff.patch", "run.log", "summary.md"):
        assert (out / name).stat().st_uid == os.getuid(), name


@pytest.mark.parametrize(("network", "has_eth"), [("none", False), ("bridge", True)])
def test_network_setting(
    agent_image: str, make_repo: Callable[..., Path], tmp_path: Path, network: str, has_eth: bool
) -> None:
    run(_request(agent_image, "inspect", make_repo(), tmp_path / "out", network=network))
    interfaces = (tmp_path / "out" / "net.txt").read_text().split()
    assert "lo" in interfaces
    assert any(i != "lo" for i in interfaces) is has_eth


def test_limits_applied(agent_image: str, make_repo: Callable[..., Path], tmp_path: Path) -> None:
    run(_request(agent_image, "inspect", make_repo(), tmp_path / "out", memory="64m", cpus=1.5))
    assert (tmp_path / "out" / "memory.txt").read_text().strip() == str(64 * 1024 * 1024)
    quota, period = (tmp_path / "out" / "cpu.txt").read_text().split()
    assert int(quota) / int(period) == 1.5


def test_container_removed_afterwards(
    agent_image: str, docker_client: Any, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    result = run(_request(agent_image, "sleep", make_repo(), tmp_path / "out", timeout=1))
    assert result.status == "timed_out"
    left = docker_client.containers.list(
        all=True, filters={"label": f"{RUN_LABEL}={result.run_id}"}
    )
    assert left == []


def test_missing_image_one_line_and_no_output(
    docker_client: Any, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    with pytest.raises(Unavailable, match="image 'holon-no-such-image:1' is not in the local"):
        run(_request("holon-no-such-image:1", "success", make_repo(), out))
    assert not out.exists()


def test_engine_unreachable(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    out = tmp_path / "out"
    with pytest.raises(Unavailable, match="Docker engine not reachable"):
        run(_request("anything", "success", make_repo(), out))
    assert not out.exists()


def test_engine_lost_during_wait_is_recorded_as_an_engine_failure_not_a_timeout(
    agent_image: str,
    docker_client: Any,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proxy = SocketProxy(tmp_path / "engine.sock", engine_socket())
    monkeypatch.setenv("DOCKER_HOST", f"unix://{proxy.path}")
    out = tmp_path / "out"

    cut: list[bool] = []

    def cut_when_running() -> None:
        # The engine goes away while Holon waits for the container: that connection drops.
        cut.append(proxy.cut_when(b"/wait"))

    cutter = threading.Thread(target=cut_when_running)
    cutter.start()
    try:
        result = run(_request(agent_image, "sleep", make_repo(), out, timeout=120))
    finally:
        cutter.join()
        proxy.close()
    assert cut == [True]
    assert result.status == "failed"
    assert result.agent_exit_code is None
    assert "lost the Docker engine while waiting" in result.reason
    assert "timed out" not in result.reason
    assert result.duration_seconds < 60
    left = docker_client.containers.list(
        all=True, filters={"label": f"{RUN_LABEL}={result.run_id}"}
    )
    assert left == []


def test_bad_memory_from_a_library_caller_is_invalid_input(
    agent_image: str, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    with pytest.raises(InvalidInput, match="--memory: invalid size 'lots'"):
        run(_request(agent_image, "success", make_repo(), out, memory="lots"))
    assert not out.exists()


def test_engine_keeps_no_log_of_its_own(
    agent_image: str,
    docker_client: Any,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend = DockerBackend(BackendOptions(image=agent_image))
    created: list[Any] = []
    real_create = docker_client.api.create_container

    def spy(*args: Any, **kwargs: Any) -> Any:
        created.append(kwargs)
        return real_create(*args, **kwargs)

    backend._client = docker_client
    monkeypatch.setattr(docker_client.api, "create_container", spy)
    result = run(_request(agent_image, "success", make_repo(), tmp_path / "out"), backend=backend)
    assert result.status == "completed"
    assert created[0]["host_config"]["LogConfig"]["Type"] == "none"
