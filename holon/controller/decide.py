"""Deciders behind one interface. `PolicyDecider` is the default; a model-driven decider plugs in
later through the same `Decider` protocol. A decision names its decider and says why."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from holon.controller.facts import RepoFacts
from holon.controller.memory import Spend
from holon.controller.policy import Policy, Rule, Special
from holon.controller.view import ControllerView
from holon.gateway.envelope import EventEnvelope
from holon.intent import Target
from holon.templating import render

# A rule's `skill: $last`: the skill the subject's current unit of work runs (a re-activation).
LAST_SKILL = "$last"


@dataclass(frozen=True)
class Proposal:
    type: str
    target: Target
    args: dict[str, Any]
    reason: str
    priority: str = "normal"


@dataclass(frozen=True)
class Decision:
    decider: str
    rationale: str
    rule: str | None = None
    proposals: list[Proposal] = field(default_factory=list)
    special: Special | None = None
    # A model-driven decision (agent_decider.py): the model asked, what it spent, how long it
    # took, and, when another decider decided instead, why (`fallback`).
    model: str | None = None
    usage: Spend | None = None
    latency_ms: float | None = None
    fallback: str | None = None


class Decider(Protocol):
    name: str

    def decide(self, envelope: EventEnvelope, view: ControllerView) -> Decision: ...


def target_of(envelope: EventEnvelope) -> Target:
    # A pass asks several times of one event: both are frozen, so the last answer is kept
    # (held with its envelope, whose identity then cannot be reused).
    global _last_target
    last = _last_target  # one read: another thread may replace it, never change it
    if last is not None and last[0] is envelope:
        return last[1]
    subject = envelope.subject
    if subject is None:
        target = Target(repo=envelope.scope.repo, kind="repository", id=envelope.scope.repo or "-")
    else:
        target = Target(repo=envelope.scope.repo, kind=subject.kind, id=subject.id)
    _last_target = (envelope, target)
    return target


_last_target: tuple[EventEnvelope, Target] | None = None
# Event types whose rules `PolicyDecider` keeps at once (a few dozen exist).
_MAX_TYPES = 256


def _matches(rule: Rule, env: EventEnvelope, policy: Policy, facts: RepoFacts) -> bool:
    if rule.on and env.type not in rule.on:
        return False
    command = env.command
    if rule.command and (command is None or command.name not in rule.command):
        return False
    if rule.subject and (env.subject is None or env.subject.kind != rule.subject):
        return False
    payload = env.payload
    label = payload.get("label")
    name = label.get("name") if isinstance(label, dict) else None
    if rule.label is not None and name != rule.label:
        return False
    # A setting, not a literal in the rule: renaming the label is one line of the policy.
    if rule.holon_label is not None and (
        name is None or (name == policy.settings.holon_label) is not rule.holon_label
    ):
        return False
    if rule.review_state is not None:
        review = payload.get("review")
        if (
            not isinstance(review, dict)
            or str(review.get("state", "")).lower() != rule.review_state
        ):
            return False
    if rule.conclusion:
        check = payload.get("check_suite") or payload.get("check_run") or {}
        if not isinstance(check, dict) or check.get("conclusion") not in rule.conclusion:
            return False
    if rule.outcome and payload.get("run_outcome") not in rule.outcome:
        return False
    if rule.of_skill and payload.get("skill") not in rule.of_skill:
        return False
    if rule.setting is not None and not getattr(policy.settings, rule.setting):
        return False
    if rule.holon_pr is not None:
        return _holon_pr(env, facts) is rule.holon_pr
    return True


def _holon_pr(env: EventEnvelope, facts: RepoFacts) -> bool | None:
    """Whether the event concerns a Holon PR; unknown (None) never matches a rule."""
    repo = env.scope.repo
    if repo is None or env.subject is None:
        return None
    numbers = (
        [int(env.subject.id)] if env.subject.kind == "pull_request" else env.subject.pull_requests
    )
    answers = [facts.is_holon_pr(repo, n) for n in numbers]
    if any(answer is True for answer in answers):
        return True
    return False if answers and all(answer is False for answer in answers) else None


class PolicyDecider:
    name = "policy"

    def __init__(self, policy: Policy, facts: RepoFacts) -> None:
        self.policy = policy
        self.facts = facts
        # For `_rules_on`: the rules list it was made of, its length, and the rules by type.
        self._by_type: tuple[list[Rule], int, dict[str, list[Rule]]] | None = None

    def decide(self, envelope: EventEnvelope, view: ControllerView) -> Decision:
        return self.decide_viewing(envelope, lambda: view)

    def decide_viewing(
        self, envelope: EventEnvelope, view_of: Callable[[], ControllerView]
    ) -> Decision:
        """`decide`, with the view made only once a rule matches: most events match none, and
        matching reads the event, the policy and the facts, never the state."""
        policy = self.policy
        for rule in self._rules_on(policy, envelope.type):
            if _matches(rule, envelope, policy, self.facts):
                return self._apply(rule, envelope, view_of())
        return Decision(self.name, f"no rule matches {envelope.type}")

    def _rules_on(self, policy: Policy, type_: str) -> list[Rule]:
        """The policy's rules, in order, less those whose `on` leaves out events of `type_`
        (what `_matches` asks first): most rules name other events. Kept by type for this very
        list of rules, as it is now (a policy is frozen; its list is never changed in place, and
        one that were is listed again)."""
        rules = policy.rules
        known = self._by_type
        if known is None or known[0] is not rules or known[1] != len(rules):
            known = self._by_type = (rules, len(rules), {})
        found = known[2].get(type_)
        if found is None:
            if len(known[2]) >= _MAX_TYPES:
                known[2].clear()
            found = known[2][type_] = [r for r in rules if not r.on or type_ in r.on]
        return found

    def _apply(self, rule: Rule, env: EventEnvelope, view: ControllerView) -> Decision:
        target = _pr_target(env) if rule.do == "run_skill" else target_of(env)
        why = f"rule {rule.name} matched {env.type}"
        if env.command is not None:
            why += f" with /holon {env.command.word or 'help'}"
        if rule.do in ("stop", "status", "usage", "recheck"):
            return self._special(rule, env, view, target, why)
        args: dict[str, Any] = dict(rule.args)
        skill = rule.skill or ""
        if rule.do == "run_skill" and skill == LAST_SKILL:
            # Continue the work in hand: the skill of the subject's current unit of work.
            skill = (view.subject.last_skill if view.subject else None) or ""
            if not skill:
                return Decision(self.name, f"{why}, but {target.subject()} has no work to continue")
        if rule.do == "run_skill":
            args = {
                "skill": skill,
                "inputs": {**_inputs(env), **_rule_inputs(rule, env)},
            }
            args.update(_head_args(env, target, self.facts))
        elif rule.do == "merge":
            # A merge is pinned to the head and the base the event saw (docs/github.md,
            # "Merging").
            if "sha" not in args and _head_sha(env):
                args["sha"] = _head_sha(env)
            if "base" not in args and _base_ref(env):
                args["base"] = _base_ref(env)
        proposals = [Proposal(rule.do, target, args, why)]
        # A rule's further intents act on the event's subject, after its own.
        proposals += [Proposal(a.do, target_of(env), dict(a.args), why) for a in rule.also]
        return Decision(self.name, why, rule.name, proposals)

    def _special(
        self, rule: Rule, env: EventEnvelope, view: ControllerView, target: Target, why: str
    ) -> Decision:
        special = cast(Special, rule.do)  # _apply routes only the special actions here
        proposals: list[Proposal] = []
        if special == "usage":
            body = render("holon.controller", "usage.md.j2", "markdown", command=env.command)
            proposals.append(Proposal("comment", target, {"body": body, "kind": "usage"}, why))
        elif special == "status":
            body = render("holon.controller", "status.md.j2", "markdown", view=view.subject)
            proposals.append(Proposal("comment", target, {"body": body, "kind": "status"}, why))
        elif special == "stop":
            actor = env.actor.login if env.actor else "someone"
            args = {
                "on": "operator",
                "interruption": "stop_command",
                "reason": f"stopped by {actor}; any later /holon command restarts",
                "actor": actor,
            }
            proposals.append(Proposal("wait", target, args, why))
        return Decision(self.name, why, rule.name, proposals, special)


def _pr_target(env: EventEnvelope) -> Target:
    """Check events concern the PR they belong to, not the check itself."""
    subject = env.subject
    if (
        subject is not None
        and subject.kind in ("check_suite", "check_run")
        and subject.pull_requests
    ):
        return Target(repo=env.scope.repo, kind="pull_request", id=str(subject.pull_requests[0]))
    return target_of(env)


def _head_sha(env: EventEnvelope) -> str | None:
    return env.subject.head_sha if env.subject is not None else None


def _head_args(env: EventEnvelope, target: Target, facts: RepoFacts) -> dict[str, str]:
    """The head a run works on, recorded in its intent before it runs so guardrails, check runs,
    the run's workspace and publishing agree on one sha: the event's (the payload), else, for a
    pull request, the live pull request's (an issue comment on a pull request carries none);
    with where the head lives (`head_repo`: a fork's head is never checked out)."""
    sha = _head_sha(env)
    if target.kind != "pull_request" or target.repo is None or not target.id.isdigit():
        return {"head_sha": sha} if sha else {}
    number = int(target.id)
    where = _payload_head_repo(env.payload, number)
    if sha is None or where is None:
        live = facts.head(target.repo, number)
        if live is not None:
            sha = sha or live.sha
            where = where or ("same" if live.same_repo else "fork")
    args = {"head_sha": sha} if sha else {}
    return {**args, "head_repo": where} if where else args


def _payload_head_repo(payload: dict[str, Any], number: int) -> str | None:
    """ "same" or "fork" as the payload tells of pull request `number` (its own `pull_request`,
    or a check's `pull_requests`); None when it does not."""
    found: list[Any] = [payload.get("pull_request")]
    for kind in ("check_suite", "check_run"):
        check = payload.get(kind)
        listed = check.get("pull_requests") if isinstance(check, dict) else None
        found += listed if isinstance(listed, list) else []
    for pull in found:
        if not isinstance(pull, dict) or pull.get("number") != number:
            continue
        head, base = pull.get("head"), pull.get("base")
        if not isinstance(head, dict) or not isinstance(base, dict):
            return None
        there, home = head.get("repo"), base.get("repo")
        if there is None and "repo" in head:
            return "fork"  # a deleted fork: GitHub sends its head repository as null
        if not isinstance(there, dict) or not isinstance(home, dict):
            return None
        ids, names = (
            (there.get("id"), home.get("id")),
            (there.get("full_name"), home.get("full_name")),
        )
        verdicts = set()
        if all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            verdicts.add(ids[0] == ids[1])
        if all(isinstance(n, str) and n for n in names):
            verdicts.add(str(names[0]).casefold() == str(names[1]).casefold())
        # Ids and names that disagree tell nothing: the live pull request decides then.
        return ("same" if verdicts.pop() else "fork") if len(verdicts) == 1 else None
    return None


def _base_ref(env: EventEnvelope) -> str | None:
    pull = env.payload.get("pull_request")
    base = pull.get("base") if isinstance(pull, dict) else None
    ref = base.get("ref") if isinstance(base, dict) else None
    return ref if isinstance(ref, str) and ref else None


def _rule_inputs(rule: Rule, env: EventEnvelope) -> dict[str, str]:
    inputs: dict[str, str] = {}
    for name, value in rule.inputs.items():
        if not value.startswith("$"):
            inputs[name] = value
            continue
        found = env.payload.get(value[1:])
        if isinstance(found, str | int) and not isinstance(found, bool):
            inputs[name] = str(found)
    return inputs


def _inputs(env: EventEnvelope) -> dict[str, str]:
    inputs: dict[str, str] = {}
    subject = env.subject
    if subject is not None and subject.kind in ("issue", "pull_request"):
        inputs[subject.kind] = subject.id
    if env.command is not None and env.command.args:
        inputs["instructions"] = env.command.args
    return inputs


# What a model-driven decider fills in as this one does (decider_output.py): one definition.
pr_target = _pr_target
head_args = _head_args
event_inputs = _inputs
event_head_sha = _head_sha
event_base_ref = _base_ref
