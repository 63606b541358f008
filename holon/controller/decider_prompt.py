"""What a model decider is told: the system prompt (the vocabulary, the limits, the rules, the
repository's guidance) and, per event, one user message (the event, its untrusted text, the view
of the subject and its memory).

Pure and bounded: every list is cut to a few entries and every text to a few thousand
characters, so the message is the same size whether a subject has 10 or 10,000 prior events.
Text from outside (a comment, a title, a body, what people answered) is shown only inside
`<untrusted-data>` blocks, cleaned as the agent's context is (holon/agent/context.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from holon.agent.context import DELIMITER, neutralise
from holon.controller.memory import SubjectMemory
from holon.controller.policy import Policy
from holon.controller.view import ControllerView, IntentSummary, SubjectView
from holon.gateway.envelope import EventEnvelope
from holon.intent import INTENT_TYPES
from holon.markdown import clean
from holon.templating import environment

if TYPE_CHECKING:
    import jinja2

MAX_GUIDANCE = 8 * 1024  # characters of .holon/controller.md shown
MAX_UNTRUSTED = 4 * 1024  # characters of one untrusted text shown
MAX_TITLE = 300
MAX_LIST = 10  # entries of each list of the view
MAX_MAP = 20  # entries of each counter of the memory
MAX_FIELD = 200  # characters of one short field (an error, a wait's detail, a label)
MAX_SKILLS = 30
MAX_STATE = 12 * 1024  # characters of the view as JSON (a backstop: the caps above hold it)


@dataclass(frozen=True)
class SkillLine:
    name: str
    description: str


@dataclass(frozen=True)
class DataBlock:
    source: str  # a fixed word of Holon's, safe in the delimiter's attribute
    text: str


def vocabulary(policy: Policy) -> tuple[str, ...]:
    """The actions the model is offered: the vocabulary less what the policy does not let a
    model do. A model that proposes one anyway is refused by the guardrails (`model_actions`)."""
    return tuple(t for t in INTENT_TYPES if model_may(t, policy))


def model_may(type_: str, policy: Policy) -> bool:
    """Whether the policy lets a model decider propose `type_` (settings.decider_actions;
    merge also needs settings.allow_merge)."""
    allowed = type_ in policy.settings.decider_actions
    return allowed and (type_ != "merge" or policy.settings.allow_merge)


def system_prompt(
    policy: Policy, skills: list[SkillLine], guidance: str | None, offered: tuple[str, ...]
) -> str:
    shown = None
    if guidance and guidance.strip():
        shown = clean(guidance)[:MAX_GUIDANCE]
    return _template("controller_system.md.j2").render(
        vocabulary=offered,
        settings=policy.settings,
        skills=[SkillLine(s.name, _short(s.description, MAX_FIELD)) for s in skills[:MAX_SKILLS]],
        guidance=shown,
        delimiter=DELIMITER,
    )


def user_prompt(env: EventEnvelope, view: ControllerView) -> str:
    return _template("controller_user.md.j2").render(
        summary=_compact(event_summary(env)),
        blocks=untrusted_blocks(env, view),
        delimiter=DELIMITER,
    )


@cache
def _template(name: str) -> jinja2.Template:
    # Loaded once: asking the loader per event (is it up to date?) costs more than rendering.
    return environment("holon.controller", "text").get_template(name)


def _short(text: str, limit: int) -> str:
    one = " ".join(clean(text).split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _compact(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def event_summary(env: EventEnvelope) -> dict[str, Any]:
    """What the event is, in fields whose shape Holon or GitHub fixes (no free text)."""
    summary: dict[str, Any] = {"type": env.type, "repository": env.scope.repo}
    if env.actor is not None:
        actor = env.actor
        summary["actor"] = {
            "login": _short(actor.login, 100),
            "association": actor.association,
            "authority": actor.authority,
            "bot": actor.is_bot,
        }
    if env.subject is not None:
        subject = env.subject
        summary["subject"] = {
            "kind": subject.kind,
            "id": _short(subject.id, 100),
            "head_sha": subject.head_sha,
            "pull_requests": subject.pull_requests[:MAX_LIST],
        }
    if env.command is not None:
        # The command's arguments are the comment's own words: shown in the comment's block.
        summary["command"] = env.command.name
    label = env.payload.get("label")
    if isinstance(label, dict) and isinstance(label.get("name"), str):
        summary["label"] = _short(label["name"], MAX_FIELD)
    action = env.payload.get("action")
    if isinstance(action, str):
        summary["action"] = _short(action, 40)
    return summary


def _text_of(payload: dict[str, Any], key: str, field: str) -> str | None:
    found = payload.get(key)
    value = found.get(field) if isinstance(found, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def untrusted_blocks(env: EventEnvelope, view: ControllerView) -> list[DataBlock]:
    """The event's free text, then the state's record of the subject, each as data."""
    payload = env.payload
    blocks: list[DataBlock] = []
    for key in ("issue", "pull_request"):
        title = _text_of(payload, key, "title")
        if title is not None:
            blocks.append(DataBlock("title", neutralise(title)[:MAX_TITLE]))
            break
    written = [
        ("comment", _text_of(payload, "comment", "body")),
        ("review", _text_of(payload, "review", "body")),
    ]
    for source, text in written:
        if text is not None:
            blocks.append(DataBlock(source, neutralise(text)[:MAX_UNTRUSTED]))
    if not any(text for _, text in written):
        # The or pull request's own text, when no comment or review is the event.
        body = _text_of(payload, "issue", "body") or _text_of(payload, "pull_request", "body")
        if body is not None:
            blocks.append(DataBlock("body", neutralise(body)[:MAX_UNTRUSTED]))
    state = _compact(state_view(view))
    # Reasons and answers in the record came from people and runs: data as well.
    blocks.append(DataBlock("holon-state", neutralise(state)[:MAX_STATE]))
    return blocks


def _intent(summary: IntentSummary) -> dict[str, Any]:
    return {
        "type": summary.type,
        "status": summary.status,
        "skill": summary.skill,
        "head_sha": summary.head_sha,
        "attempts": summary.attempts,
        "error": _short(summary.error, MAX_FIELD) if summary.error else None,
    }


def state_view(view: ControllerView) -> dict[str, Any]:
    """The view as the model sees it: the newest entries of each list, short fields."""
    return {"paused": view.paused, "subject": _subject(view.subject)}


def _subject(subject: SubjectView | None) -> dict[str, Any] | None:
    if subject is None:
        return None
    closure = subject.closure or {}
    return {
        "subject": subject.subject,
        "inflight": [_intent(s) for s in subject.inflight[-MAX_LIST:]],
        "inflight_total": len(subject.inflight),
        "recent": [_intent(s) for s in subject.recent[-MAX_LIST:]],
        "waits": [
            {"on": w.on, "detail": _short(w.detail, MAX_FIELD)} for w in subject.waits[-MAX_LIST:]
        ],
        "waits_total": len(subject.waits),
        "closure": {
            k: _short(str(closure[k]), MAX_FIELD)
            for k in ("closure_outcome", "waiting_reason", "lifecycle_outcome", "detail")
            if closure.get(k) is not None
        }
        or None,
        "last_skill": subject.last_skill,
        "memory": _memory(subject.memory),
    }


def _top(counts: dict[str, int], limit: int = MAX_MAP) -> dict[str, int]:
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return {_short(k, MAX_FIELD): v for k, v in ranked}


def _memory(memory: SubjectMemory | None) -> dict[str, Any] | None:
    if memory is None:
        return None
    data = memory.model_dump(mode="json", exclude={"subject"})
    data["outcomes"] = _top(memory.outcomes)
    # The most repeated failures: what must not be tried blindly again.
    data["failed"] = _top(memory.failed, MAX_LIST)
    data["recent"] = data["recent"][-MAX_LIST:]
    return data


__all__ = [
    "MAX_GUIDANCE",
    "DataBlock",
    "SkillLine",
    "event_summary",
    "state_view",
    "system_prompt",
    "untrusted_blocks",
    "user_prompt",
    "vocabulary",
]
