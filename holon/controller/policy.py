"""The `policy` decider: YAML rules the user can read and edit (docs/policy.md).

Rules are tried in order and the first whose conditions hold decides; no rule means no action.
Errors in a policy file name their line. Event types use GitHub's names; the RFC's spellings
(`github.issue.opened`, `github.issue.comment.created`) are accepted as aliases.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from holon import jsonio, yamlio
from holon.controller.publish_settings import PublishSettings
from holon.duration import parse_duration
from holon.errors import InvalidInput
from holon.intent import IntentType
from holon.price import MAX_PRICES, Price
from holon.yamlio import StrictLoader

Special = Literal["stop", "status", "usage", "recheck"]
Do = Literal[IntentType, Special]
MODEL_ACTIONS: tuple[IntentType, ...] = (
    "run_skill",
    "comment",
    "label",
    "unlabel",
    "request_review",
    "merge",
    "wait",
    "noop",
)  # the vocabulary plus the controller's own actions
ALIASES = {
    "github.issue.opened": "github.issues.opened",
    "github.issue.closed": "github.issues.closed",
    "github.issue.reopened": "github.issues.reopened",
    "github.issue.labeled": "github.issues.labeled",
    "github.issue.comment.created": "github.issue_comment.created",
}


# A policy is a page of rules; more is not one (read bounded: `/dev/zero` is one line).
MAX_POLICY_BYTES = 1024 * 1024


class _Loader(StrictLoader):
    """YAML 1.2 booleans: only true/false. YAML 1.1 would read the key `on:` as True. Strict as
    every user-written YAML is (holon/yamlio.py): a key given twice is refused with its line."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in StrictLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = re.compile(rf"(?=.{{1,253}}\Z){_LABEL}(?:\.{_LABEL})*")


def _listify(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _seconds(value: Any) -> float:
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return parse_duration(value)
    raise ValueError("expected a duration such as 10m")


class ContextSettings(BaseModel):
    """`settings.context`: what a skill run's context holds of people without write access
    (docs/security.md, "Prompt-injection defence"). `mark`: their comments and reviews are
    there, each marked untrusted; `exclude`: left out (the context manifest says how many)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    untrusted: Literal["mark", "exclude"] = "mark"


class Budgets(BaseModel):
    """Model spend limits (docs/budgets.md); None: unlimited. Tokens are input + output; costs
    are USD at `settings.prices`. Reaching a subject or day limit ends the work as waiting on
    the operator, never as a failure; a run's own limits stop that run with the same wait."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_tokens: int | None = Field(default=None, ge=0)
    run_cost_usd: float | None = Field(default=None, ge=0)
    subject_tokens: int | None = Field(default=None, ge=0)
    subject_cost_usd: float | None = Field(default=None, ge=0)
    day_tokens: int | None = Field(default=None, ge=0)
    day_cost_usd: float | None = Field(default=None, ge=0)


class Settings(BaseModel):
    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    authority: Literal["triage", "write", "maintain", "admin"] = "write"
    cooldown: float = 600.0
    auto_review: bool = False
    allow_merge: bool = False
    budget: int = Field(default=10, ge=1)
    # Intents performed for one event; more are held for the next pass (controller/held.py).
    intents_per_pass: int = Field(default=5, ge=1)
    max_attempts: int = Field(default=2, ge=1)
    expire_after: float = 86400.0
    stale_inflight: float = 7200.0
    holon_label: str = Field(default="holon", min_length=1)
    # Bots command Holon only when named here by their exact login (`renovate[bot]`).
    allowed_bots: list[str] = Field(default_factory=list)
    # What holds a merge back (docs/github.md, "Merging"): labels, and title markers.
    hold_labels: list[str] = Field(default_factory=lambda: ["hold", "do-not-merge"])
    wip_markers: list[str] = Field(default_factory=lambda: ["WIP", "Draft:", "[Draft]"])
    # What publishing a settled run may do (holon/controller/publish_settings.py).
    publish: PublishSettings = Field(default_factory=PublishSettings)
    # Who decides (docs/controller-agent.md): the rules below, or a model within the same
    # vocabulary and guardrails; "agent" without a model key falls back to "policy".
    decider: Literal["policy", "agent"] = "policy"
    decider_model: str | None = Field(
        default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$"
    )
    # None: the provider whose key the environment holds (Anthropic first).
    decider_provider: Literal["anthropic", "openai"] | None = None
    # What a model decider may do at all (merge also needs allow_merge). Closing issues and
    # dispatching workflows are left out by default: text a model reads (an issue body anyone
    # wrote) must not be able to close the issue or start a workflow through it.
    decider_actions: list[IntentType] = Field(default_factory=lambda: list(MODEL_ACTIONS))
    # Model spend limits, and the prices costs are counted at (docs/budgets.md). No table is
    # built in: prices change, and a guessed one would be wrong quietly; unpriced tokens are
    # reported as such and count against the token limits only.
    budgets: Budgets = Field(default_factory=Budgets)
    prices: dict[str, Price] = Field(default_factory=dict, max_length=MAX_PRICES)
    # Whose text a skill run's context holds (ContextSettings).
    context: ContextSettings = Field(default_factory=ContextSettings)
    # The hosts links in Holon's comments, reviews, PRs and check runs may point to, exactly
    # (`gist.github.com` is not `github.com`); the repository's own GitHub host is added.
    link_domains: list[str] = Field(default_factory=lambda: ["github.com"])

    @field_validator("link_domains")
    @classmethod
    def _hosts(cls, value: list[str]) -> list[str]:
        for host in value:
            if not _HOST.fullmatch(host):
                raise ValueError(f"{host[:60]!r} is not a host name such as github.com")
        return [host.lower() for host in value]

    @field_validator("cooldown", "expire_after", "stale_inflight", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> float:
        return _seconds(value)


class Also(BaseModel):
    """One more intent a rule decides beside its own `do` (a label with a run, say)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    do: Literal["comment", "label", "unlabel", "request_review", "close_issue", "wait"]
    args: dict[str, Any] = Field(default_factory=dict)


class Rule(BaseModel):
    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str
    on: list[str] = Field(default_factory=list, description="event types; empty: any event")
    command: list[str] = Field(default_factory=list, description="command names; empty: any")
    subject: Literal["issue", "pull_request"] | None = None
    label: str | None = None
    holon_label: bool | None = Field(
        default=None, description="whether the label added or removed is settings.holon_label"
    )
    review_state: str | None = None
    conclusion: list[str] = Field(default_factory=list)
    holon_pr: bool | None = None
    setting: Literal["auto_review", "allow_merge"] | None = None
    # Of a settled skill run (`holon.run.settled`): its outcome, and the skill it ran.
    outcome: list[str] = Field(default_factory=list)
    of_skill: list[str] = Field(default_factory=list)
    do: Do
    skill: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    # A run_skill's inputs besides the subject's: a literal, or `$name` for the event payload's
    # field `name` (`run: $run_id`); a field the payload lacks is left out.
    inputs: dict[str, str] = Field(default_factory=dict)
    # Further intents on the rule's subject, after its own; the controller performs at most
    # settings.intents_per_pass per pass and holds the rest (controller/held.py).
    also: list[Also] = Field(default_factory=list)

    @field_validator("on", "command", "conclusion", "outcome", "of_skill", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return _listify(value)

    @field_validator("on")
    @classmethod
    def _aliases(cls, value: list[str]) -> list[str]:
        return [ALIASES.get(v, v) for v in value]


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    settings: Settings = Field(default_factory=Settings)
    rules: list[Rule] = Field(default_factory=list)


def _node_lines(node: yaml.Node, path: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name: Any = key.value
            out[(*path, name)] = key.start_mark.line + 1
            _node_lines(value, (*path, name), out)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _node_lines(item, (*path, index), out)


def parse_policy(text: str, source: str = "policy.yaml") -> Policy:
    """Parse and validate a policy; every problem is one line naming where it is."""
    try:
        # One parse: the node tree gives the lines of errors, the same tree the data.
        node, data = yamlio.load_document(text, _Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise InvalidInput(
            f"{source}{line}: invalid YAML ({getattr(exc, 'problem', 'syntax')})"
        ) from None
    except RecursionError:  # nesting deeper than Python's stack: bad input, not a bug
        raise InvalidInput(f"{source}: invalid YAML (nested too deeply)") from None
    if not isinstance(data, dict) or node is None:
        raise InvalidInput(f"{source}: expected a mapping with `version`, `settings`, `rules`")
    lines: dict[tuple[Any, ...], int] = {}
    _node_lines(node, (), lines)
    try:
        return Policy.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        loc = tuple(first["loc"])
        # The deepest location the YAML tree knows about gives the line.
        number = next((lines[loc[:n]] for n in range(len(loc), -1, -1) if loc[:n] in lines), 1)
        where = ".".join(str(p) for p in loc)
        message = first["msg"].removeprefix("Value error, ")
        raise InvalidInput(f"{source} line {number}: {where}: {message}") from None


def load_policy(path: Path | None) -> Policy:
    if path is None:
        text = resources.files("holon.controller").joinpath("default_policy.yaml").read_text()
        return parse_policy(text, "built-in policy")
    return parse_policy(jsonio.read_text(str(path), MAX_POLICY_BYTES, "policy"), str(path))
