"""The docker backend's fast path (`holon/runner/engine.py`): the SDK's exact requests, spoken
without the SDK until the agent runs, and the SDK's own answer whenever the fast path has none."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from holon.errors import InvalidInput
from holon.runner import RunRequest, run
from holon.runner.engine import DEFAULT_SOCKET, Stream, create_body, socket_path
from tests.conftest import spec_for

REPO = Path(__file__).resolve().parents[2]


def _sdk_body(image: str, **kw: Any) -> dict[str, Any]:
    """What the SDK sends for `create_container(image, detach=True, ...)`."""
    import docker
    from docker.types import LogConfig, Mount

    api = docker.APIClient(version="1.41")
    limits = {k: kw[k] for k in ("nano_cpus", "mem_limit") if kw.get(k) is not None}
    host = api.create_host_config(
        mounts=[Mount(t, s, type="bind", read_only=ro) for t, s, ro in kw["mounts"]],
        security_opt=kw["security_opt"],
        log_config=LogConfig(type=kw["log_type"]),
        network_mode=kw["network_mode"],
        **limits,
    )
    command = {k: kw[k] for k in ("entrypoint", "command") if k in kw}
    config = api.create_container_config(
        image,
        command.pop("command", None),
        environment=kw["env"],
        user=kw["user"],
        working_dir=kw["working_dir"],
        labels=kw["labels"],
        detach=True,
        host_config=host,
        networking_config=kw["networking"],
        **command,
    )
    return {k: v for k, v in config.items() if v is not None}  # as the SDK's _post_json


CASES: list[dict[str, Any]] = [
    {},  # the default run
    {"network_mode": "none"},
    {"network_mode": "mynet", "networking": {"EndpointsConfig": {"mynet": {}}}},
    {"nano_cpus": 1_500_000_000, "mem_limit": 64 * 1024 * 1024},
    {"entrypoint": ["/bin/sh"], "command": ["-c", "echo hi", "--probe"]},
    {"command": ["--probe"]},
    {"mounts": [("/holon/input", "/tmp/in put", True), ("/holon/git-objects", "/o:b", True)]},
]


@pytest.mark.parametrize("case", CASES)
def test_create_body_is_the_sdks(case: dict[str, Any]) -> None:
    kw: dict[str, Any] = {
        "env": {"HOLON_RUN_ID": "r1", "TOKEN": "a=b c", "EMPTY": ""},
        "user": "1000:1000",
        "working_dir": "/holon/workspace",
        "labels": {"holon.run_id": "r1"},
        "mounts": [("/holon/input", "/tmp/in", True), ("/holon/workspace", "/tmp/ws", False)],
        "security_opt": ["no-new-privileges"],
        "log_type": "none",
        "network_mode": "bridge",
        "networking": None,
        **case,
    }
    ours = create_body("img:tag", **kw)
    assert ours == _sdk_body("img:tag", **kw)
    assert json.dumps(ours) == json.dumps(_sdk_body("img:tag", **kw))  # the same order, too


@pytest.mark.parametrize(
    ("host", "path"),
    [
        (None, DEFAULT_SOCKET),
        ("", DEFAULT_SOCKET),
        ("unix:///run/user/1000/docker.sock", "/run/user/1000/docker.sock"),
        ("tcp://127.0.0.1:2375", None),
        ("ssh://user@host", None),
        ("unix://", None),
    ],
)
def test_socket_path_follows_docker_host(host: str | None, path: str | None) -> None:
    env = {} if host is None else {"DOCKER_HOST": host}
    assert socket_path(env) == path


def _frame(stream: int, data: bytes) -> bytes:
    return bytes([stream, 0, 0, 0]) + len(data).to_bytes(4, "big") + data


def test_stream_yields_the_payloads_of_the_engine_frames_in_order() -> None:
    ours, engine = socket.socketpair()
    wire = _frame(1, b"out one\n") + _frame(2, b"err\n") + _frame(1, b"x" * 100_000)
    wire += _frame(1, b"cut sh")[:-2]  # the engine went away mid-frame

    def send() -> None:
        for i in range(0, len(wire), 7):  # headers and data split across reads
            engine.sendall(wire[i : i + 7])
        engine.close()

    sender = threading.Thread(target=send)
    sender.start()
    stream = Stream(ours.makefile("rb"), ours)
    got = b"".join(stream)
    sender.join()
    stream.close()
    assert got == b"out one\nerr\n" + b"x" * 100_000 + b"cut "


def test_a_closed_stream_ends_the_reader_with_value_error() -> None:
    ours, engine = socket.socketpair()
    stream = Stream(ours.makefile("rb"), ours)
    stream.close()
    with pytest.raises(ValueError, match="closed"):
        next(iter(stream))
    engine.close()


@pytest.mark.docker
def test_a_run_that_goes_well_never_imports_the_sdk(
    agent_image: str, docker_client: Any, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    """In a fresh process (as `holon run`), a run that goes well never imports the docker SDK:
    the container is created, attached, started, waited for and removed directly; the run, its
    log and the container's removal are whole."""
    script = f"""
import json, sys
from pathlib import Path
from holon.runner import RunRequest, run
from holon.runner import engine
from tests.conftest import spec_for
seen = []
real = engine.Engine.start
def start(self, ident, meanwhile=None):
    seen.append(sorted(m for m in sys.modules if m.split(".")[0] in ("docker", "requests")))
    return real(self, ident, meanwhile)
engine.Engine.start = start
result = run(RunRequest(
    spec=spec_for("success"), workspace=Path({str(make_repo())!r}),
    output=Path({str(tmp_path / "out")!r}), runtime="docker", image={agent_image!r},
    agent=["/bin/sh", "-c", "echo to-stdout; echo to-stderr >&2; /agents/agent.sh success"],
    work_dir=Path({str(tmp_path)!r})))
print(json.dumps({{"seen": seen, "status": result.status, "run": result.run_id,
                  "after": "docker" in sys.modules}}))
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    assert answer["seen"] == [[]]
    assert answer["after"] is False
    assert answer["status"] == "completed"
    label = f"holon.run_id={answer['run']}"
    assert docker_client.containers.list(all=True, filters={"label": label}) == []
    log = (tmp_path / "out" / "run.log").read_text()
    assert "to-stdout" in log
    assert "to-stderr" in log


@pytest.mark.docker
def test_holon_run_loads_the_settling_while_the_engine_starts_the_container(
    agent_image: str, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    """`holon run` (the CLI entry, in a fresh process) loads what judging the run needs in the
    main thread between sending the start and reading its answer, with the collector paused
    until then (holon/gcpause.py) and running again afterwards."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "version: v1\nkind: Holon\ncontext:\n  env:\n    MODE: success\ngoal:\n  description: d\n"
    )
    argv = [
        *("run", "--runtime", "docker", "--image", agent_image, "--network", "none"),
        *("--agent", "/agents/agent.sh", "--spec", str(spec)),
        *("--workspace", str(make_repo()), "--output", str(tmp_path / "out")),
    ]
    script = f"""
import atexit, gc, importlib, sys
import holon.cli.main as main
from holon.runner.timeline import mark
run_module = importlib.import_module("holon.runner.run")
real = run_module._load_settling
def load():
    mark(f"loading, collector {{gc.isenabled()}}")
    real()
run_module._load_settling = load
atexit.register(lambda: mark(f"exiting, collector {{gc.isenabled()}}"))
sys.argv = ["holon", *{argv!r}]
main.entry()
"""
    env = {"HOLON_TRACE_TIMELINE": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    events = [
        line.split(None, 3)[2:]
        for line in proc.stderr.splitlines()
        if line.startswith("holon-timeline ")
    ]
    names = [event for _, event in events]
    # The start is the request sent right after the wait for the exit (engine.py).
    sent = names.index("engine wait (next exit) sent") + 1
    assert names[sent].startswith("engine POST /v"), names
    assert names[sent].endswith(" sent"), names
    answered = names.index(names[sent].removesuffix("sent") + "answered 204")
    loading = names.index("loading, collector False")
    assert sent < loading < answered
    assert events[loading][0] == "MainThread"
    assert names[-1] == "exiting, collector True"


@pytest.mark.docker
def test_a_start_the_engine_refuses_fails_as_through_the_sdk(
    agent_image: str, docker_client: Any, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    from holon.runner.backend import BackendOptions
    from holon.runner.docker_backend import DockerBackend

    def refused(fast: bool) -> str:
        out = tmp_path / f"out-{fast}"
        backend = DockerBackend(BackendOptions(image=agent_image, network="holon-no-such-net"))
        if not fast:
            backend._client = docker_client  # a given client: the SDK makes every call
        request = RunRequest(
            spec=spec_for("success"),
            workspace=make_repo(f"repo-{fast}"),
            output=out,
            runtime="docker",
            image=agent_image,
            network="holon-no-such-net",
            work_dir=tmp_path,
        )
        with pytest.raises(InvalidInput) as caught:
            run(request, backend=backend)
        assert not out.exists()
        return str(caught.value)

    # The engine of 20.10 refuses an unknown network at the start; later ones at the create.
    sdk = refused(False)
    assert sdk.startswith("docker could not ")
    assert "holon-no-such-net" in sdk
    assert refused(True) == sdk
    left = docker_client.containers.list(all=True, filters={"label": "holon.run_id"})
    assert not [c for c in left if c.attrs["HostConfig"]["NetworkMode"] == "holon-no-such-net"]


@pytest.mark.docker
def test_a_create_whose_answer_was_lost_leaves_no_second_container(
    agent_image: str,
    docker_client: Any,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine made the container but its answer never came: the SDK makes it again, and
    the first one goes; the run ends with none of its containers left."""
    from holon.runner import engine

    real = engine.Engine.create

    def create_then_lose(self: engine.Engine, body: dict[str, Any]) -> str:
        real(self, body)
        raise engine.EngineLost.aborted(None)

    monkeypatch.setattr(engine.Engine, "create", create_then_lose)
    result = run(
        RunRequest(
            spec=spec_for("success"),
            workspace=make_repo(),
            output=tmp_path / "out",
            runtime="docker",
            image=agent_image,
            work_dir=tmp_path,
        )
    )
    assert result.status == "completed"
    label = f"holon.run_id={result.run_id}"
    assert docker_client.containers.list(all=True, filters={"label": label}) == []


@pytest.mark.docker
def test_the_exit_is_asked_for_before_the_start(
    agent_image: str,
    docker_client: Any,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As `docker run` does: the wait for the next exit is sent before the start request, so
    the agent's exit is answered without another round trip after the start; the run whole."""
    from holon.runner import engine

    sent: list[str] = []
    real = engine.Engine._request

    def record(self: engine.Engine, method: str, target: str, *rest: Any) -> Any:
        sent.append(f"{method} {target}")
        return real(self, method, target, *rest)

    monkeypatch.setattr(engine.Engine, "_request", record)
    result = run(
        RunRequest(
            spec=spec_for("success"),
            workspace=make_repo(),
            output=tmp_path / "out",
            runtime="docker",
            image=agent_image,
            agent=["/bin/sh", "-c", "echo quick; /agents/agent.sh success"],
            work_dir=tmp_path,
        )
    )
    assert result.status == "completed"
    asked = [entry.rsplit("/", 1)[-1].split("?")[0] for entry in sent if "/containers/" in entry]
    assert asked == ["create", "attach", "wait", "start", asked[-1]]
    assert "wait?condition=next-exit" in sent[-3]
    assert sent[-1].startswith("DELETE ")
    assert "quick" in (tmp_path / "out" / "run.log").read_text()
    label = f"holon.run_id={result.run_id}"
    assert docker_client.containers.list(all=True, filters={"label": label}) == []


@pytest.mark.docker
def test_a_wait_asked_before_a_failed_start_is_given_up(
    agent_image: str,
    docker_client: Any,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The start refused: the wait sent before it is closed, and the container goes."""
    from holon.runner import engine

    waits: list[engine.ExitWait] = []
    closed: list[engine.ExitWait] = []
    real_expect = engine.Engine.expect_exit
    real_close = engine.ExitWait.close

    def expect(self: engine.Engine, ident: str) -> engine.ExitWait:
        waits.append(real_expect(self, ident))
        return waits[-1]

    def close(self: engine.ExitWait) -> None:
        closed.append(self)
        real_close(self)

    def refuse(self: engine.Engine, ident: str, meanwhile: Any = None) -> None:
        raise engine.EngineError("container start answered 500")

    monkeypatch.setattr(engine.Engine, "expect_exit", expect)
    monkeypatch.setattr(engine.ExitWait, "close", close)
    monkeypatch.setattr(engine.Engine, "start", refuse)
    from docker.models.containers import Container

    def sdk_refuses(self: Any) -> None:
        from docker.errors import APIError

        raise APIError("refused by the test")

    monkeypatch.setattr(Container, "start", sdk_refuses)
    with pytest.raises(InvalidInput, match="docker could not start the agent"):
        run(
            RunRequest(
                spec=spec_for("success"),
                workspace=make_repo(),
                output=tmp_path / "out",
                runtime="docker",
                image=agent_image,
                run_id="holon-test-wait-given-up",
                work_dir=tmp_path,
            )
        )
    assert len(waits) == 1
    assert closed == waits
    assert waits[0]._sock is None
    label = "holon.run_id=holon-test-wait-given-up"
    assert docker_client.containers.list(all=True, filters={"label": label}) == []


def _fake_engine(path: Path, replies: dict[str, bytes], asked: list[str]) -> threading.Thread:
    """A unix socket that answers each request line's path from `replies`, one per connection."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)

    def serve() -> None:
        with server:
            for _ in range(len(replies)):
                conn, _ = server.accept()
                with conn:
                    head = b""
                    while b"\r\n\r\n" not in head:
                        head += conn.recv(65536)
                    target = head.split(b" ")[1].decode()
                    asked.append(target)
                    conn.sendall(replies.get(target, b"HTTP/1.1 404 Not Found\r\n\r\n"))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


_IMAGE = b'{"Config": {"Cmd": ["x"]}}'
_IMAGE_REPLY = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(_IMAGE), _IMAGE)
_VERSION = b'{"ApiVersion": "1.40"}'


@pytest.mark.parametrize(
    ("ping", "asked_version"),
    [
        (b"HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Length: 2\r\n\r\nOK", False),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK", True),
        (b"HTTP/1.1 200 OK\r\nApi-Version: 1.41/../x\r\nContent-Length: 2\r\n\r\nOK", True),
    ],
    ids=["from-ping", "no-header", "bad-header"],
)
def test_the_api_version_comes_from_the_ping(
    ping: bytes, asked_version: bool, tmp_path: Path
) -> None:
    """As the docker CLI does, the engine's API version is read from `/_ping`'s Api-Version
    header; only without a usable one is `/version` asked (which makes the engine ask its
    runtimes for their versions)."""
    from holon.runner.engine import Engine

    version = "1.40" if asked_version else "1.41"
    replies = {
        "/_ping": ping,
        f"/v{version}/images/img:1/json": _IMAGE_REPLY,
    }
    if asked_version:
        replies["/version"] = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (
            len(_VERSION),
            _VERSION,
        )
    asked: list[str] = []
    path = tmp_path / "engine.sock"
    thread = _fake_engine(path, replies, asked)
    assert Engine(str(path)).inspect_image("img:1") == {"Config": {"Cmd": ["x"]}}
    thread.join(5)
    expected = [
        "/_ping",
        *(["/version"] if asked_version else []),
        f"/v{version}/images/img:1/json",
    ]
    assert asked == expected
