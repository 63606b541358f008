"""Keeping each subject's memory in the serve state as a pass settles its work.

Called where things settle: an intent's result (`attempts.settle`), a run expired, cancelled
or refused without a result (ticks, stops, recovery, held work), a closure (`settlement.py`), a
decision and a person's answer to an open question (`passes.py`). Each folds into the subject's
memory (`memory_update.py`) and writes the record back only when it changed, in the same pass
(and so the same checkpoint) as what it remembers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from holon.closure.record import ClosureRecord
from holon.controller.facts import RepoFacts
from holon.controller.guardrails import actor_problem, looks_like_bot, own_event
from holon.controller.journals import decision_entry
from holon.controller.memory import Attempt, Spend, SubjectMemory
from holon.controller.memory_record import KIND, memory_data, read_memory, remembered
from holon.controller.memory_update import (
    bounded_text,
    empty,
    fold_answer,
    fold_attempt,
    fold_closure,
    fold_decision,
    fold_result,
    open_question,
)
from holon.controller.pass_report import Pass
from holon.controller.policy import Policy
from holon.executor.result import ActionResult
from holon.gateway.envelope import EventEnvelope
from holon.state.model import Record

# Events that carry a person's written reply on a subject, and where its text is.
ANSWERS = {
    "github.issue_comment.created": "comment",
    "github.pull_request_review_comment.created": "comment",
    "github.pull_request_review.submitted": "review",
    "github.discussion_comment.created": "comment",
}
# A reply may carry a command that asks for work with the answer (`/holon solve use SQLite`).
ANSWERING_COMMANDS = ("solve", "fix", "review")
# Subjects whose decisions are counted: the work items a memory is about.
REMEMBERED = ("issue:", "pull_request:")


def remember(p: Pass, subject: str, fold: Callable[[SubjectMemory], SubjectMemory]) -> None:
    memory, problem = read_memory(p.state, subject)
    if problem is not None:
        # Journaled, then started afresh: an unreadable record is no memory at all.
        p.journal(
            decision_entry(
                entry_id=f"mem:{p.event_id or 'recovery'}:{subject}:unreadable",
                event_id=p.event_id or "recovery",
                type_="memory",
                subject=subject,
                at=p.parts.clock(),
                outcome="memory_unreadable",
                rationale=f"the subject's memory record was ignored: {problem}",
            )
        )
    before = memory or empty(subject)
    after = fold(before)
    if after != before or problem is not None:
        remembered(subject, p.put(KIND, subject, "live", memory_data(after)), after)


def remember_result(p: Pass, data: dict[str, Any], result: ActionResult) -> None:
    skill, head = _text(data.get("skill")), _text(data.get("head_sha"))
    remember(p, data["subject"], lambda m: fold_result(m, result, skill=skill, head_sha=head))


def remember_ended(p: Pass, record: Record, outcome: str) -> None:
    """A run or effect that ended without a result of its own (expired by a tick, cancelled by
    a stop, refused when re-checked): remembered from its record."""
    data = record.data
    subject = data.get("subject")
    if not isinstance(subject, str):
        return
    result = data.get("result")
    error = result.get("error") if isinstance(result, dict) else None
    attempts = data.get("attempts")
    tries = attempts if isinstance(attempts, int) and not isinstance(attempts, bool) else 1
    kind = _text(data.get("type")) or "unknown"
    attempt = Attempt(
        at=record.updated_at,
        intent_id=record.key,
        type=kind,
        skill=_text(data.get("skill")) if kind == "run_skill" else None,
        head_sha=_text(data.get("head_sha")),
        outcome=outcome,
        reason=bounded_text(error if isinstance(error, str) else None),
    )
    remember(p, subject, lambda m: fold_attempt(m, attempt, tries=max(1, tries)))


def remember_closure(p: Pass, subject: str, closure: ClosureRecord) -> None:
    remember(
        p,
        subject,
        lambda m: fold_closure(
            m,
            p.parts.clock(),
            outcome=closure.closure_outcome,
            waiting_reason=closure.waiting_reason,
            lifecycle=closure.lifecycle_outcome,
        ),
    )


def remember_decision(p: Pass, subjects: Iterable[str], usage: Spend | None) -> None:
    """One decision on each of `subjects` (the event's and those it proposed work on; an
    issue or a pull request, not a check suite), with its spend on the first."""
    spent = usage  # counted once, however many subjects the decision touched
    for subject in dict.fromkeys(subjects):
        if subject.startswith(REMEMBERED):
            remember(p, subject, partial(fold_decision, usage=spent))
            spent = None


def remember_answer(p: Pass, env: EventEnvelope, subject: str) -> None:
    """A person's reply on a subject whose run asked a question answers it: the next comment
    (or review) after the question by someone with the policy's authority, never a bot's and
    never Holon's own."""
    field = ANSWERS.get(env.type)
    if field is None or env.actor is None:
        return
    if env.command is not None and env.command.name not in ANSWERING_COMMANDS:
        return  # asking for the status (or help, or a stop) answers nothing
    memory, _ = read_memory(p.state, subject)
    if open_question(memory) is None:
        return
    parts = p.parts
    if not answers(env, parts.facts, parts.policy):
        return
    item = env.payload.get(field)
    body = item.get("body") if isinstance(item, dict) else None
    text = body if isinstance(body, str) else None
    login = env.actor.login
    remember(p, subject, lambda m: fold_answer(m, parts.clock(), login, text))


def answers(env: EventEnvelope, facts: RepoFacts, policy: Policy) -> bool:
    """Whether the event's actor is a person who may answer Holon's question."""
    actor = env.actor
    if actor is None or own_event(env, facts):
        return False
    if actor.is_bot or looks_like_bot(actor.login, actor.type):
        return False  # an allowed bot may command Holon, but it is not a person answering
    return actor_problem(env, facts, policy) is None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


__all__ = [
    "ANSWERS",
    "answers",
    "remember",
    "remember_answer",
    "remember_closure",
    "remember_decision",
    "remember_ended",
    "remember_result",
]
