"""Shared fixtures: real git repositories, the docker engine and test image, and a network guard."""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.images import AGENTS, ImageUnavailable, build_agent_image

# The GitHub fakes' fixtures (`github_fake`, `github_server`), for every directory of tests.
pytest_plugins = ["tests.support.github_fake.fixtures"]

AGENT_SCRIPT = AGENTS / "agent.sh"
REQUIRE_DOCKER = os.environ.get("HOLON_REQUIRE_DOCKER") == "1"


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only loopback and unix sockets: a test that reaches the internet fails loudly."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        if self.family == socket.AF_UNIX:
            return real_connect(self, address)
        host = address[0] if isinstance(address, tuple) else address
        if host in ("127.0.0.1", "::1", "localhost") or str(host).startswith("127."):
            return real_connect(self, address)
        raise RuntimeError(f"test tried to reach the network: {address!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(autouse=True)
def _signal_handlers() -> Iterator[None]:
    """Each test starts with Python's own SIGINT/SIGTERM handlers and leaves them so: an
    in-process `holon action` ignores both once it has unwound, and a test after it that
    delivers a signal would see nothing happen."""
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


SYSTEM_TEMP = tempfile.gettempdir()


@pytest.fixture(autouse=True)
def _own_temp_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """Each test gets its own temp dir (for Holon and its subprocesses); one that leaves a
    `holon-*` run root or scratch directory behind there fails, so no run litters /tmp.

    It is world-writable and sticky like /tmp, since some tests run a process as nobody."""
    tmp_path_factory.getbasetemp()  # pytest's own base stays in the system temp dir
    temp = Path(tempfile.mkdtemp(prefix="test-tmp-", dir=SYSTEM_TEMP))
    temp.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("TMPDIR", str(temp))
    # Tracebacks Holon logs on purpose (exit 70, a raising handler) stay with the test too.
    monkeypatch.setenv("HOLON_LOG_DIR", str(temp / "logs"))
    yield temp
    left = sorted(p.name for p in temp.iterdir() if p.name.startswith("holon-"))
    shutil.rmtree(temp, ignore_errors=True)
    assert not left, f"the test left {left} in its temp dir"


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """A real git repository with a commit, uncommitted edits, an untracked and an ignored file."""

    def make(name: str = "repo", dirty: bool = True) -> Path:
        repo = tmp_path / name
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        (repo / "tracked.txt").write_text("line 1\n")
        (repo / "doomed.txt").write_text("to be deleted by the agent\n")
        (repo / "image.bin").write_bytes(bytes(range(256)))
        (repo / ".gitignore").write_text("*.log\nbuild/\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "initial")
        if dirty:
            with (repo / "tracked.txt").open("a") as handle:
                handle.write("user's uncommitted line\n")
            (repo / "untracked.txt").write_text("user's untracked file\n")
            (repo / "debug.log").write_text("ignored\n")
            (repo / "build").mkdir()
            (repo / "build" / "out.o").write_bytes(b"\x7fELF")
        return repo

    return make


@pytest.fixture(scope="session")
def docker_client() -> Iterator[Any]:
    reason = None
    try:
        import docker

        host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        if host.startswith("unix://") and not os.path.exists(host.removeprefix("unix://")):
            raise FileNotFoundError(f"no socket at {host.removeprefix('unix://')}")
        client = docker.from_env()
        client.ping()
    except Exception as exc:
        reason = f"no Docker engine reachable ({exc.__class__.__name__}: {exc})"
    if reason is not None:
        # The SDK leaks the socket of a failed connect; once the exception is gone, collect it
        # quietly instead of letting its ResourceWarning fail whichever test the GC runs in.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
        if REQUIRE_DOCKER:
            pytest.fail(f"HOLON_REQUIRE_DOCKER=1 but {reason}")
        pytest.skip(reason)
    yield client
    client.close()


@pytest.fixture(scope="session")
def agent_image(docker_client: Any) -> str:
    try:
        return build_agent_image(docker_client)
    except ImageUnavailable as exc:
        if REQUIRE_DOCKER:
            pytest.fail(f"HOLON_REQUIRE_DOCKER=1 but the test image cannot be built: {exc}")
        pytest.skip(f"test image cannot be built: {exc}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Under HOLON_REQUIRE_DOCKER=1 (CI) a skipped docker test is a failed test."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if REQUIRE_DOCKER and report.skipped and item.get_closest_marker("docker") is not None:
        report.outcome = "failed"
        report.longrepr = f"docker test skipped under HOLON_REQUIRE_DOCKER=1: {report.longrepr}"


def python_agent(
    directory: Path, manifest: dict[str, Any], exit_code: int = 0, calls: Path | None = None
) -> list[str]:
    """A tiny agent for the `local` runtime: it writes `manifest` as its manifest and exits with
    `exit_code`; with `calls`, it first appends a line there, so a test can count its runs."""
    script = directory / "agent.py"
    count = f"with open({str(calls)!r}, 'a') as f:\n    f.write('run\\n')\n" if calls else ""
    script.write_text(
        "import json, os, sys\n"
        f"{count}"
        "out = os.environ['HOLON_OUTPUT_DIR']\n"
        "with open(os.path.join(out, 'manifest.json'), 'w') as f:\n"
        f"    json.dump({json.dumps(manifest)}, f)\n"
        f"sys.exit({exit_code})\n"
    )
    return [sys.executable, str(script)]


def spec_for(mode: str, **extra: Any) -> Any:
    from holon.contract.spec import Spec

    data: dict[str, Any] = {
        "version": "v1",
        "kind": "Holon",
        "metadata": {"name": f"test-{mode}"},
        "context": {"env": {"MODE": mode}},
        "goal": {"description": f"test agent in mode {mode}"},
    }
    data.update(extra)
    return Spec.model_validate(data)


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def runtime(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def run_agent(runtime: str, request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., Any]:
    """Run the test agent in MODE through the selected backend; returns the RunResult."""
    from holon.runner import RunRequest, run

    image = request.getfixturevalue("agent_image") if runtime == "docker" else None

    def go(mode: str, workspace: Path, output: Path | None = None, **kwargs: Any) -> Any:
        spec = kwargs.pop("spec", None) or spec_for(mode)
        req = RunRequest(
            spec=spec,
            workspace=workspace,
            output=output or tmp_path / f"out-{mode}",
            runtime=runtime,
            image=image,
            agent=None if runtime == "docker" else ["sh", str(AGENT_SCRIPT)],
            work_dir=kwargs.pop("work_dir", tmp_path),
            **kwargs,
        )
        return run(req)

    go.runtime = runtime  # type: ignore[attr-defined]
    return go
