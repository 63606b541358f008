"""`holon agent` in a process of its own with a fake engine: `python -m tests.agent.fake_agent
SCENARIO [--soft]` (`--soft`: without making the process non-dumpable, the control case)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping

from holon.agent.engine import EngineResult, EngineTask, Recorder
from holon.agent.engines import registry
from tests.agent.fakes import KEY, ScriptedEngine, finished


def _sleep(task: EngineTask, recorder: Recorder) -> EngineResult:
    recorder.transcript({"kind": "turn", "text": "sleeping"})
    (task.output / "started").write_text("yes\n")
    subprocess.run(["sleep", "30"], env=dict(task.command_env), check=False)
    return finished()


def _peek(task: EngineTask, recorder: Recorder) -> EngineResult:
    """A model command looking for the key: in its environment and in the agent's /proc."""
    seen = {}
    for what, command in (("env", "env"), ("proc", "cat /proc/$PPID/environ")):
        done = subprocess.run(
            ["sh", "-c", command],
            cwd=task.workspace,
            env=dict(task.command_env),
            capture_output=True,
            text=True,
            check=False,
        )
        seen[what] = "yes" if KEY in done.stdout else "no"
        recorder.command(command, done.returncode, duration=0, output=done.stdout + done.stderr)
    result = finished(verification=[1])
    summary = f"env:{seen['env']} proc:{seen['proc']}"
    finish = result.finish.model_copy(update={"summary": summary}) if result.finish else None
    return EngineResult(stop="finished", finish=finish)


SCENARIOS = {"sleep": _sleep, "peek": _peek}


def main(argv: list[str]) -> int:
    from holon.agent.main import Options, run_agent

    engine = ScriptedEngine(SCENARIOS[argv[0]])

    def factory(env: Mapping[str, str], model: str | None) -> ScriptedEngine:
        return engine

    registry.FACTORIES["fake"] = factory
    return run_agent(Options(engine="fake"), harden="--soft" not in argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
