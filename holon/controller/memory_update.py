"""Folding what happens on a subject into its memory (memory.py). Pure: no I/O, no clock.

Each fold takes a `SubjectMemory` and returns a new one: a settled attempt (a skill run, or any
other effect that failed), a question a run asked, the answer a person gave it, the subject's
closure, a decision. Lists keep only their newest entries and counters keep the totals, so the
record stays the same size however long the history grows. Text kept (a reason, a question, an
answer) is one line, hidden characters removed, secret-looking words masked, and cut to
`MAX_TEXT`: it is shown to people and to a model later.

`memory_brief` is what a decider is given of it (bounded, JSON-ready).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from holon.controller.memory import (
    MAX_FAILED,
    MAX_PRS,
    MAX_QUESTIONS,
    MAX_RECENT,
    MAX_TEXT,
    Attempt,
    LastClosure,
    QuestionEntry,
    Spend,
    SubjectMemory,
)
from holon.executor.result import ActionResult
from holon.markdown import clean
from holon.secrets import mask_secret_looking

# The outcome names counted; anything else (a future run status, say) counts as "other", so a
# restored or future value cannot grow the counters without bound.
OUTCOMES = (
    "success",
    "failure",
    "needs_human",
    "timed_out",
    "interrupted",
    "expired",
    "cancelled",
    "refused",
    "dry_run",
    "other",
)
# Outcomes that mean the skill failed on its head: what the guard against blind repeats counts.
FAILURES = frozenset({"failure", "timed_out", "interrupted", "expired"})
NO_HEAD = "-"
# Before masking: a huge comment is cut first (masking a cut token still masks what is left).
_SCAN = 4 * MAX_TEXT
_LOGIN = 100


_NO_SPEND = Spend()  # frozen: one shared instance


def empty(subject: str) -> SubjectMemory:
    if type(subject) is not str:
        return SubjectMemory(subject=subject)  # refused as validation refuses it
    # Every other field is its default: nothing to validate (a new subject, each event). Each is
    # given, never left to pydantic's default factories: `model_construct` calls those through
    # `inspect.signature` of the factory, 0.5 ms a memory (measured in bench.serve's profile).
    return SubjectMemory.model_construct(
        subject=subject,
        attempts_total=0,
        outcomes={},
        recent=[],
        failed={},
        prs=[],
        questions=[],
        last_closure=None,
        decisions=0,
        spend=_NO_SPEND,
    )


def bounded_text(text: str | None) -> str | None:
    """One line of at most MAX_TEXT characters, hidden characters removed, secrets masked."""
    if text is None:
        return None
    line = " ".join(mask_secret_looking(clean(text[:_SCAN])).split())
    if not line:
        return None
    return line if len(line) <= MAX_TEXT else line[: MAX_TEXT - 1] + "…"


def failed_key(skill: str, head_sha: str | None) -> str:
    return f"{skill}@{head_sha or NO_HEAD}"


def failures(memory: SubjectMemory | None, skill: str, head_sha: str | None) -> int:
    """How many times `skill` failed on `head_sha` (or on the subject, without a head)."""
    if memory is None:
        return 0
    return max(0, memory.failed.get(failed_key(skill, head_sha), 0))


def repeat_refusal(skill: str, head_sha: str | None, count: int) -> str:
    """Why an automatic run of a skill that failed there already is not repeated."""
    times = {1: "once", 2: "twice"}.get(count, f"{count} times")
    if head_sha:
        return (
            f"{skill} failed {times} on {head_sha[:12]}; a new commit or a /holon command retries"
        )
    return f"{skill} failed {times} on this subject; a /holon command retries"


def outcome_of(result: ActionResult) -> str:
    """What an attempt came to: the run's own outcome when it ran, else its status."""
    if result.dry_run:
        return "dry_run"
    if result.run_status in ("timed_out", "interrupted"):
        return result.run_status
    if result.run_outcome in ("success", "failure", "needs_human"):
        return result.run_outcome
    return "success" if result.status == "succeeded" else "failure"


def attempt_of(result: ActionResult, *, skill: str | None, head_sha: str | None) -> Attempt | None:
    """The attempt a settled result is; None for a successful effect other than a skill run
    (a comment posted is not worth remembering, one that failed is)."""
    if result.type != "run_skill" and result.status == "succeeded":
        return None
    reason = result.error or (result.question.text if result.question is not None else None)
    output = result.output if result.type == "run_skill" else None
    return Attempt(
        at=result.at,
        intent_id=result.intent_id,
        type=result.type,
        skill=skill if result.type == "run_skill" else None,
        head_sha=head_sha,
        outcome=outcome_of(result),
        reason=bounded_text(reason),
        pr=output.number if output is not None else None,
        spend=result.usage or Spend(),
    )


def fold_result(
    memory: SubjectMemory, result: ActionResult, *, skill: str | None, head_sha: str | None
) -> SubjectMemory:
    """A settled intent's last result: its attempt (`result.attempt` tries, all failed when it
    failed) and the question its run asked."""
    attempt = attempt_of(result, skill=skill, head_sha=head_sha)
    if attempt is None:
        return memory
    memory = fold_attempt(memory, attempt, tries=max(1, result.attempt))
    if result.question is not None and attempt.outcome == "needs_human":
        memory = fold_question(memory, result.at, result.question.text)
    return memory


def fold_attempt(memory: SubjectMemory, attempt: Attempt, *, tries: int = 1) -> SubjectMemory:
    if any(a.intent_id == attempt.intent_id and a.at == attempt.at for a in memory.recent):
        return memory  # the same settlement folded again (a replay): counted once
    outcome = attempt.outcome if attempt.outcome in OUTCOMES else "other"
    outcomes = dict(memory.outcomes)
    outcomes[outcome] = outcomes.get(outcome, 0) + 1
    failed = dict(memory.failed)
    if attempt.skill:
        key = failed_key(attempt.skill, attempt.head_sha)
        if outcome in FAILURES:
            # Re-inserted last: the newest failures are the ones kept.
            failed[key] = max(0, failed.pop(key, 0)) + tries
            while len(failed) > MAX_FAILED:
                del failed[next(iter(failed))]
        elif outcome == "success":
            failed.pop(key, None)  # it works there now: nothing to hold back
    prs = list(memory.prs)
    if attempt.pr is not None and attempt.pr not in prs:
        prs = [*prs, attempt.pr][-MAX_PRS:]
    return memory.model_copy(
        update={
            "attempts_total": memory.attempts_total + 1,
            "outcomes": outcomes,
            "recent": [*memory.recent, attempt][-MAX_RECENT:],
            "failed": failed,
            "prs": prs,
            "spend": memory.spend + attempt.spend,
        }
    )


def open_question(memory: SubjectMemory | None) -> QuestionEntry | None:
    """The latest question asked on the subject, while it has no answer."""
    if memory is None or not memory.questions:
        return None
    last = memory.questions[-1]
    return last if last.answered_at is None else None


def fold_question(memory: SubjectMemory, at: datetime, text: str) -> SubjectMemory:
    question = bounded_text(text)
    if question is None:
        return memory
    asked = open_question(memory)
    if asked is not None and asked.question == question:
        return memory  # asked again, still open: one entry
    entry = QuestionEntry(asked_at=at, question=question)
    return memory.model_copy(update={"questions": [*memory.questions, entry][-MAX_QUESTIONS:]})


def fold_answer(memory: SubjectMemory, at: datetime, by: str, text: str | None) -> SubjectMemory:
    """The open question answered by `by` at `at` (a person's comment after it was asked)."""
    asked = open_question(memory)
    if asked is None or at < asked.asked_at:
        return memory
    answered = asked.model_copy(
        update={
            "answered_at": at,
            "answered_by": " ".join(clean(by).split())[:_LOGIN] or None,
            "answer": bounded_text(text),
        }
    )
    return memory.model_copy(update={"questions": [*memory.questions[:-1], answered]})


def fold_closure(
    memory: SubjectMemory,
    at: datetime,
    *,
    outcome: str,
    waiting_reason: str | None,
    lifecycle: str | None,
) -> SubjectMemory:
    """The subject's closure; the same closure settled again keeps when it was first reached."""
    last = memory.last_closure
    if last is not None and (last.outcome, last.waiting_reason, last.lifecycle) == (
        outcome,
        waiting_reason,
        lifecycle,
    ):
        return memory
    closure = LastClosure(
        at=at, outcome=outcome, waiting_reason=waiting_reason, lifecycle=lifecycle
    )
    return memory.model_copy(update={"last_closure": closure})


def fold_decision(memory: SubjectMemory, usage: Spend | None = None) -> SubjectMemory:
    """One more decision on the subject, with what deciding it spent (a model decider)."""
    spend = memory.spend + usage if usage is not None else memory.spend
    return memory.model_copy(update={"decisions": memory.decisions + 1, "spend": spend})


BRIEF_RECENT = 5


def memory_brief(memory: SubjectMemory | None) -> dict[str, Any]:
    """What a decider is told of the subject's memory: bounded however long the history (the
    memory's own bounds, fewer recent attempts), JSON-ready, every text already scrubbed. The
    recommended way to put `view.subject.memory` into a prompt."""
    if memory is None:
        return {"attempts_total": 0, "note": "nothing recorded on this subject yet"}
    asked = open_question(memory)
    answered = next((q for q in reversed(memory.questions) if q.answered_at is not None), None)
    closure = memory.last_closure
    return {
        "attempts_total": memory.attempts_total,
        "outcomes": dict(sorted(memory.outcomes.items())),
        "recent": [_brief_attempt(a) for a in memory.recent[-BRIEF_RECENT:]],
        # Skill runs that failed on a head, and how often: not to be repeated blindly.
        "failed": {_short_key(key): count for key, count in memory.failed.items() if count > 0},
        "prs": list(memory.prs),
        "open_question": (
            {"asked_at": asked.asked_at.isoformat(), "question": asked.question} if asked else None
        ),
        "last_answer": (
            {
                "question": answered.question,
                "answer": answered.answer,
                "by": answered.answered_by,
            }
            if answered is not None
            else None
        ),
        "last_closure": (
            {
                "at": closure.at.isoformat(),
                "outcome": closure.outcome,
                "waiting_reason": closure.waiting_reason,
                "lifecycle": closure.lifecycle,
            }
            if closure is not None
            else None
        ),
        "decisions": memory.decisions,
        "spend": memory.spend.model_dump(mode="json"),
    }


def _brief_attempt(attempt: Attempt) -> dict[str, Any]:
    return {
        "at": attempt.at.isoformat(),
        "type": attempt.type,
        "skill": attempt.skill,
        "head_sha": attempt.head_sha[:12] if attempt.head_sha else None,
        "outcome": attempt.outcome,
        "reason": attempt.reason,
        "pr": attempt.pr,
    }


def _short_key(key: str) -> str:
    skill, _, head = key.rpartition("@")
    return f"{skill}@{head[:12]}" if skill else key[:80]


__all__ = [
    "BRIEF_RECENT",
    "FAILURES",
    "NO_HEAD",
    "OUTCOMES",
    "attempt_of",
    "bounded_text",
    "empty",
    "failed_key",
    "failures",
    "fold_answer",
    "fold_attempt",
    "fold_closure",
    "fold_decision",
    "fold_question",
    "fold_result",
    "memory_brief",
    "open_question",
    "outcome_of",
    "repeat_refusal",
]
