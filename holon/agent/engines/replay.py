"""The `replay` engine: the built-in loop over a recorded session (HOLON_REPLAY_SESSION).

The model's turns come from the recording; the tool calls in them run for real in the
workspace, so a replayed session edits files and runs tests exactly like a live one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from holon.agent.engine import EngineResult, EngineTask, Recorder
from holon.agent.engines.builtin import BuiltinEngine
from holon.agent.providers.replay import ReplayProvider

ENV_SESSION = "HOLON_REPLAY_SESSION"


class ReplayEngine:
    name = "replay"

    def __init__(self, session: Path | None) -> None:
        self.session = session

    @classmethod
    def from_env(cls, env: Mapping[str, str], model: str | None = None) -> ReplayEngine:
        """`model` is accepted for the registry's sake; the recording decides what answered."""
        value = env.get(ENV_SESSION, "").strip()
        return cls(Path(value).absolute() if value else None)

    def missing(self) -> str | None:
        if self.session is None:
            return f"{ENV_SESSION} is not set (the path of the recorded session to replay)"
        return ReplayProvider(self.session).missing()

    def run(self, task: EngineTask, recorder: Recorder) -> EngineResult:
        lacking = self.missing()
        if lacking is not None or self.session is None:
            return EngineResult(stop="error", error=lacking)
        return BuiltinEngine(ReplayProvider(self.session), name=self.name).run(task, recorder)
