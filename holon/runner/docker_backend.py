"""The `docker` backend: the agent in a container on the local Docker Engine, via the docker SDK.

Input is mounted read-only, the snapshot and output read-write, and the pack of objects the
snapshot's history borrows (built for the run from what its refs and index reach, never the
original object store: `objects.py`) read-only at `/holon/git-objects`; secrets reach the agent as
environment only, except a model key (ANTHROPIC_API_KEY, OPENAI_API_KEY): that one stays on the
host, where a key proxy for the run (`model_proxy.py`) adds it to the agent's model requests,
which arrive on a unix socket mounted at `/holon/proxy`; such a run has no network by default.
The container runs as the invoking user so files in the output belong to them (and it can reach
the proxy's private socket), and it is removed afterwards whatever happened. Its output is
streamed to the run's AgentLog while it runs (the engine keeps no log of its own). Docker SDK
types and exceptions stay inside this module; the calls of a run that goes well are made without
the SDK, on the engine's unix socket (`engine.py`), and the SDK itself (with requests, urllib3 and
ssl) is imported only when a call needs it: another DOCKER_HOST, a pull, --cpus, an engine that
refuses or fails, an agent that fails or runs out of time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from holon.contract.layout import (
    CONTAINER_LAYOUT,
    CONTAINER_PROXY_DIR,
    CONTAINER_PROXY_SOCKET,
    ENV_RUN_ID,
)
from holon.crashpoints import signal_point
from holon.errors import InvalidInput, Unavailable
from holon.held_signals import HeldSignals
from holon.runner.backend import BackendOptions, Execution, Job
from holon.runner.engine import (
    Engine,
    EngineError,
    EngineLost,
    EngineTimeout,
    ExitWait,
    Stream,
    create_body,
    socket_path,
)
from holon.runner.model_keys import proxy_model_keys
from holon.runner.model_routes import MODEL_KEYS
from holon.runner.timeline import mark
from holon.size import parse_size

if TYPE_CHECKING:
    from collections.abc import Callable

    from holon.runner.model_proxy import ModelProxy

CONTAINER_GIT_OBJECTS = "/holon/git-objects"
RUN_LABEL = "holon.run_id"
_GRACE_SECONDS = 2
_SPECIAL_NETWORKS = ("bridge", "none", "host")


# The engine's own bounds on a memory limit: its minimum, and the int64 of its API.
MIN_MEMORY = 6 * 1024 * 1024
MAX_MEMORY = 2**63 - 1


def _memory_limit(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        size = parse_size(value)
    except ValueError as exc:
        raise InvalidInput(f"--memory: {exc}") from None
    if not MIN_MEMORY <= size <= MAX_MEMORY:
        raise InvalidInput(
            f"--memory: {value.strip()[:40]!r} is out of range: Docker accepts 6m up to 8589934591g"
        )
    return size


def _sdk_errors(*also: type[Exception]) -> tuple[type[Exception], ...]:
    """The exceptions a failed engine call raises, and `also` (an `except` clause evaluates this
    only when an exception propagates, so the SDK is not imported for it)."""
    import requests
    from docker.errors import DockerException

    return (DockerException, requests.RequestException, EngineError, *also)


def _read_timeout() -> tuple[type[Exception], ...]:
    import requests

    return (requests.exceptions.ReadTimeout, EngineTimeout)


def _not_found() -> type[Exception]:
    from docker.errors import NotFound

    return cast(type[Exception], NotFound)


def _one_line(exc: Exception) -> str:
    text = getattr(exc, "explanation", None) or str(exc)
    return str(text).strip().splitlines()[0] if str(text).strip() else exc.__class__.__name__


class DockerBackend:
    name = "docker"

    def __init__(self, options: BackendOptions) -> None:
        if not options.image:
            raise InvalidInput("the docker runtime needs --image IMAGE")
        if options.pull not in ("never", "missing", "always"):
            raise InvalidInput(
                f"invalid pull policy {options.pull!r}: use never, missing or always"
            )
        self.options = options
        # Checked here, before the snapshot: the engine would refuse it only at container create.
        self._mem_limit = _memory_limit(options.memory)
        self.image: str = options.image
        self.user = options.user or f"{os.getuid()}:{os.getgid()}"
        self._client: Any = None
        # The engine spoken to directly until the agent runs (`engine.py`), when it can be.
        self._engine: Engine | None = None
        self._image_config: dict[str, Any] = {}
        self._removal: _Removal | None = None
        # The container `prepare` made for a job (or the error it got), until `execute` runs it.
        self._prepared: tuple[Job, Any] | None = None

    @property
    def client(self) -> Any:
        if self._client is None:
            host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
            if host.startswith("unix://") and not os.path.exists(host.removeprefix("unix://")):
                # Checked here because the SDK leaks the socket of a failed unix connect.
                raise Unavailable(f"Docker engine not reachable: no socket at {host[7:]}")
            import docker

            try:
                # from_env asks the engine for its API version: that is the reachability check.
                self._client = docker.from_env()
            except _sdk_errors() as exc:
                raise Unavailable(f"Docker engine not reachable: {_one_line(exc)}") from None
        return self._client

    def close(self) -> None:
        self.unprepare()
        if self._removal is not None:
            self._removal.join()  # it uses the client
            self._removal = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def preflight(self) -> None:
        self._engine = None
        if self._fast_preflight():
            return
        from docker.errors import ImageNotFound

        try:
            if self.options.pull == "always":
                self.client.images.pull(self.image)
            try:
                image = self.client.images.get(self.image)
            except ImageNotFound:
                if self.options.pull != "missing":
                    raise Unavailable(
                        f"image {self.image!r} is not in the local Docker engine "
                        "(build or load it first, or pass --pull missing)"
                    ) from None
                image = self.client.images.pull(self.image)
        except _sdk_errors() as exc:
            raise Unavailable(f"image {self.image!r} unavailable: {_one_line(exc)}") from None
        self._image_config = image.attrs.get("Config") or {}
        self._check_cpus()

    def _fast_preflight(self) -> bool:
        """The image's config read directly from the engine, without the SDK (`engine.py`);
        False when that cannot be done or answered anything but the image: the SDK then asks."""
        path = socket_path()
        # A client already made (a test's, a caller's) is the one to use; a pull needs the SDK,
        # and so does the check of --cpus against the engine's CPUs.
        if self._client is not None or path is None or self.options.pull != "never":
            return False
        if self.options.cpus:
            return False
        engine = Engine(path)
        try:
            image = engine.inspect_image(self.image)
        except EngineError:
            return False
        self._image_config = image.get("Config") or {}
        self._engine = engine
        return True

    def _check_cpus(self) -> None:
        """More CPUs than the engine has is refused at container create; say so before the run."""
        if not self.options.cpus:
            return
        try:
            available = int(self.client.info().get("NCPU") or 0)
        except _sdk_errors(ValueError, TypeError):
            return  # the create call still checks
        if available and self.options.cpus > available:
            raise InvalidInput(
                f"--cpus: {self.options.cpus:g} is more than the {available} CPU(s) "
                "of the Docker engine"
            )

    def _command(self, probe: bool) -> dict[str, Any]:
        if self.options.agent:
            argv = [*self.options.agent, *(["--probe"] if probe else [])]
            return {"entrypoint": argv[:1], "command": argv[1:]}
        if not probe:
            return {}
        if self._image_config.get("Entrypoint"):
            return {"command": ["--probe"]}
        return {"command": [*(self._image_config.get("Cmd") or []), "--probe"]}

    def _network(self, proxied: bool) -> tuple[str, dict[str, Any] | None]:
        """The container's network mode and, for a named network, its endpoint config."""
        # A proxied agent reaches its model through the socket: it needs no network of its own.
        network = self.options.network or ("none" if proxied else "bridge")
        if network in _SPECIAL_NETWORKS:
            return network, None
        return network, {"EndpointsConfig": {network: {}}}

    def _limits(self) -> dict[str, Any]:
        limits: dict[str, Any] = {}
        if self.options.cpus:
            limits["nano_cpus"] = int(self.options.cpus * 1e9)
        if self._mem_limit is not None:
            limits["mem_limit"] = self._mem_limit
        return limits

    def _streaming_client(self) -> Any:
        # The agent may be silent for longer than any client timeout: the output stream has none.
        # A separate client, so the main one keeps its timeouts for everything else; it speaks
        # the API version the main one negotiated, so it costs no round trip of its own.
        import docker

        try:
            return docker.from_env(timeout=None, version=self.client.api.api_version)
        except _sdk_errors() as exc:
            raise Unavailable(f"Docker engine not reachable: {_one_line(exc)}") from None

    def _create(self, job: Job, env: dict[str, str], proxy: ModelProxy | None) -> Any:
        """The agent's container, created (one call: the SDK's `containers.create` would
        inspect it afterwards, a round trip nothing here reads)."""
        paths = job.paths
        binds = [
            (str(CONTAINER_LAYOUT.input), str(paths.input), True),
            (str(CONTAINER_LAYOUT.workspace), str(paths.workspace), False),
            (str(CONTAINER_LAYOUT.output), str(paths.output), False),
        ]
        if paths.git_objects is not None:
            binds.append((CONTAINER_GIT_OBJECTS, str(paths.git_objects), True))
        if proxy is not None and proxy.directory is not None:
            # Read-only: connecting to a socket needs no write access to the mount, and the
            # agent can neither replace the socket nor leave files there.
            binds.append((CONTAINER_PROXY_DIR, str(proxy.directory), True))
        env.update(CONTAINER_LAYOUT.env())
        env[ENV_RUN_ID] = job.run_id
        network_mode, networking = self._network(proxy is not None)
        if self._engine is not None:
            body = create_body(
                self.image,
                env=env,
                user=self.user,
                working_dir=str(CONTAINER_LAYOUT.workspace),
                labels={RUN_LABEL: job.run_id},
                mounts=binds,
                security_opt=["no-new-privileges"],
                log_type="none",
                network_mode=network_mode,
                networking=networking,
                nano_cpus=self._limits().get("nano_cpus"),
                mem_limit=self._mem_limit,
                **self._command(job.probe),
            )
            try:
                ident = self._engine.create(body)
            except EngineError as exc:
                # Refused or cut off: the SDK makes the call, and its answer is the run's.
                self._engine = None
                if isinstance(exc, EngineLost | EngineTimeout):
                    self._remove_unanswered(job.run_id)
            else:
                return _Container(self, ident)
        from docker.types import LogConfig, Mount

        mounts = [
            Mount(target, source, type="bind", read_only=read_only)
            for target, source, read_only in binds
        ]
        api = self.client.api
        host_config = api.create_host_config(
            mounts=mounts,
            security_opt=["no-new-privileges"],
            # Holon streams the output itself; the engine keeps no copy (nor rotates one away).
            log_config=LogConfig(type="none"),
            network_mode=network_mode,
            **self._limits(),
        )
        made = api.create_container(
            self.image,
            environment=env,
            user=self.user,
            working_dir=str(CONTAINER_LAYOUT.workspace),
            labels={RUN_LABEL: job.run_id},
            detach=True,
            host_config=host_config,
            networking_config=networking,
            **self._command(job.probe),
        )
        return self.client.containers.prepare_model({"Id": made["Id"]})

    def prepare(self, job: Job) -> None:
        """Create the agent's container for `job` now, not started, so that `execute(job)` finds
        it made: run.py calls this from its worker thread, once the engine check passed and the
        directories the container mounts exist, while the snapshot is still being taken (a
        create runs nothing: the agent starts only in `execute`, after the snapshot). Only on
        the fast path (`engine.py`), and only for a run without a key proxy (whose socket the
        create mounts). Whatever it gets, a container or the create's error, is `execute`'s; a
        container `execute` does not run goes in `unprepare`."""
        if self._engine is None or self._prepared is not None:
            return
        env = dict(job.env)
        if any(env.get(name, "").strip() for name in MODEL_KEYS):
            return
        proxy, _ = self._model_proxy(env)  # none: it only clears what only Holon may set
        made: Any
        try:
            made = self._create(job, env, proxy)
        except Exception as exc:
            made = exc
        self._prepared = (job, made)

    def _take_prepared(self, job: Job) -> Any:
        """The container `prepare` made for `job` (its error raised), or None."""
        prepared, self._prepared = self._prepared, None
        if prepared is None:
            return None
        if prepared[0] is not job:
            self._prepared = prepared
            self.unprepare()
            return None
        if isinstance(prepared[1], Exception):
            raise prepared[1]
        return prepared[1]

    def unprepare(self) -> None:
        """Remove the container `prepare` made, if `execute` did not take it."""
        prepared, self._prepared = self._prepared, None
        if prepared is None or isinstance(prepared[1], Exception):
            return
        with HeldSignals(), contextlib.suppress(Unavailable, *_sdk_errors()):
            prepared[1].remove(force=True)

    def _remove_unanswered(self, run_id: str) -> None:
        """A create whose answer never came may have made the container: it goes (by the run's
        label) before the SDK makes it again, so no second container is left behind."""
        with contextlib.suppress(Unavailable, *_sdk_errors()):
            label = f"{RUN_LABEL}={run_id}"
            for made in self.client.containers.list(all=True, filters={"label": label}):
                with contextlib.suppress(*_sdk_errors()):
                    made.remove(force=True)

    def _fast_attach(self, container: Any) -> Stream | None:
        """The container's output stream from the engine directly, or None (the SDK attaches)."""
        if self._engine is None or not isinstance(container, _Container):
            return None
        try:
            return self._engine.attach(container.id)
        except EngineError:
            return None

    def _model_proxy(self, env: dict[str, str]) -> tuple[ModelProxy | None, list[str]]:
        """The container's model keys kept on the host behind the run's key proxy."""
        return proxy_model_keys(
            env, self.options, socket_path=CONTAINER_PROXY_SOCKET, passed="into the container"
        )

    def execute(self, job: Job) -> Execution:
        env = dict(job.env)
        with HeldSignals():  # the proxy started is the proxy stopped below
            proxy, notes = self._model_proxy(env)
        try:
            execution = self._execute(job, env, proxy)
        finally:
            if proxy is not None:
                proxy.stop()
        return dataclasses.replace(
            execution,
            notes=[*notes, *execution.notes],
            model_usage=proxy.usage() if proxy is not None else None,
        )

    def _execute(self, job: Job, env: dict[str, str], proxy: ModelProxy | None) -> Execution:
        signal_point("container.create:before")
        # From the create call until the `try` below owns the container, an interruption waits:
        # raised while the engine answers, or before `container` is assigned, it would leave a
        # container nothing removes (the create is bounded by the client's timeout). A container
        # `prepare` made is taken in the same stretch; until then `unprepare` owns it.
        held = HeldSignals().hold()
        try:
            container = self._take_prepared(job) or self._create(job, env, proxy)
            signal_point("container.create:after")
        except BaseException as exc:
            held.release()
            if isinstance(exc, _sdk_errors()):
                raise InvalidInput(
                    f"docker could not create the agent container: {_one_line(exc)}"
                ) from None
            raise
        notes: list[str] = []
        timed_out = False
        exited = False
        error: str | None = None
        exit_code: int | None = None
        streamer: Any = None
        pump: threading.Thread | None = None
        output: Any = None
        started = datetime.now(UTC)
        try:
            held.release()  # a signal that came meanwhile unwinds from here: the container goes
            output = self._fast_attach(container)
            if output is None:
                streamer = self._streaming_client()
            try:
                # Attached before the start, so not a byte is missed.
                if output is None:
                    output = streamer.api.attach(
                        container.id, stdout=True, stderr=True, stream=True
                    )
                pump = threading.Thread(target=_pump, args=(output, job, notes), daemon=True)
                pump.start()
                if isinstance(container, _Container):
                    container.expect_exit()
                    container.start(meanwhile=job.while_starting)
                else:
                    container.start()
            except _sdk_errors() as exc:
                raise InvalidInput(f"docker could not start the agent: {_one_line(exc)}") from None
            # After the start request, not before: what on_start begins (run.py loads the
            # settling in a thread) holds the interpreter, which the attach and start need.
            if job.on_start is not None:
                job.on_start()
            clock = time.monotonic()
            try:
                result = container.wait(timeout=job.timeout)
                exit_code = int(result.get("StatusCode", 1))
                if exit_code != 0 and _oom_killed(container):
                    error = (
                        "the agent's container was killed by its memory limit "
                        f"(OOM, --memory {self.options.memory})"
                    )
            except _read_timeout():
                timed_out = True
            except _sdk_errors() as exc:
                # A read timeout can surface as a ConnectionError; the clock tells them apart.
                if time.monotonic() - clock >= job.timeout:
                    timed_out = True
                else:
                    error = f"lost the Docker engine while waiting for the agent: {_one_line(exc)}"
            if timed_out or error is not None:
                try:
                    container.stop(timeout=_GRACE_SECONDS)
                except _not_found():
                    pass
                except _sdk_errors() as exc:
                    notes.append(f"could not stop container {container.id[:12]}: {_one_line(exc)}")
            ended = datetime.now(UTC)
            if pump is not None:
                pump.join(timeout=_GRACE_SECONDS * 5)
                mark("output stream ended")
                if pump.is_alive():
                    notes.append("the agent's output stream did not end; run.log may be short")
            # The agent exited on its own: its container's removal overlaps the judging.
            exited = exit_code is not None and not timed_out and error is None
        except BaseException:
            with HeldSignals(), contextlib.suppress(*_sdk_errors()):
                container.kill()  # a second signal does not cut the ending short
            raise
        finally:
            with HeldSignals():
                if isinstance(container, _Container):
                    container.forget_exit()
                if output is not None:
                    _close_stream(output)
                if streamer is not None:
                    with contextlib.suppress(*_sdk_errors(OSError)):
                        streamer.close()
                removal = self._removal = _Removal(container)
                if not exited:
                    notes.extend(removal.join())
        return Execution(
            exit_code,
            timed_out,
            started,
            ended,
            notes,
            error,
            cleanup=removal.join if exited else None,
        )


class _Container:
    """The agent's container as the fast path created it (`engine.py`): started, waited for and
    removed directly, and everything else (stop, kill, the OOM check) done through the SDK's
    model of it, made (and the SDK imported) on first use."""

    def __init__(self, backend: DockerBackend, ident: str) -> None:
        self._backend = backend
        self.id = ident
        self._model: Any = None
        self._exit: ExitWait | None = None

    def expect_exit(self) -> None:
        """Ask for the container's next exit before it starts, as `docker run` does: its answer
        is then the first thing after the start (`wait`); without one, `wait` asks afterwards."""
        engine = self._backend._engine
        if engine is not None and self._exit is None:
            with contextlib.suppress(EngineError):
                self._exit = engine.expect_exit(self.id)

    def forget_exit(self) -> None:
        exit_wait, self._exit = self._exit, None
        if exit_wait is not None:
            exit_wait.close()

    def start(self, meanwhile: Callable[[], None] | None = None) -> None:
        """Start it; `meanwhile` is called while the engine starts it, when the engine is
        spoken to directly (through the SDK it is not called)."""
        engine = self._backend._engine
        if engine is not None:
            try:
                engine.start(self.id, meanwhile)
                return
            except EngineError:
                pass  # the SDK makes the call, and its answer is the run's
        self._sdk().start()

    def wait(self, timeout: float) -> dict[str, Any]:
        engine = self._backend._engine
        exit_wait, self._exit = self._exit, None
        if exit_wait is not None:
            try:
                return exit_wait.result(timeout)
            except (EngineTimeout, EngineLost):
                raise  # the run's time ran out, or the engine went: as through the SDK
            except EngineError:
                pass  # any other answer: the SDK asks, and its answer is the run's
            return cast(dict[str, Any], self._sdk().wait(timeout=timeout))
        if engine is not None:
            try:
                return engine.wait(self.id, timeout)
            except (EngineTimeout, EngineLost):
                raise  # the run's time ran out, or the engine went: as through the SDK
            except EngineError:
                pass  # any other answer: the SDK asks, and its answer is the run's
        return cast(dict[str, Any], self._sdk().wait(timeout=timeout))

    def remove(self, *, force: bool) -> None:
        engine = self._backend._engine
        if engine is not None and force:
            try:
                engine.remove(self.id)
                return
            except EngineError:
                pass  # the SDK asks, and its answer (or error) is the run's
        self._sdk().remove(force=force)

    def _sdk(self) -> Any:
        if self._model is None:
            try:
                client = self._backend.client
            except Unavailable as exc:
                # An engine gone since the create fails the calls on the container like any
                # engine failure (they are caught as the SDK's errors).
                from docker.errors import DockerException

                raise DockerException(str(exc)) from None
            self._model = client.containers.prepare_model({"Id": self.id})
        return self._model

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sdk(), name)


class _Removal:
    """`remove(force=True)` of the agent's container, in a thread; `join` gives its notes."""

    def __init__(self, container: Any) -> None:
        self._container = container
        self._notes: list[str] = []
        self._thread = threading.Thread(target=self._remove, name="holon-docker-rm", daemon=True)
        self._thread.start()

    def _remove(self) -> None:
        try:
            self._container.remove(force=True)
            mark("container removed")
        except _not_found():
            pass
        except _sdk_errors() as exc:
            # The run itself is over; a leftover container is worth a note, and its label lets
            # an operator find it.
            cid = self._container.id[:12]
            self._notes.append(f"could not remove container {cid}: {_one_line(exc)}")

    def join(self) -> list[str]:
        self._thread.join()
        return list(self._notes)


def _oom_killed(container: Any) -> bool:
    """Whether the kernel killed the container for its memory limit (the engine's State says;
    an exit status of 137 alone could be any SIGKILL)."""
    try:
        container.reload()
        return bool(container.attrs.get("State", {}).get("OOMKilled"))
    except _sdk_errors(AttributeError):
        return False  # unknown: the exit status still fails the run


def _close_stream(output: Any) -> None:
    if isinstance(output, Stream):  # the fast path's: closes its socket, raises nothing
        output.close()
        return
    with contextlib.suppress(*_sdk_errors(OSError)):
        output.close()
    # CancellableStream.close shuts the socket but leaves the response's file object open
    # (docker SDK 7.x), which keeps the descriptor alive until garbage collection.
    response = getattr(output, "_response", None)
    if response is not None:
        with contextlib.suppress(OSError):
            response.close()


def _pump(output: Any, job: Job, notes: list[str]) -> None:
    """Copy the container's output to the run's log as it comes."""
    try:
        for chunk in output:
            job.log.write(chunk)
    except ValueError:
        # The stream was closed under the read: the run ended while the container still ran
        # (the engine lost, the container not stopped); a crash of this thread helps nobody.
        notes.append("the agent's output stream was closed before it ended; run.log may be short")
    except _sdk_errors(OSError) as exc:
        notes.append(f"the agent's output stream broke: {_one_line(exc)}; run.log may be short")
