"""Argument helpers shared by the run, probe and serve commands."""

from __future__ import annotations

import argparse
import math
import os
import shlex
from typing import TYPE_CHECKING, Any

from holon.duration import parse_duration
from holon.errors import InvalidInput
from holon.jsonio import scrub
from holon.size import parse_size

if TYPE_CHECKING:
    from pydantic import SecretStr


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("agent and runtime")
    group.add_argument("--runtime", default="docker", help="docker (default) or local")
    group.add_argument("--image", help="agent image (docker runtime)")
    group.add_argument(
        "--agent",
        metavar="CMD",
        help="agent command: required for the local runtime; overrides the image entrypoint",
    )
    group.add_argument(
        "--network",
        default=None,
        help="docker network: bridge (default), none (default when a model key is forwarded), ...",
    )
    group.add_argument("--cpus", help="CPU limit for the container, e.g. 1.5")
    group.add_argument("--memory", help="memory limit for the container, e.g. 2g")
    group.add_argument(
        "--pull", default="never", help="image pull policy: never (default), missing, always"
    )
    group.add_argument(
        "--secret-env",
        metavar="NAME",
        action="append",
        default=[],
        help="pass environment variable NAME to the agent (repeatable); never printed",
    )
    group.add_argument(
        "--no-model-proxy",
        dest="model_proxy",
        action="store_false",
        help="pass ANTHROPIC_API_KEY/OPENAI_API_KEY to the agent (into the container) instead "
        "of keeping them in Holon's process behind the model key proxy",
    )
    group.add_argument("--timeout", metavar="DUR", help="e.g. 90s, 10m, 1h30m (overrides the spec)")
    group.add_argument(
        "--log-limit",
        metavar="SIZE",
        help="keep at most SIZE of the agent's output in run.log (first and last half; "
        "default 16m)",
    )
    group.add_argument("--json", action="store_true", help="print the run record as JSON")


def backend_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The RunRequest fields that the shared runtime flags set, validated. A model key read
    here is this process's alone from now on: gone from its environment, which children would
    inherit, and out of reach of its own user's processes (`model_keys.hold_model_keys`)."""
    from holon.runner.model_keys import hold_model_keys

    secrets = secrets_from_env(args.secret_env)
    hold_model_keys()
    return {
        "runtime": args.runtime,
        "image": args.image,
        "agent": agent_argv(args.agent),
        "timeout": duration_seconds(args.timeout, "--timeout"),
        "secrets": secrets,
        "network": args.network,
        "model_proxy": args.model_proxy,
        "cpus": cpus_value(args.cpus),
        "memory": memory_value(args.memory),
        "pull": args.pull,
        **({"log_limit": size_value(args.log_limit, "--log-limit")} if args.log_limit else {}),
    }


def cpus_value(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        cpus = float(value)
    except ValueError:
        cpus = math.nan
    if not math.isfinite(cpus) or cpus <= 0 or cpus > 1024:
        raise InvalidInput(f"--cpus: invalid value {value!r}: use a number of CPUs, e.g. 1.5")
    return cpus


def size_value(value: str, flag: str) -> int:
    try:
        return parse_size(value)
    except ValueError as exc:
        raise InvalidInput(f"{flag}: {exc}") from None


def memory_value(value: str | None) -> str | None:
    """The memory limit, checked here so a bad one is one line, not an engine error."""
    if value is None:
        return None
    size_value(value, "--memory")
    return value.strip()


def agent_argv(value: str | None) -> list[str] | None:
    if value is None:
        return None
    try:
        argv = shlex.split(value)
    except ValueError as exc:
        raise InvalidInput(f"--agent: {exc}") from None
    if not argv:
        raise InvalidInput("--agent: empty command")
    return argv


def duration_seconds(value: str | None, flag: str) -> float | None:
    """A duration flag's value in seconds; a bad one is an error naming that flag."""
    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise InvalidInput(f"{flag}: {exc}") from None


def env_values(names: list[str], flag: str = "--secret-env") -> list[str]:
    """The values of the named environment variables; a missing or empty one is an error, and
    so is one that is not UTF-8 (Python holds its bytes as lone surrogates, which no record, header
    or redaction can encode). The value itself is never shown."""
    values = []
    for name in names:
        value = os.environ.get(name)
        if not value:
            raise InvalidInput(f"{flag} {name}: not set in the environment")
        if scrub(value) != value:
            raise InvalidInput(f"{flag} {name}: the value is not valid UTF-8")
        values.append(value)
    return values


def secrets_from_env(names: list[str], flag: str = "--secret-env") -> dict[str, SecretStr]:
    from pydantic import SecretStr  # loaded by the run anyway; not by `--help` or gateway

    values = env_values(names, flag)
    return {name: SecretStr(value) for name, value in zip(names, values, strict=True)}
