"""The `docker` backend: the agent in a container on the local Docker Engine, via the docker SDK.

Input is mounted read-only, the snapshot and output read-write, the original object store (for
history) read-only; secrets reach the agent as environment only. The container runs as the invoking
user so files in the output belong to them, and it is removed afterwards whatever happened. Docker
SDK types and exceptions stay inside this module.
"""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from typing import Any

import docker
import requests
from docker.errors import APIError, DockerException, ImageNotFound, NotFound
from docker.types import Mount

from holon.contract.layout import CONTAINER_LAYOUT, ENV_RUN_ID
from holon.errors import InvalidInput, Unavailable
from holon.runner.backend import BackendOptions, Execution, Job

CONTAINER_GIT_OBJECTS = "/holon/git-objects"
RUN_LABEL = "holon.run_id"
_GRACE_SECONDS = 2
_SPECIAL_NETWORKS = ("bridge", "none", "host")


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
        self.image: str = options.image
        self.user = options.user or f"{os.getuid()}:{os.getgid()}"
        self._client: Any = None
        self._image_config: dict[str, Any] = {}

    @property
    def client(self) -> Any:
        if self._client is None:
            host = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
            if host.startswith("unix://") and not os.path.exists(host.removeprefix("unix://")):
                # Checked here because the SDK leaks the socket of a failed unix connect.
                raise Unavailable(f"Docker engine not reachable: no socket at {host[7:]}")
            try:
                # from_env asks the engine for its API version: that is the reachability check.
                self._client = docker.from_env()
            except (DockerException, requests.RequestException) as exc:
                raise Unavailable(f"Docker engine not reachable: {_one_line(exc)}") from None
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def preflight(self) -> None:
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
        except (APIError, requests.RequestException) as exc:
            raise Unavailable(f"image {self.image!r} unavailable: {_one_line(exc)}") from None
        self._image_config = image.attrs.get("Config") or {}

    def _command(self, probe: bool) -> dict[str, Any]:
        if self.options.agent:
            argv = [*self.options.agent, *(["--probe"] if probe else [])]
            return {"entrypoint": argv[:1], "command": argv[1:]}
        if not probe:
            return {}
        if self._image_config.get("Entrypoint"):
            return {"command": ["--probe"]}
        return {"command": [*(self._image_config.get("Cmd") or []), "--probe"]}

    def _network(self) -> dict[str, Any]:
        network = self.options.network
        if network in _SPECIAL_NETWORKS:
            return {"network_mode": network}
        return {"network": network}

    def execute(self, job: Job) -> Execution:
        paths = job.paths
        mounts = [
            Mount(str(CONTAINER_LAYOUT.input), str(paths.input), type="bind", read_only=True),
            Mount(str(CONTAINER_LAYOUT.workspace), str(paths.workspace), type="bind"),
            Mount(str(CONTAINER_LAYOUT.output), str(paths.output), type="bind"),
        ]
        if paths.git_objects is not None:
            mounts.append(
                Mount(CONTAINER_GIT_OBJECTS, str(paths.git_objects), type="bind", read_only=True)
            )
        env = dict(job.env)
        env.update(CONTAINER_LAYOUT.env())
        env[ENV_RUN_ID] = job.run_id
        limits: dict[str, Any] = {}
        if self.options.cpus:
            limits["nano_cpus"] = int(self.options.cpus * 1e9)
        if self.options.memory:
            limits["mem_limit"] = self.options.memory
        try:
            container = self.client.containers.create(
                self.image,
                environment=env,
                mounts=mounts,
                user=self.user,
                working_dir=str(CONTAINER_LAYOUT.workspace),
                labels={RUN_LABEL: job.run_id},
                security_opt=["no-new-privileges"],
                detach=True,
                **self._command(job.probe),
                **self._network(),
                **limits,
            )
        except (APIError, requests.RequestException) as exc:
            raise InvalidInput(
                f"docker could not create the agent container: {_one_line(exc)}"
            ) from None
        notes: list[str] = []
        timed_out = False
        exit_code: int | None = None
        started = datetime.now(UTC)
        try:
            try:
                container.start()
            except APIError as exc:
                raise InvalidInput(f"docker could not start the agent: {_one_line(exc)}") from None
            try:
                result = container.wait(timeout=job.timeout)
                exit_code = int(result.get("StatusCode", 1))
            except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
                timed_out = True
                with contextlib.suppress(APIError, NotFound):
                    container.stop(timeout=_GRACE_SECONDS)
            ended = datetime.now(UTC)
            self._save_logs(container, job, notes)
        except BaseException:
            with contextlib.suppress(APIError, NotFound, requests.RequestException):
                container.kill()
            raise
        finally:
            try:
                container.remove(force=True)
            except NotFound:
                pass
            except (APIError, requests.RequestException) as exc:
                # The run itself is over and judged; a leftover container is worth a note, and
                # its label lets an operator find it.
                notes.append(f"could not remove container {container.id[:12]}: {_one_line(exc)}")
        return Execution(exit_code, timed_out, started, ended, notes)

    @staticmethod
    def _save_logs(container: Any, job: Job, notes: list[str]) -> None:
        try:
            with job.paths.log.open("ab") as log:
                for chunk in container.logs(stdout=True, stderr=True, stream=True):
                    log.write(chunk)
        except (APIError, requests.RequestException) as exc:
            notes.append(f"agent logs unavailable: {_one_line(exc)}")
