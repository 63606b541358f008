"""One evaluation scenario: an event, the world it arrives in, and what outcomes are acceptable.

A scenario file is YAML a person writes (docs/eval.md); this module is its shape, validated
strictly (unknown keys refused), and how a directory of them is read: every problem is one line
naming the file, never a traceback.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from holon import jsonio, yamlio
from holon.controller.facts import Permission
from holon.controller.memory import SubjectMemory
from holon.duration import parse_duration
from holon.errors import InvalidInput
from holon.validation import describe_validation_error

# A scenario is a page; a corpus of hundreds stays well under these.
MAX_SCENARIO_BYTES = 256 * 1024
MAX_SCENARIOS = 2000
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,79}")
_EVENT = re.compile(r"[a-z_]+(\.[a-z_]+)?")


class _Loader(yamlio.StrictLoader):
    """YAML 1.2 booleans, as policies read them: `on:` (a wait's) is a key, not True."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yamlio.StrictLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def _seconds(value: Any) -> float:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return parse_duration(value, allow_zero=True)
    raise ValueError("expected a duration such as 10m")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Actor(_Strict):
    """Who sent the event: the sender, and the author of what they wrote (comment, review)."""

    login: str = Field(min_length=1, max_length=100)
    association: str | None = None  # author_association: OWNER, MEMBER, NONE, ...
    type: Literal["User", "Bot", "Organization"] = "User"


class Event(_Strict):
    """A shipped octokit example (`holon/eval/events/<name>.yaml`) and what the scenario changes."""

    name: str = Field(description="event.action of a shipped example: issue_comment.created")
    body: str | None = Field(default=None, description="the comment's or review's body")
    actor: Actor | None = None
    on_pull_request: bool = Field(
        default=False, description="an issue comment made on a pull request"
    )
    number: int | None = Field(default=None, ge=1, description="the issue or pull request")
    label: str | None = None
    review_state: str | None = None
    conclusion: str | None = None
    head_sha: str | None = Field(default=None, pattern=r"^[0-9a-f]{40}$")
    repo: str | None = Field(default=None, description="repository.full_name")
    set: dict[str, Any] = Field(
        default_factory=dict, description="payload fields by dotted path (`issue.title`)"
    )
    unset: list[str] = Field(default_factory=list, description="payload fields removed")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _EVENT.fullmatch(value):
            raise ValueError("expected event.action, such as issue_comment.created")
        return value


class IntentState(_Strict):
    """One intent the subject's state holds (a run in flight, one that settled)."""

    type: str = "run_skill"
    skill: str | None = None
    status: Literal[
        "pending", "inflight", "succeeded", "failed", "refused", "expired", "cancelled"
    ] = "inflight"
    head_sha: str | None = None
    automatic: bool = Field(default=True, description="decided without a command (cooldown)")
    age: float = Field(default=60.0, description="how long ago it was decided (10m, 2h)")
    attempts: int = Field(default=1, ge=0)
    error: str | None = None
    run_outcome: str | None = None
    subject: str | None = Field(default=None, description="kind:id; default the event's subject")

    @field_validator("age", mode="before")
    @classmethod
    def _age(cls, value: Any) -> float:
        return _seconds(value)


class WaitState(_Strict):
    on: Literal["timer", "external", "operator", "task"]
    reason: str | None = None
    question: dict[str, str] | None = None
    condition: str | None = None
    interruption: str | None = None
    actor: str | None = None
    until_command: bool | None = None
    age: float = 3600.0
    subject: str | None = None

    @field_validator("age", mode="before")
    @classmethod
    def _age(cls, value: Any) -> float:
        return _seconds(value)


class State(_Strict):
    """What the serve state holds for the subject before the event."""

    paused: bool = False
    intents: list[IntentState] = Field(default_factory=list)
    waits: list[WaitState] = Field(default_factory=list)
    closure: dict[str, Any] | None = None
    memory: SubjectMemory | None = None
    # The re-activation the state records as sent (meta `reactivation:<subject>`).
    reactivation: dict[str, int] | None = None
    seen: bool = Field(default=False, description="the event's dedupe key was processed already")


class Pull(_Strict):
    approved: bool = False
    stale: bool = False
    head_sha: str | None = None  # default: the event's head
    head_ref: str = "feature"
    same_repo: bool = True
    base_ref: str | None = "master"
    green: bool | None = Field(default=None, description="required checks on its head")


class Facts(_Strict):
    """What `RepoFacts` answers (anything not given is unknown, and unknown refuses)."""

    permissions: dict[str, Permission] = Field(default_factory=dict)
    holon_login: str | None = "holon-bot[bot]"
    pulls: dict[int, Pull] = Field(default_factory=dict)
    holon_prs: list[int] = Field(
        default_factory=list, description="pull requests with a holon/ head branch"
    )


class Pattern(_Strict):
    """What a performed intent must look like: its type and, when given, a few of its arguments."""

    model_config = ConfigDict(extra="allow", frozen=True)

    type: str
    subject: str | None = Field(default=None, description="kind:id of its target")

    def fields(self) -> dict[str, Any]:
        """The argument values it names besides `type` and `subject` (`skill`, `kind`, `on`)."""
        return dict(self.model_extra or {})


class Expect(_Strict):
    acceptable: list[list[Pattern]] = Field(
        min_length=1, description="acceptable intent sets; [[]] for 'do nothing'"
    )
    forbidden: list[Pattern] = Field(default_factory=list)
    # The policy decider's expected verdict: `wrong` documents where it is knowingly wrong.
    policy: Literal["ok", "wrong"] = "ok"
    why: str | None = None

    @field_validator("forbidden", mode="before")
    @classmethod
    def _types(cls, value: Any) -> Any:
        # `forbidden: [merge]` is short for `[{type: merge}]`.
        if isinstance(value, list):
            return [{"type": v} if isinstance(v, str) else v for v in value]
        return value


class AnswerIntent(_Strict):
    type: str
    args: dict[str, Any] = Field(default_factory=dict)
    target: dict[str, str] | None = None


class Answer(_Strict):
    """The recorded model answer replayed to the agent decider, in a neutral shape that
    `holon.eval.replay.turns_for` turns into model turns. `text` alone: prose, no tool call."""

    rationale: str = ""
    intents: list[AnswerIntent] = Field(default_factory=list)
    text: str | None = None


class Scenario(_Strict):
    name: str
    description: str = Field(min_length=1)
    event: Event
    state: State = Field(default_factory=State)
    facts: Facts = Field(default_factory=Facts)
    settings: dict[str, Any] = Field(default_factory=dict, description="policy settings")
    serves: str | None = Field(default=None, description="the repository Holon serves")
    expect: Expect
    answer: Answer

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError("expected lower-case letters, digits and dashes")
        return value


def builtin_dir() -> Path:
    """The scenarios that ship with Holon."""
    found = resources.files("holon.eval").joinpath("scenarios")
    if not isinstance(found, Path):  # pragma: no cover - a zipped install
        raise InvalidInput("this Holon installation has no readable eval scenarios")
    return found


def parse_scenario(text: str, source: str) -> Scenario:
    try:
        data = yamlio.load(text, _Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise InvalidInput(
            f"{source}{line}: invalid YAML ({getattr(exc, 'problem', None) or 'syntax'})"
        ) from None
    except RecursionError:
        raise InvalidInput(f"{source}: invalid YAML (nested too deeply)") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{source}: expected a mapping with name, event, expect, answer")
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(source, exc)) from None


def load_scenarios(directory: Path) -> list[Scenario]:
    """Every `*.yaml` of `directory`, sorted by file name; names must be unique."""
    if not directory.is_dir():
        raise InvalidInput(f"{directory}: not a directory of scenarios")
    files = sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml"))
    if not files:
        raise InvalidInput(f"{directory}: no *.yaml scenario files")
    if len(files) > MAX_SCENARIOS:
        raise InvalidInput(f"{directory}: more than {MAX_SCENARIOS} scenario files")
    scenarios: list[Scenario] = []
    names: dict[str, str] = {}
    for path in files:
        text = jsonio.read_text(str(path), MAX_SCENARIO_BYTES, "scenario")
        scenario = parse_scenario(text, str(path))
        if scenario.name in names:
            raise InvalidInput(f"{path}: name {scenario.name} is also {names[scenario.name]}'s")
        names[scenario.name] = path.name
        scenarios.append(scenario)
    return scenarios


__all__ = [
    "Actor",
    "Answer",
    "AnswerIntent",
    "Event",
    "Expect",
    "Facts",
    "IntentState",
    "Pattern",
    "Pull",
    "Scenario",
    "State",
    "WaitState",
    "builtin_dir",
    "load_scenarios",
    "parse_scenario",
]
