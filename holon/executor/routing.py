"""`run_skill` intents by skill: host skills (publishing) to Holon's own handlers, every other
skill to the Agent Contract runner. The executor never imports the GitHub edge: the host
handlers are handed in by whoever built them (`build_executor(hosted=...)`)."""

from __future__ import annotations

from collections.abc import Mapping

from holon.executor.handlers import Handler
from holon.executor.result import ActionResult
from holon.intent import ActionIntent


class SkillRouter:
    def __init__(self, runner: Handler, hosted: Mapping[str, Handler]) -> None:
        self.runner = runner
        self.hosted = dict(hosted)

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        # A host skill never reaches the runner, so never an agent's container.
        handler = self.hosted.get(str(intent.args.get("skill")), self.runner)
        return handler(intent, attempt)


__all__ = ["SkillRouter"]
