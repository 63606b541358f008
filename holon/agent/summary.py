"""`summary.md`: the run for a person, from the verdict, the engine's result and the recorder's
index (templates/summary.md.j2). The model's own summary is kept as Markdown but cannot mention
anyone or hide text (`holon.markdown.prose`)."""

from __future__ import annotations

from dataclasses import dataclass

from holon.agent.engine import EngineResult
from holon.agent.outcome import Verdict
from holon.agent.recorder import EvidenceRecorder
from holon.duration import format_duration
from holon.markdown import Trusted, prose
from holon.templating import render


@dataclass(frozen=True)
class Cited:
    id: int
    state: Trusted


def _cited(result: EngineResult | None, recorder: EvidenceRecorder | None) -> list[Cited]:
    if result is None or result.finish is None:
        return []
    codes = recorder.exit_codes if recorder is not None else {}
    cited = []
    for command_id in result.finish.verification:
        if command_id not in codes:
            state = "never recorded"
        elif codes[command_id] is None:
            state = "timed out"
        elif codes[command_id] == 0:
            state = "passed (exit 0)"
        else:
            state = f"failed (exit {codes[command_id]})"
        cited.append(Cited(command_id, Trusted(state)))
    return cited


def render_summary(
    verdict: Verdict,
    result: EngineResult | None,
    engine: str,
    recorder: EvidenceRecorder | None,
    duration: float | None,
) -> str:
    commands = recorder.commands if recorder is not None else []
    count = recorder.command_count if recorder is not None else 0
    usage = recorder.total if recorder is not None else (result.usage if result else None)
    summary = result.finish.summary if result is not None and result.finish is not None else ""
    return render(
        "holon.agent",
        "summary.md.j2",
        "markdown",
        outcome=verdict.outcome,
        error=verdict.error,
        question=verdict.question_text,
        engine=engine,
        model=result.model if result is not None else None,
        stop=result.stop if result is not None else "before the engine ran",
        turns=result.turns if result is not None else 0,
        input_tokens=usage.input_tokens if usage is not None else 0,
        output_tokens=usage.output_tokens if usage is not None else 0,
        requests=recorder.requests if recorder is not None else 0,
        duration=Trusted(format_duration(duration)) if duration else None,
        summary=prose(summary) if summary else "",
        commands=commands,
        more_commands=count - len(commands),
        verification=_cited(result, recorder),
    )
