"""The interface every execution backend satisfies, and the registry of backends."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from holon.errors import Unavailable

if TYPE_CHECKING:
    from holon.runner.record import ModelUsage


@dataclass(frozen=True)
class HostPaths:
    """The run's directories on the machine that runs the backend."""

    input: Path
    workspace: Path
    output: Path
    git_objects: Path | None = None  # the run's pack of reachable objects the snapshot borrows


class LogSink(Protocol):
    def write(self, chunk: bytes) -> None:
        """Take the next bytes of the agent's stdout and stderr, as they come."""


@dataclass(frozen=True)
class Job:
    run_id: str
    paths: HostPaths
    env: Mapping[str, str]  # spec env and secrets; each backend adds the HOLON_* layout variables
    timeout: float
    log: LogSink  # the agent's stdout and stderr, streamed to Holon while it runs
    probe: bool = False  # append --probe to the agent's command (RFC-0002 section 3.6)
    # Called once the agent is under the backend's control (its process started, its container
    # made), so that an interruption from then on ends it: the runner loads what judging the
    # run needs meanwhile, beside the agent.
    on_start: Callable[[], None] | None = None
    # Called, in the calling thread, by a backend that waits for an engine to start the agent
    # (docker: the start request, a few hundred ms of the engine's work with this process idle):
    # the runner loads what judging the run needs then, instead of beside the running agent.
    # Whatever it does not do, `on_start` still does.
    while_starting: Callable[[], None] | None = None


@dataclass(frozen=True)
class Execution:
    exit_code: int | None  # None when the agent was killed before it exited on its own
    timed_out: bool
    started_at: datetime
    ended_at: datetime
    notes: list[str] = field(default_factory=list)
    error: str | None = None  # the runtime itself failed (e.g. the engine went away), not the agent
    model_usage: ModelUsage | None = None  # what the host's key proxy metered, when there was one
    # Work the backend left running once the agent was gone (docker: the container's removal),
    # overlapping the judging: the runner waits for it before recording; returns its notes.
    cleanup: Callable[[], list[str]] | None = None


class Backend(Protocol):
    name: str

    def preflight(self) -> None:
        """Raise Unavailable when this backend cannot run here (engine, image, command)."""

    def execute(self, job: Job) -> Execution:
        """Run the agent to completion or timeout; all its processes are gone on return."""

    def close(self) -> None:
        """Release connections; the backend is not used afterwards."""


@dataclass(frozen=True)
class BackendOptions:
    image: str | None = None
    agent: list[str] | None = None
    # None: the runtime's default (docker: `none` when the model key proxy is the agent's way to
    # its model, else `bridge`).
    network: str | None = None
    cpus: float | None = None
    memory: str | None = None
    pull: str = "never"
    user: str | None = None  # uid:gid for the container; default: the invoking user
    model_tokens: int | None = None  # the key proxy refuses requests once this many are spent
    model_proxy: bool = True  # a model key stays with Holon, behind the key proxy, not the agent


def _local(options: BackendOptions) -> Backend:
    from holon.runner.local import LocalBackend

    return LocalBackend(options)


def _docker(options: BackendOptions) -> Backend:
    from holon.runner.docker_backend import DockerBackend

    return DockerBackend(options)


# An explicit registry: adding a backend is one entry here and one module.
BACKENDS: dict[str, Callable[[BackendOptions], Backend]] = {"local": _local, "docker": _docker}


def make_backend(name: str, options: BackendOptions) -> Backend:
    try:
        factory = BACKENDS[name]
    except KeyError:
        known = ", ".join(sorted(BACKENDS))
        raise Unavailable(f"unknown runtime {name!r}: use one of {known}") from None
    return factory(options)
