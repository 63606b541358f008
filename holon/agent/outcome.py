"""What a run's manifest says, from the engine's result and the evidence the agent trusts (pure).

Success is never the model's word alone: the engine must have stopped because the model called
`finish` with `success`, every command it cites as verification must be in the recorder's own
index with exit code 0, and the skills' requirements (a recorded verification, a change in the
workspace) must hold. Anything else is a failure that says why, or the model's question; a run
stopped at its token or cost budget asks the operator, with the figure and how to continue:
reaching a budget is a closure, not a failure (docs/budgets.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from holon.agent.engine import EngineResult, Finish
from holon.contract.manifest import Manifest, ManifestOutcome
from holon.duration import format_duration
from holon.secrets import mask_secret_looking
from holon.skills.catalog import SkillRequires

MAX_ERROR = 500


@dataclass(frozen=True)
class Limits:
    """The budgets the engine ran under, to name the one it ran out of."""

    max_steps: int
    timeout: float | None = None


@dataclass(frozen=True)
class Verdict:
    outcome: ManifestOutcome
    error: str | None = None
    question_id: str | None = None
    question_text: str | None = None


def one_line(text: str, limit: int = MAX_ERROR) -> str:
    """`text` as one bounded line with secret-looking words masked (a manifest's error)."""
    flat = " ".join(mask_secret_looking(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def human_duration(seconds: float) -> str:
    """`5m`, `1h30m`, `90s` is `1m30s`: how a spec writes a timeout (fractions as `12.5s`)."""
    if seconds < 60 or seconds != int(seconds):
        return format_duration(seconds)
    whole = int(seconds)
    parts = [(whole // 3600, "h"), (whole % 3600 // 60, "m"), (whole % 60, "s")]
    return "".join(f"{n}{unit}" for n, unit in parts if n)


BUDGET_STOPS = ("token_budget", "cost_budget")
BUDGET_QUESTION = "budget"
_LIMIT = {
    "token_budget": ("token", "`settings.budgets.run_tokens`", "`constraints.max_tokens`"),
    "cost_budget": ("cost", "`settings.budgets.run_cost_usd`", "`constraints.max_cost_usd`"),
}


def budget_question(result: EngineResult) -> str:
    """What a run stopped at its token or cost budget asks the operator: the figure (the
    engine's line) and how to continue."""
    kind, setting, constraint = _LIMIT[result.stop]
    spent = one_line(result.error) if result.error else f"the run's {kind} budget ran out"
    return (
        f"Stopped at the run's {kind} budget before finishing: {spent}. To continue, raise "
        f"{setting} in Holon's policy (or the spec's {constraint}), then ask for the work "
        "again (comment `/holon solve` on the issue, `/holon fix` on the pull request)."
    )


def _stopped(result: EngineResult, limits: Limits) -> str:
    detail = f": {result.error}" if result.error else ""
    if result.stop == "no_finish":
        return "the model stopped without calling finish" + detail
    if result.stop == "max_steps":
        return f"max_steps {limits.max_steps} reached without finish"
    if result.stop == "timeout":
        after = human_duration(limits.timeout) if limits.timeout else "the deadline"
        return f"timeout after {after} without finish"
    if result.stop == "refused":
        return "provider refused" + detail
    if result.stop == "finished":
        return "the engine reported finished without the model's result"
    return result.error or "the engine failed"


def _verification_problem(
    finish: Finish, requires: SkillRequires, exit_codes: Mapping[int, int | None]
) -> str | None:
    for cited in finish.verification:
        if cited not in exit_codes:
            return f"verification command {cited} cited in finish was never recorded"
        code = exit_codes[cited]
        if code is None:
            return f"verification command {cited} did not complete (timed out)"
        if code != 0:
            return f"verification command {cited} exited with {code}, not 0"
    if requires.verification and not finish.verification:
        return (
            "the skill requires a recorded passing verification (tests or a build) cited in "
            "finish; none was cited"
        )
    return None


def judge(
    result: EngineResult,
    *,
    requires: SkillRequires,
    exit_codes: Mapping[int, int | None],
    changed: bool | None,
    limits: Limits,
) -> Verdict:
    """The outcome the evidence supports. `changed`: whether the workspace has a change (None:
    it could not be told); only asked when the skill requires a change."""
    finish = result.finish
    if result.stop in BUDGET_STOPS:
        # A budget reached is not a failure: the operator decides whether the work is worth
        # more (docs/budgets.md), so the run ends asking them, with the figure.
        return Verdict(
            "needs_human", question_id=BUDGET_QUESTION, question_text=budget_question(result)
        )
    if result.stop != "finished" or finish is None:
        return Verdict("failure", one_line(_stopped(result, limits)))
    if finish.status == "needs_human":
        if finish.question is None:
            return Verdict("failure", "the model asked for a human but gave no question to ask")
        return Verdict(
            "needs_human",
            question_id=finish.question.id,
            question_text=finish.question.text,
        )
    if finish.status == "failure":
        return Verdict("failure", one_line("the model reported failure: " + finish.summary))
    problem = _verification_problem(finish, requires, exit_codes)
    if problem is not None:
        return Verdict("failure", problem)
    if requires.change:
        if changed is None:
            return Verdict(
                "failure",
                "the skill requires a change in the workspace, and whether there is one could "
                "not be told",
            )
        if not changed:
            return Verdict(
                "failure",
                "the skill requires a change in the workspace; the workspace is unchanged",
            )
    return Verdict("success")


def manifest_for(
    verdict: Verdict,
    result: EngineResult | None,
    *,
    agent: str,
    version: str,
    engine: str,
    duration: float | None = None,
    artifacts: list[str] | None = None,
    requests: int | None = None,
) -> Manifest:
    """The manifest of a run: its verdict and what the engine reported about itself."""
    metadata: dict[str, object] = {"agent": agent, "version": version}
    engine_info: dict[str, object] = {"name": engine}
    if result is not None:
        engine_info.update(model=result.model, version=result.engine_version)
        usage: dict[str, object] = result.usage.model_dump()
        if requests is not None:
            usage["requests"] = requests
        metadata.update(turns=result.turns, stop=result.stop, usage=usage)
    metadata["engine"] = engine_info
    question = None
    if verdict.question_id is not None and verdict.question_text is not None:
        question = {"id": verdict.question_id, "text": verdict.question_text}
    return Manifest.model_validate(
        {
            "status": "failed" if verdict.outcome == "failure" else "completed",
            "outcome": verdict.outcome,
            "duration": duration,
            "artifacts": artifacts or [],
            "metadata": metadata,
            "error": verdict.error,
            "question": question,
        }
    )
