"""What the model is given is bounded: the same size for a subject with 10 or 10,000 prior
events, however long a comment, with the repository's guidance cut to its limit."""

from __future__ import annotations

from datetime import UTC, datetime

from holon.controller.agent_decider import offered_skills
from holon.controller.decider_prompt import MAX_GUIDANCE, system_prompt, user_prompt, vocabulary
from holon.controller.memory import Attempt, QuestionEntry, SubjectMemory
from holon.controller.policy import load_policy
from holon.controller.view import ControllerView, IntentSummary, SubjectView, WaitSummary
from tests.controller.conftest import comment_event

AT = datetime(2026, 11, 21, tzinfo=UTC)


def history(events: int) -> ControllerView:
    """A subject after `events` prior events: as many intents, waits, failures and decisions."""
    intents = [
        IntentSummary(
            f"act_{i:08d}", "run_skill", "failed", "github-issue-solve", "a" * 40, 2, "x" * 500
        )
        for i in range(events)
    ]
    # Built unvalidated: the record caps these lists itself, and the context must cut them
    # even so (a restored or future memory is not trusted to be small).
    memory = SubjectMemory.model_construct(
        subject="Codertocat/Hello-World#issue:1",
        attempts_total=events,
        outcomes={f"outcome-{i % 50}": i for i in range(events)},
        recent=[
            Attempt(
                at=AT,
                intent_id=f"act_{i:08d}",
                type="run_skill",
                outcome="failure",
                reason="r" * 300,
            )
            for i in range(10)
        ],
        failed={f"github-issue-solve@{i:040d}": i for i in range(events)},
        prs=list(range(20)),
        questions=[
            QuestionEntry(asked_at=AT, question="q" * 300, answer="a" * 300) for _ in range(5)
        ],
        decisions=events,
    )
    subject = SubjectView(
        subject="issue:1",
        inflight=intents,
        recent=intents,
        waits=[WaitSummary(f"w{i}", "operator", "d" * 500) for i in range(events)],
        closure={"closure_outcome": "waiting", "detail": "z" * 5000},
        last_skill="github-issue-solve",
        memory=memory,
    )
    return ControllerView(paused=False, subject=subject)


def test_the_message_is_the_same_size_for_10_and_10000_prior_events() -> None:
    env = comment_event("please fix")
    small = user_prompt(env, history(10)).encode()
    large = user_prompt(env, history(10_000)).encode()
    # Only the counters' digits differ.
    assert abs(len(large) - len(small)) <= 64
    assert len(large) < 20_000


def test_a_huge_comment_is_cut() -> None:
    message = user_prompt(comment_event("y" * 1_000_000), history(1))
    assert len(message) < 20_000


def test_guidance_is_cut_to_its_limit_and_cleaned() -> None:
    policy = load_policy(None)
    guidance = "Prefer small fixes.\u202e\n" + "g" * 100_000
    system = system_prompt(policy, offered_skills(), guidance, vocabulary(policy))
    assert "Prefer small fixes." in system
    assert "\u202e" not in system
    assert system.count("g" * 100)
    assert len(system) < MAX_GUIDANCE + 8_000
