"""Folding settled work into a subject's memory (holon/controller/memory_update.py): pure, bounded
however long the history, text scrubbed before it is kept."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from holon.closure.evidence import Question
from holon.controller.memory import (
    MAX_FAILED,
    MAX_PRS,
    MAX_QUESTIONS,
    MAX_RECENT,
    MAX_TEXT,
    Spend,
    SubjectMemory,
)
from holon.controller.memory_record import memory_data
from holon.controller.memory_update import (
    empty,
    failures,
    fold_answer,
    fold_closure,
    fold_decision,
    fold_question,
    fold_result,
    memory_brief,
    open_question,
    repeat_refusal,
)
from holon.executor.result import ActionResult, EffectOutput

T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
SHA = "abc1234" + "0" * 33
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2


def result(
    n: int,
    *,
    status: str = "failed",
    outcome: str | None = "failure",
    type_: str = "run_skill",
    attempt: int = 2,
    error: str | None = None,
    pr: int | None = None,
    usage: Spend | None = None,
    question: Question | None = None,
) -> ActionResult:
    return ActionResult.model_validate(
        {
            "id": f"i{n}:{attempt}",
            "intent_id": f"i{n}",
            "type": type_,
            "subject": "pull_request:2",
            "attempt": attempt,
            "status": status,
            "run_id": f"r{n}" if type_ == "run_skill" else None,
            "run_outcome": outcome,
            "error": error,
            "output": EffectOutput(number=pr) if pr is not None else None,
            "usage": usage,
            "question": question,
            "at": T0 + timedelta(minutes=n),
        }
    )


def test_a_failed_run_counts_its_attempts_on_its_skill_and_head() -> None:
    memory = fold_result(
        empty("pull_request:2"),
        result(1, error="tests failed"),
        skill="github-pr-fix",
        head_sha=SHA,
    )
    assert memory.attempts_total == 1
    assert memory.outcomes == {"failure": 1}
    assert memory.failed == {f"github-pr-fix@{SHA}": 2}  # both attempts of the intent failed
    assert failures(memory, "github-pr-fix", SHA) == 2
    assert failures(memory, "github-pr-fix", "f" * 40) == 0
    assert failures(memory, "github-review", SHA) == 0
    (attempt,) = memory.recent
    assert (attempt.skill, attempt.head_sha, attempt.outcome, attempt.reason) == (
        "github-pr-fix",
        SHA,
        "failure",
        "tests failed",
    )
    assert repeat_refusal("github-pr-fix", SHA, 2) == (
        "github-pr-fix failed twice on abc123400000; a new commit or a /holon command retries"
    )
    # Folding the same settlement again (a replay) counts it once.
    assert fold_result(memory, result(1), skill="github-pr-fix", head_sha=SHA) == memory


def test_success_clears_the_failures_of_its_skill_on_that_head() -> None:
    memory = fold_result(empty("issue:1"), result(1), skill="github-issue-solve", head_sha=None)
    assert memory.failed == {"github-issue-solve@-": 2}
    ok = result(2, status="succeeded", outcome="success", pr=12, attempt=1)
    memory = fold_result(memory, ok, skill="github-issue-solve", head_sha=None)
    assert memory.failed == {}
    assert memory.prs == [12]
    assert memory.outcomes == {"failure": 1, "success": 1}


def test_only_failed_effects_other_than_runs_are_remembered() -> None:
    posted = result(1, status="succeeded", outcome=None, type_="comment", attempt=1)
    assert fold_result(empty("issue:1"), posted, skill=None, head_sha=None) == empty("issue:1")
    failed = result(2, outcome=None, type_="label", error="403")
    memory = fold_result(empty("issue:1"), failed, skill=None, head_sha=None)
    assert memory.outcomes == {"failure": 1}
    assert memory.failed == {}  # not a skill: nothing to hold back
    assert memory.recent[0].type == "label"


def test_reasons_are_scrubbed_and_bounded() -> None:
    error = f"push failed: token {TOKEN}\n\u202e" + "x" * 5000
    memory = fold_result(empty("issue:1"), result(1, error=error), skill="s", head_sha=None)
    reason = memory.recent[0].reason
    assert reason is not None
    assert TOKEN not in reason
    assert "***" in reason
    assert "\n" not in reason
    assert "\u202e" not in reason
    assert len(reason) <= MAX_TEXT


def test_spend_adds_up_from_runs_and_decisions() -> None:
    usage = Spend(input_tokens=1000, output_tokens=200, cost_usd=0.01, unpriced_tokens=0)
    memory = fold_result(empty("issue:1"), result(1, usage=usage), skill="s", head_sha=None)
    memory = fold_decision(memory, Spend(input_tokens=10, output_tokens=5, unpriced_tokens=15))
    memory = fold_decision(memory)
    assert memory.decisions == 2
    assert memory.spend == Spend(
        input_tokens=1010, output_tokens=205, cost_usd=0.01, unpriced_tokens=15
    )
    assert memory.recent[0].spend == usage


def test_a_question_asked_then_answered() -> None:
    asked = result(
        1,
        status="succeeded",
        outcome="needs_human",
        attempt=1,
        question=Question(id="q", text="Which database?"),
    )
    memory = fold_result(empty("issue:3"), asked, skill="github-issue-solve", head_sha=None)
    question = open_question(memory)
    assert question is not None
    assert question.question == "Which database?"
    # An answer from before the question is not its answer.
    assert fold_answer(memory, T0, "octocat", "old") == memory
    answered = fold_answer(memory, T0 + timedelta(hours=1), "octocat", f"SQLite {TOKEN}")
    assert open_question(answered) is None
    entry = answered.questions[-1]
    assert (entry.answered_by, entry.answer) == ("octocat", "SQLite ***")
    # Nothing open: a later comment answers nothing.
    assert fold_answer(answered, T0 + timedelta(hours=2), "other", "x") == answered


def test_a_closure_is_kept_once_until_it_changes() -> None:
    memory = fold_closure(
        empty("issue:1"), T0, outcome="failed", waiting_reason=None, lifecycle="failed"
    )
    same = fold_closure(
        memory, T0 + timedelta(hours=1), outcome="failed", waiting_reason=None, lifecycle="failed"
    )
    assert same == memory  # settled again: still the time it was first reached
    later = T0 + timedelta(hours=2)
    changed = fold_closure(
        memory,
        later,
        outcome="waiting",
        waiting_reason="awaiting_operator_input",
        lifecycle="askuserQuestion",
    )
    assert changed.last_closure is not None
    assert (changed.last_closure.at, changed.last_closure.outcome) == (later, "waiting")


def _history(count: int) -> SubjectMemory:
    memory = empty("pull_request:2")
    for n in range(count):
        # Each attempt on a new head, with a long reason, a new PR, a question and an answer,
        # a decision with spend, a new closure: every list and map is pushed to its bound.
        at = T0 + timedelta(minutes=n)
        outcome = ("failure", "success", "failure", "needs_human")[n % 4]
        status = "failed" if outcome == "failure" else "succeeded"
        settled = result(
            n,
            status=status,
            outcome=outcome,
            error="e" * 1000,
            pr=n,
            usage=Spend(input_tokens=1, output_tokens=1, cost_usd=0.5),
        )
        memory = fold_result(memory, settled, skill="github-pr-fix", head_sha=f"{n:040x}")
        memory = fold_question(memory, at, f"question {n} " + "q" * 1000)
        memory = fold_answer(memory, at, "octocat", "a" * 1000)
        memory = fold_decision(memory, Spend(input_tokens=1))
        memory = fold_closure(
            memory, at, outcome=("failed", "finished")[n % 2], waiting_reason=None, lifecycle=None
        )
    return memory


def _size(memory: SubjectMemory) -> int:
    return len(json.dumps(memory_data(memory)))


def test_the_record_stays_the_same_size_however_long_the_history() -> None:
    small, large = _history(40), _history(10_000)
    assert (len(large.recent), len(large.prs), len(large.questions)) == (
        MAX_RECENT,
        MAX_PRS,
        MAX_QUESTIONS,
    )
    assert len(large.failed) <= MAX_FAILED
    assert large.attempts_total == 10_000
    assert large.decisions == 10_000
    assert large.prs[-1] == 9_999  # the newest are kept
    # The same shape: only the counters' and the keys' digits differ.
    assert (len(small.recent), len(small.prs), len(small.questions)) == (
        len(large.recent),
        len(large.prs),
        len(large.questions),
    )
    assert len(small.failed) == len(large.failed)
    assert abs(_size(large) - _size(small)) <= 200
    assert _size(large) < 16_000
    # The brief a decider gets is bounded the same way.
    assert len(json.dumps(memory_brief(large))) < 8_000
    assert abs(len(json.dumps(memory_brief(large))) - len(json.dumps(memory_brief(small)))) < 100
    # And the record round-trips through validation (what a restored state is checked with).
    assert SubjectMemory.model_validate(memory_data(large)) == large


def test_the_brief_is_json_ready_and_says_what_failed() -> None:
    memory = fold_result(empty("pull_request:2"), result(1), skill="github-pr-fix", head_sha=SHA)
    brief = memory_brief(memory)
    assert json.loads(json.dumps(brief)) == brief
    assert brief["failed"] == {f"github-pr-fix@{SHA[:12]}": 2}
    assert brief["recent"][0]["outcome"] == "failure"
    assert brief["open_question"] is None
    assert memory_brief(None)["attempts_total"] == 0


def test_an_empty_memory_is_the_validated_default_and_calls_no_default_factory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pydantic.fields import FieldInfo

    from holon.controller.memory import SubjectMemory
    from holon.controller.memory_update import empty

    validated = SubjectMemory(subject="o/r#issue:1")
    # pydantic's default factories cost an `inspect.signature` each (0.5 ms a memory): an
    # empty memory, made for every new subject, gives every field itself.
    calls: list[str] = []
    real: Any = FieldInfo.get_default

    def counted(self: FieldInfo, *args: Any, **kwargs: Any) -> Any:
        calls.append(repr(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(FieldInfo, "get_default", counted)
    made = empty("o/r#issue:1")
    assert calls == []
    assert made == validated
    assert made.model_dump() == validated.model_dump()
