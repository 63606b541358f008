"""What a model decider answers, read strictly: one `decide` tool call (or one JSON object as its
whole text) holding a rationale and intents in the action vocabulary (holon/intent.py).

Pure: a `ModelTurn` and the event in, `Proposals` or `Invalid` (one line saying what was wrong,
what the model is told in its one repair request) out. An action outside the vocabulary, a target
in another repository, arguments its intent type does not take, prose instead of a decision:
each is invalid. What the policy merely does not allow (a merge with `allow_merge: false`) is not
invalid here: it is proposed, and the guardrails refuse it as they refuse any decider's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from holon.agent.conversation import ModelTurn, ToolSpec
from holon.controller.decide import (
    Proposal,
    event_base_ref,
    event_head_sha,
    event_inputs,
    head_args,
    pr_target,
    target_of,
)
from holon.controller.facts import RepoFacts
from holon.gateway.envelope import EventEnvelope
from holon.intent import ARGS, INTENT_TYPES, Target
from holon.markdown import clean
from holon.secrets import Redactor, mask_secret_looking

TOOL = "decide"
MAX_INTENTS = 20  # proposed at once; more is not a decision but a flood
MAX_RATIONALE_IN = 8000  # characters the model may send
MAX_RATIONALE = 500  # characters kept (journaled, shown)
MAX_WHY = 200  # characters of one intent's own reason kept
MAX_PROBLEM = 300  # characters of what the repair request says was wrong
MAX_TEXT_IN = 64 * 1024  # characters of a text answer parsed as JSON

_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_COMMAND = re.compile(r"/(?=holon)", re.IGNORECASE)
_FENCE = re.compile(r"\A```(?:json)?\s*\n(.*)\n```\Z", re.DOTALL)
_ZWSP = "\u200b"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OutputTarget(_Strict):
    repo: str | None = Field(default=None, max_length=140)
    kind: str = Field(pattern=r"^[a-z_]{1,40}$")
    id: str = Field(pattern=r"^[A-Za-z0-9._/-]{1,140}$")


class OutputIntent(_Strict):
    type: str = Field(max_length=40)
    target: OutputTarget | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    why: str | None = Field(default=None, max_length=2000)


class OutputDecision(_Strict):
    rationale: str = Field(min_length=1, max_length=MAX_RATIONALE_IN)
    intents: list[OutputIntent] = Field(default_factory=list, max_length=MAX_INTENTS)


@dataclass(frozen=True)
class Proposals:
    rationale: str  # scrubbed and bounded
    proposals: list[Proposal]


@dataclass(frozen=True)
class Invalid:
    problem: str  # one line, bounded, secret-free


def decide_tool(vocabulary: tuple[str, ...]) -> ToolSpec:
    """The one tool offered: its schema names the vocabulary the policy allows."""
    intent = {
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": list(vocabulary)},
            "target": {
                "type": "object",
                "description": "default: the event's subject; only in the event's repository",
                "properties": {
                    "kind": {"type": "string", "enum": ["issue", "pull_request"]},
                    "id": {"type": "string"},
                },
                "required": ["kind", "id"],
                "additionalProperties": False,
            },
            "args": {"type": "object"},
            "why": {"type": "string"},
        },
        "required": ["type", "args"],
        "additionalProperties": False,
    }
    return ToolSpec(
        name=TOOL,
        description="Record the decision: a short rationale and the intents to perform (none "
        "is a valid decision). Call it exactly once.",
        parameters={
            "type": "object",
            "properties": {
                "rationale": {"type": "string"},
                "intents": {"type": "array", "items": intent, "maxItems": MAX_INTENTS},
            },
            "required": ["rationale", "intents"],
            "additionalProperties": False,
        },
    )


def scrub(text: str, redactor: Redactor, limit: int = MAX_RATIONALE) -> str:
    """Model text made safe to journal and show: one line, hidden characters gone, known
    secrets and secret-looking words masked, no @mention and no `/holon` command left live,
    at most `limit` characters."""
    one_line = " ".join(clean(text).split())
    masked = mask_secret_looking(redactor(one_line))
    # A zero-width space after `@` keeps GitHub from notifying; after `/` no line is a command.
    safe = _COMMAND.sub("/" + _ZWSP, _MENTION.sub("@" + _ZWSP, masked))
    return safe if len(safe) <= limit else safe[: limit - 1] + "…"


def _problem(text: str, redactor: Redactor) -> Invalid:
    return Invalid(scrub(text, redactor, MAX_PROBLEM))


def _payload(turn: ModelTurn) -> dict[str, Any] | str:
    """The decision's raw object, or what is wrong with the turn's shape."""
    if turn.stop_reason == "max_tokens":
        return "the answer was cut off at the token limit; answer shorter"
    calls = turn.tool_calls
    if calls:
        names = sorted({c.name for c in calls})
        if names != [TOOL]:
            return f"unknown tool {', '.join(n for n in names if n != TOOL)}: call {TOOL} only"
        if len(calls) > 1:
            return f"{TOOL} was called {len(calls)} times; call it exactly once"
        if calls[0].arguments is None:
            return f"the arguments of {TOOL} were not a JSON object"
        return calls[0].arguments
    text = turn.text.strip()
    if not text:
        return f"the answer was empty; call {TOOL}"
    if len(text) > MAX_TEXT_IN:
        return "the answer is too long to be a decision"
    fenced = _FENCE.match(text)
    body = fenced.group(1) if fenced else text
    try:
        data = json.loads(body)
    except ValueError:
        what = "prose" if not body.lstrip().startswith(("{", "[")) else "malformed JSON"
        return f"the answer was {what}, not a decision: call {TOOL} (or answer one JSON object)"
    if not isinstance(data, dict):
        return "the answer was JSON but not an object with rationale and intents"
    return data


def _validation_problem(exc: ValidationError) -> str:
    first = exc.errors(include_input=False, include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"]) or "decision"
    return f"{where}: {first['msg']}"


def read_decision(
    turn: ModelTurn,
    env: EventEnvelope,
    facts: RepoFacts,
    redactor: Redactor,
    skills: Collection[str] | None = None,
) -> Proposals | Invalid:
    """The turn as proposals for `env`, or why it is not a valid decision (`skills`: the
    skills a run may name; None: not checked here, the controller still checks)."""
    raw = _payload(turn)
    if isinstance(raw, str):
        return _problem(raw, redactor)
    try:
        decision = OutputDecision.model_validate(raw)
    except ValidationError as exc:
        return _problem(_validation_problem(exc), redactor)
    rationale = scrub(decision.rationale, redactor)
    proposals: list[Proposal] = []
    for number, intent in enumerate(decision.intents, 1):
        made = _proposal(intent, env, facts, rationale, redactor, skills)
        if isinstance(made, str):
            return _problem(f"intents.{number - 1}: {made}", redactor)
        proposals.append(made)
    return Proposals(rationale, proposals)


def _target(intent: OutputIntent, env: EventEnvelope) -> Target | str:
    home = env.scope.repo
    given = intent.target
    if given is None:
        return pr_target(env) if intent.type == "run_skill" else target_of(env)
    if given.repo is not None and (home is None or given.repo.casefold() != home.casefold()):
        # An event acts on its own repository only (the guardrails refuse it too).
        return f"target repository {given.repo} is not the event's ({home or 'none'})"
    return Target(repo=home, kind=given.kind, id=given.id)


def _args(
    intent: OutputIntent, env: EventEnvelope, target: Target, facts: RepoFacts, redactor: Redactor
) -> Any:
    """The intent's arguments with what the event fixes filled in as the policy decider fills
    them (a run's subject inputs and head, a merge's head and base), secrets masked in what
    people will read."""
    args = dict(intent.args)
    if intent.type == "run_skill":
        given = args.get("inputs")
        inputs = dict(given) if isinstance(given, dict) else {}
        args["inputs"] = {**inputs, **event_inputs(env)}
        # The head a run works on is the event's (or the live pull request's), never the model's.
        args.pop("head_sha", None)
        args.pop("head_repo", None)
        args.update(head_args(env, target, facts))
    elif intent.type in ("comment", "wait"):
        # What the model writes for people to read carries no secret it may have seen.
        for key in ("body", "reason"):
            if isinstance(args.get(key), str):
                args[key] = mask_secret_looking(redactor(args[key]))
        question = args.get("question")
        if isinstance(question, dict):
            args["question"] = {
                k: mask_secret_looking(redactor(v)) if isinstance(v, str) else v
                for k, v in question.items()
            }
    elif intent.type == "merge":
        if "sha" not in args and event_head_sha(env):
            args["sha"] = event_head_sha(env)
        if "base" not in args and event_base_ref(env):
            args["base"] = event_base_ref(env)
    return args


def _proposal(
    intent: OutputIntent,
    env: EventEnvelope,
    facts: RepoFacts,
    rationale: str,
    redactor: Redactor,
    skills: Collection[str] | None,
) -> Proposal | str:
    if intent.type not in INTENT_TYPES:
        return f"unknown action {intent.type!r}; the vocabulary is {', '.join(INTENT_TYPES)}"
    skill = intent.args.get("skill")
    if intent.type == "run_skill" and skills is not None and skill not in skills:
        return f"unknown skill {skill!r}; the skills are {', '.join(sorted(skills))}"
    target = _target(intent, env)
    if isinstance(target, str):
        return target
    args = _args(intent, env, target, facts, redactor)
    try:
        ARGS[intent.type].model_validate(args)
    except ValidationError as exc:
        return f"{intent.type} args: {_validation_problem(exc)}"
    why = scrub(intent.why, redactor, MAX_WHY) if intent.why else ""
    reason = f"agent: {why or rationale}"
    return Proposal(intent.type, target, args, reason[:MAX_RATIONALE])


__all__ = [
    "MAX_INTENTS",
    "MAX_RATIONALE",
    "TOOL",
    "Invalid",
    "OutputDecision",
    "OutputIntent",
    "OutputTarget",
    "Proposals",
    "decide_tool",
    "read_decision",
    "scrub",
]
