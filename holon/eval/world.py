"""The world a scenario's event arrives in: its envelope (normalized as the gateway does), the
serve state the subject's history is written into, the repository facts and the policy.

Built once per scenario (which also validates what a file cannot: the payload normalizes, the
settings are valid); each decider then gets its own copy of the state, since a pass changes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from pydantic import ValidationError

from holon.controller.decide import target_of
from holon.controller.facts import PullFacts, StaticFacts
from holon.controller.pause import pause_record
from holon.controller.policy import Policy, Settings, load_policy
from holon.controller.reactivation import record_key
from holon.errors import InvalidInput
from holon.eval.events import github_event, payload_of
from holon.eval.scenario import IntentState, Scenario, WaitState
from holon.gateway.envelope import EventEnvelope
from holon.gateway.github import normalize
from holon.state.model import Record, RecordKind, ServeState
from holon.validation import describe_validation_error

# Events without a time of their own are received at this instant: a scenario is replayed the
# same way every time.
RECEIVED = datetime(2026, 1, 1, tzinfo=UTC)
# The controller decides this long after the event happened.
DELAY = timedelta(seconds=30)
# The head a pull request has when neither the event nor the scenario says.
DEFAULT_SHA = "0" * 39 + "1"
WRITER = "eval"
PRIOR_EVENT = "evt_eval_prior"


@dataclass(frozen=True)
class World:
    scenario: Scenario
    envelope: EventEnvelope
    subject: str
    facts: StaticFacts
    policy: Policy
    now: datetime
    state_json: str  # the state before the event, copied for each decider

    def state(self) -> ServeState:
        return ServeState.model_validate_json(self.state_json)

    def clock(self) -> datetime:
        return self.now


def prepare(scenario: Scenario, policy: Policy | None = None) -> World:
    """The scenario's world, under `policy` (default the built-in one) with the scenario's
    settings; InvalidInput (one line naming the scenario) when it cannot be built."""
    where = f"scenario {scenario.name}"
    payload = payload_of(scenario.event)
    try:
        envelope = normalize(
            github_event(scenario.event.name),
            payload,
            via="webhook",
            received_at=RECEIVED,
            delivery=f"eval-{scenario.name}",
            mention="holon",
        )
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc}") from None
    now = envelope.at + DELAY
    subject = target_of(envelope).subject()
    return World(
        scenario=scenario,
        envelope=envelope,
        subject=subject,
        facts=_facts(scenario, envelope),
        policy=_policy(scenario, policy or _builtin_policy(), where),
        now=now,
        state_json=_state(scenario, envelope, subject, now).model_dump_json(),
    )


@cache
def _builtin_policy() -> Policy:
    return load_policy(None)


def _policy(scenario: Scenario, base: Policy, where: str) -> Policy:
    if not scenario.settings:
        return base
    merged = {**base.settings.model_dump(), **scenario.settings}
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(f"{where}: settings", exc)) from None
    return base.model_copy(update={"settings": settings})


def _facts(scenario: Scenario, env: EventEnvelope) -> StaticFacts:
    given = scenario.facts
    repo = env.scope.repo or "-"
    head = (env.subject.head_sha if env.subject else None) or DEFAULT_SHA
    pulls: dict[tuple[str, int], PullFacts] = {}
    green: dict[tuple[str, str], bool] = {}
    numbers = sorted(set(given.pulls) | set(given.holon_prs))
    for number in numbers:
        pull = given.pulls.get(number)
        sha = (pull.head_sha if pull else None) or head
        ref = pull.head_ref if pull else "feature"
        if number in given.holon_prs:
            ref = f"holon/issue-{number}"
        pulls[(repo, number)] = PullFacts(
            approved=pull.approved if pull else False,
            stale=pull.stale if pull else False,
            head_sha=sha,
            head_ref=ref,
            same_repo=pull.same_repo if pull else True,
            base_ref=pull.base_ref if pull else "master",
        )
        if pull is not None and pull.green is not None:
            green[(repo, sha)] = pull.green
    return StaticFacts(
        permissions={(repo, login): p for login, p in given.permissions.items()},
        pulls=pulls,
        green=green,
        holon_login=given.holon_login,
    )


def _record(kind: RecordKind, key: str, status: str, at: datetime, data: dict[str, Any]) -> Record:
    return Record(kind=kind, key=key, status=status, updated_at=at, writer=WRITER, data=data)


def _intent(index: int, given: IntentState, subject: str, now: datetime) -> Record:
    at = now - timedelta(seconds=given.age)
    result: dict[str, Any] | None = None
    if given.status not in ("pending", "inflight"):
        result = {"status": given.status}
        if given.error:
            result["error"] = given.error
        if given.run_outcome:
            result["run_outcome"] = given.run_outcome
    data = {
        "type": given.type,
        "subject": given.subject or subject,
        "skill": given.skill,
        "head_sha": given.head_sha,
        "automatic": given.automatic,
        "continues": None,
        "actor": None,
        "event_id": PRIOR_EVENT,
        "decided_at": at.isoformat(),
        "attempts": given.attempts,
        "result": result,
    }
    return _record("intent", f"act_eval{index:04d}", given.status, at, data)


def _wait(index: int, given: WaitState, subject: str, now: datetime) -> Record:
    data = given.model_dump(exclude={"age", "subject"}, exclude_none=True)
    data["subject"] = given.subject or subject
    return _record(
        "wait", f"wait_eval{index:04d}", "live", now - timedelta(seconds=given.age), data
    )


def _state(scenario: Scenario, env: EventEnvelope, subject: str, now: datetime) -> ServeState:
    given = scenario.state
    state = ServeState()
    for index, intent in enumerate(given.intents):
        state.put(_intent(index, intent, subject, now))
    for index, wait in enumerate(given.waits):
        state.put(_wait(index, wait, subject, now))
    earlier = now - timedelta(hours=1)
    if given.closure is not None:
        state.put(_record("closure", subject, "live", earlier, dict(given.closure)))
    if given.memory is not None:
        memory = given.memory.model_dump(mode="json")
        state.put(_record("memory", given.memory.subject, "live", earlier, memory))
    if given.reactivation is not None:
        key = record_key(subject)
        state.put(_record("meta", key, "live", earlier, dict(given.reactivation)))
    if given.seen:
        state.put(_record("dedupe", env.dedupe_key, "seen", earlier, {}))
    if given.paused:
        state.put(
            pause_record(paused=True, by="operator", reason="eval", at=earlier, writer=WRITER)
        )
    return state


__all__ = ["RECEIVED", "World", "prepare"]
