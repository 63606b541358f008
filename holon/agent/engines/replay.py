"""The `replay` engine: the built-in loop over a recorded session (HOLON_REPLAY_SESSION).

The model's turns come from the recording; the tool calls in them run for real in the
workspace, so a replayed session edits files and runs tests exactly like a live one.

HOLON_REPLAY_SESSION is a path, or `example:NAME` for a session that ships with Holon
(`holon/examples/sessions/NAME.ndjson`, the offline demo's): an installed agent, in an image or
a wheel, has those without any file being mounted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from holon.agent.engine import EngineResult, EngineTask, Recorder
from holon.agent.engines.builtin import BuiltinEngine
from holon.agent.providers.replay import ReplayProvider

ENV_SESSION = "HOLON_REPLAY_SESSION"
EXAMPLE = "example:"
_EXAMPLE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")


def session_path(value: str) -> Path | None:
    """The recorded session `value` names; None when it names no bundled example."""
    if not value.startswith(EXAMPLE):
        return Path(value).absolute()
    name = value[len(EXAMPLE) :]
    if not _EXAMPLE_NAME.fullmatch(name):
        return None
    return Path(__file__).resolve().parents[2] / "examples" / "sessions" / f"{name}.ndjson"


class ReplayEngine:
    name = "replay"

    def __init__(self, session: Path | None, named: str = "") -> None:
        self.session = session
        self.named = named  # what the environment said, for the message when it names nothing

    @classmethod
    def from_env(cls, env: Mapping[str, str], model: str | None = None) -> ReplayEngine:
        """`model` is accepted for the registry's sake; the recording decides what answered."""
        value = env.get(ENV_SESSION, "").strip()
        return cls(session_path(value) if value else None, value[:100])

    def missing(self) -> str | None:
        if self.session is None and self.named:
            return f"{ENV_SESSION}={self.named} names no bundled example session"
        if self.session is None:
            return f"{ENV_SESSION} is not set (the path of the recorded session to replay)"
        return ReplayProvider(self.session).missing()

    def run(self, task: EngineTask, recorder: Recorder) -> EngineResult:
        lacking = self.missing()
        if lacking is not None or self.session is None:
            return EngineResult(stop="error", error=lacking)
        return BuiltinEngine(ReplayProvider(self.session), name=self.name).run(task, recorder)
