"""`ActionConfig`: what `holon action` is told, read from environment variables only (the
composite action sets them from its inputs; the same variables work when run by hand).

Every value is checked here, once: a bad one is one line naming the input (exit 64). The agent's
own `HOLON_INPUT_DIR`, `HOLON_WORKSPACE_DIR` and `HOLON_OUTPUT_DIR` are never read.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import SecretStr

from holon import __version__
from holon.agent.providers.http_settings import VARIABLES as MODEL_HTTP_SETTINGS
from holon.agent.providers.http_settings import http_settings
from holon.errors import InvalidInput
from holon.jsonio import scrub

T = TypeVar("T", bound=str)
Mode = Literal["single", "decide", "settle"]
Phase = Literal["main", "cleanup"]
MODES: tuple[Mode, ...] = ("single", "decide", "settle")
PHASES: tuple[Phase, ...] = ("main", "cleanup")
RUNTIMES: tuple[str, ...] = ("docker", "local")
ENGINES: tuple[str, ...] = ("builtin", "replay", "claude-code", "codex")
MODEL_KEYS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
TOKEN = "GITHUB_TOKEN"  # noqa: S105 (the variable's name)
IMAGE = "ghcr.io/holon-run/holon-agent"
# Settings of the replay engine, forwarded to the agent with HOLON_ENGINE=replay (tests, demos).
REPLAY_SETTINGS = ("HOLON_REPLAY_SESSION",)

_MENTION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,38}")
_BOT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}(\[bot\])?")
_IMAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}")
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}")
_WORKFLOW_FILE = re.compile(r"[A-Za-z0-9_.-]{1,100}\.ya?ml")

# (variable, input name, what it means) for `holon action --help` and docs/cli.md.
VARIABLES: tuple[tuple[str, str], ...] = (
    ("GITHUB_TOKEN", "the job's token (masked first); without it, nothing is written on GitHub"),
    ("ANTHROPIC_API_KEY, OPENAI_API_KEY", "model keys, forwarded to agent runs as secrets"),
    ("HOLON_POLICY", "policy file in the workspace (default: the built-in policy)"),
    ("HOLON_MODE", "single (default), decide or settle (fan-out)"),
    ("HOLON_PHASE", "main (default) or cleanup (the always() step after main)"),
    ("HOLON_RUNTIME", "docker (default) or local"),
    ("HOLON_AGENT_IMAGE", f"agent image (default {IMAGE}:{__version__})"),
    ("HOLON_AGENT", "agent command for the local runtime (default: this Holon's `holon agent`)"),
    ("HOLON_ENGINE", "agent engine: builtin, replay, claude-code, codex"),
    ("HOLON_MODEL", "model name for the engine"),
    (
        ", ".join(MODEL_HTTP_SETTINGS),
        "the built-in engine's model requests: timeouts, retries, retry deadline",
    ),
    ("HOLON_MENTION", "command mention (default holon: `/holon solve`)"),
    ("HOLON_ALLOWED_BOTS", "comma-separated bot logins allowed to command Holon"),
    ("HOLON_DRY_RUN", "true|false (default false): journal effects, perform none"),
    ("HOLON_INTENTS_PER_PASS", "intents one event may decide (default 5)"),
    ("HOLON_REACTIVATION_BUDGET", "self re-dispatches per subject (default 3)"),
    ("HOLON_FAIL_ON_WAITING", "true|false (default false): waiting work fails the job"),
    ("HOLON_STATE_DIR", "live state (default $RUNNER_TEMP/holon/state)"),
    ("HOLON_RUNS_DIR", "skill-run outputs (default $RUNNER_TEMP/holon/runs)"),
    ("HOLON_CACHE_DIR", "state restored by actions/cache (fast path; may be absent)"),
    ("HOLON_UPLOAD_DIR", "where the state bundle to upload is written"),
    ("HOLON_RUN_OUTPUTS", "settle: downloaded run outputs, one per subdirectory"),
    ("HOLON_BUNDLE_DIR", "decide: where run bundles are written"),
    ("HOLON_DECIDED_DIR", "decide: where its state is handed to settle; settle: where it is"),
    ("HOLON_MATRIX", "settle: decide's matrix output (the runs to collect; default: all)"),
    ("HOLON_DECIDE_RESULT", "settle: the decide job's result (success, failure, cancelled)"),
    ("HOLON_DEFAULT_BRANCH", "the default branch (default: the event's repository.default_branch)"),
    ("HOLON_WORKFLOW_FILE", "workflow file to re-dispatch (default from GITHUB_WORKFLOW_REF)"),
    ("GITHUB_*, RUNNER_TEMP", "as GitHub Actions sets them (GITHUB_EVENT_PATH is required)"),
)


@dataclass(frozen=True)
class ActionConfig:
    mode: Mode = "single"
    phase: Phase = "main"
    runtime: str = "docker"
    agent_image: str = f"{IMAGE}:{__version__}"
    agent: list[str] = field(default_factory=list)
    engine: str | None = None
    model: str | None = None
    engine_settings: dict[str, str] = field(default_factory=dict)  # HOLON_REPLAY_SESSION...
    model_settings: dict[str, str] = field(default_factory=dict)  # HOLON_MODEL_READ_TIMEOUT...
    mention: str | None = "holon"
    allowed_bots: list[str] | None = None  # None: the policy's
    dry_run: bool = False
    intents_per_pass: int = 5
    reactivation_budget: int = 3
    fail_on_waiting: bool = False
    policy: Path | None = None
    state_dir: Path = Path("holon/state")
    runs_dir: Path = Path("holon/runs")
    cache_dir: Path | None = None
    upload_dir: Path | None = None
    run_outputs: Path | None = None
    bundle_dir: Path | None = None
    workflow_file: str | None = None
    has_token: bool = False
    secrets: dict[str, SecretStr] = field(default_factory=dict)  # the model keys present
    event_name: str = ""
    event_path: str = ""
    repository: str | None = None
    repository_id: str | None = None
    run_id: str | None = None
    run_attempt: str | None = None
    server_url: str = "https://github.com"
    ref: str | None = None
    workspace: Path = Path(".")
    actor: str | None = None
    # The repository's default branch (HOLON_DEFAULT_BRANCH, else the event's
    # `repository.default_branch`, `with_event`): whether this run may merge the ref-scoped cache.
    default_branch: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ActionConfig:
        def get(name: str) -> str:
            return _text(env, name)

        temp = Path(get("RUNNER_TEMP") or tempfile.gettempdir()) / "holon"
        workspace = Path(get("GITHUB_WORKSPACE") or os.getcwd())
        engine = _choice(get("HOLON_ENGINE"), "HOLON_ENGINE", ENGINES, "") or None
        model = get("HOLON_MODEL") or None
        if model is not None and not _MODEL.fullmatch(model):
            raise InvalidInput("HOLON_MODEL: not a model name (letters, digits, . _ : / @ -)")
        model_settings = {n: get(n) for n in MODEL_HTTP_SETTINGS if get(n)}
        try:
            http_settings(model_settings)  # checked here: a bad one fails the step, not the run
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
        image = get("HOLON_AGENT_IMAGE") or f"{IMAGE}:{__version__}"
        if not _IMAGE.fullmatch(image):
            raise InvalidInput("HOLON_AGENT_IMAGE: not an image reference")
        mention = get("HOLON_MENTION") or "holon"
        if not _MENTION.fullmatch(mention):
            raise InvalidInput("HOLON_MENTION: a login-like word, e.g. holon (no slash, no @)")
        policy = get("HOLON_POLICY")
        return cls(
            mode=_choice(get("HOLON_MODE"), "HOLON_MODE", MODES, "single"),
            phase=_choice(get("HOLON_PHASE"), "HOLON_PHASE", PHASES, "main"),
            runtime=_choice(get("HOLON_RUNTIME"), "HOLON_RUNTIME", RUNTIMES, "docker"),
            agent_image=image,
            agent=_argv(get("HOLON_AGENT")),
            engine=engine,
            model=model,
            engine_settings={n: get(n) for n in REPLAY_SETTINGS if engine == "replay" and get(n)},
            model_settings=model_settings,
            mention=mention,
            allowed_bots=_bots(env.get("HOLON_ALLOWED_BOTS")),
            dry_run=_bool(get("HOLON_DRY_RUN"), "HOLON_DRY_RUN"),
            intents_per_pass=_int(get("HOLON_INTENTS_PER_PASS"), "HOLON_INTENTS_PER_PASS", 5, 1),
            reactivation_budget=_int(
                get("HOLON_REACTIVATION_BUDGET"), "HOLON_REACTIVATION_BUDGET", 3, 0
            ),
            fail_on_waiting=_bool(get("HOLON_FAIL_ON_WAITING"), "HOLON_FAIL_ON_WAITING"),
            policy=(workspace / policy) if policy else None,
            state_dir=_path(get("HOLON_STATE_DIR")) or temp / "state",
            runs_dir=_path(get("HOLON_RUNS_DIR")) or temp / "runs",
            cache_dir=_path(get("HOLON_CACHE_DIR")),
            upload_dir=_path(get("HOLON_UPLOAD_DIR")) or temp / "upload",
            run_outputs=_path(get("HOLON_RUN_OUTPUTS")),
            bundle_dir=_path(get("HOLON_BUNDLE_DIR")),
            workflow_file=_workflow_file(get("HOLON_WORKFLOW_FILE"), get("GITHUB_WORKFLOW_REF")),
            has_token=bool(get(TOKEN)),
            secrets={k: SecretStr(env[k]) for k in MODEL_KEYS if _text(env, k)},
            event_name=get("GITHUB_EVENT_NAME"),
            event_path=get("GITHUB_EVENT_PATH"),
            repository=get("GITHUB_REPOSITORY") or None,
            repository_id=_digits(get("GITHUB_REPOSITORY_ID"), "GITHUB_REPOSITORY_ID"),
            run_id=_digits(get("GITHUB_RUN_ID"), "GITHUB_RUN_ID"),
            run_attempt=_digits(get("GITHUB_RUN_ATTEMPT"), "GITHUB_RUN_ATTEMPT"),
            server_url=(get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
            ref=get("GITHUB_REF") or None,
            workspace=workspace,
            actor=get("GITHUB_ACTOR") or None,
            default_branch=get("HOLON_DEFAULT_BRANCH") or None,
        )

    # What state_sync reads (its StateSyncConfig).
    @property
    def repo(self) -> str:
        return self.repository or ""

    @property
    def repo_id(self) -> int | None:
        return int(self.repository_id) if self.repository_id else None

    @property
    def default_branch_run(self) -> bool:
        """This run is on the default branch: only then may the cache (scoped by ref, and so
        fed by runs a fork could influence on `refs/pull/N/merge`) be merged. Unknown: no."""
        branch = self.default_branch
        return bool(branch) and self.ref == f"refs/heads/{branch}"

    def with_event(self, payload: Mapping[str, object]) -> ActionConfig:
        """This configuration with what the event tells (the default branch), unless set."""
        if self.default_branch is not None:
            return self
        repository = payload.get("repository")
        branch = repository.get("default_branch") if isinstance(repository, dict) else None
        if not isinstance(branch, str) or not branch or len(branch) > 255:
            return self
        return dataclasses.replace(self, default_branch=branch)

    def agent_env(self) -> dict[str, str]:
        """Non-secret settings every skill run's agent gets (in its spec)."""
        env = {**self.engine_settings, **self.model_settings}
        if self.engine:
            env["HOLON_ENGINE"] = self.engine
        if self.model:
            env["HOLON_MODEL"] = self.model
        return env


def _text(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if scrub(value) != value:
        raise InvalidInput(f"{name}: the value is not valid UTF-8")
    return value


def _bool(value: str, name: str) -> bool:
    if not value:
        return False
    lowered = value.lower()
    if lowered not in ("true", "false"):
        raise InvalidInput(f"{name}: expected true or false, not {value[:40]!r}")
    return lowered == "true"


def _int(value: str, name: str, default: int, least: int) -> int:
    if not value:
        return default
    if not (value.isascii() and value.isdigit() and len(value) <= 6) or int(value) < least:
        raise InvalidInput(f"{name}: expected a whole number >= {least}, not {value[:40]!r}")
    return int(value)


def _choice(value: str, name: str, choices: tuple[T, ...], default: T) -> T:
    if not value:
        return default
    for choice in choices:
        if value.lower() == choice:
            return choice
    raise InvalidInput(f"{name}: expected one of {', '.join(choices)}, not {value[:40]!r}")


def _path(value: str) -> Path | None:
    return Path(value) if value else None


def _digits(value: str, name: str) -> str | None:
    if not value:
        return None
    if not (value.isascii() and value.isdigit() and len(value) <= 20):
        raise InvalidInput(f"{name}: expected digits, not {value[:40]!r}")
    return value


def _argv(value: str) -> list[str]:
    """The local runtime's agent command; none given: this interpreter's Holon (`holon agent`
    from the same installation, whatever PATH holds)."""
    if not value:
        return [sys.executable, "-m", "holon", "agent"]
    try:
        argv = shlex.split(value)
    except ValueError as exc:
        raise InvalidInput(f"HOLON_AGENT: {exc}") from None
    if not argv:
        raise InvalidInput("HOLON_AGENT: empty command")
    return argv


def _bots(value: str | None) -> list[str] | None:
    if value is None or not value.strip():
        return None
    bots = [b.strip() for b in value.split(",") if b.strip()]
    for bot in bots:
        if not _BOT.fullmatch(bot):
            raise InvalidInput(f"HOLON_ALLOWED_BOTS: not a login: {bot[:40]!r}")
    return bots


def _workflow_file(value: str, workflow_ref: str) -> str | None:
    """The workflow file to re-dispatch: given, else the file of GITHUB_WORKFLOW_REF
    (`owner/repo/.github/workflows/holon.yml@refs/heads/main`)."""
    if value:
        name = value.removeprefix(".github/workflows/")
        if not _WORKFLOW_FILE.fullmatch(name):
            raise InvalidInput(f"HOLON_WORKFLOW_FILE: not a workflow file name: {value[:60]!r}")
        return name
    path = workflow_ref.split("@", 1)[0]
    name = path.rsplit("/", 1)[-1]
    return name if _WORKFLOW_FILE.fullmatch(name) else None


__all__ = ["ENGINES", "MODEL_KEYS", "VARIABLES", "ActionConfig", "Mode", "Phase"]
