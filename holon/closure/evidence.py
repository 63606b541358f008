"""Closure evidence: the facts a runtime records, each with a source and a time (Result Closure).

Evidence is what the runtime observed, not what the assistant said: assistant completion claims
and free text are recorded too, but only so the derivation can show which claims it rejected.
Items form a discriminated union on `kind`; an `Evidence` document is validated as a whole, so
contradictions (a wait on a task nobody created, a duplicate id) are refused with one line naming
the offending item.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from holon import jsonio
from holon.errors import InvalidInput

ClosureOutcome = Literal["completed", "continuable", "failed", "waiting"]
WaitingReason = Literal[
    "awaiting_operator_input",
    "awaiting_external_change",
    "awaiting_task_result",
    "awaiting_timer",
]
RunState = Literal["running", "completed", "failed", "timed_out", "cancelled", "interrupted"]
RunOutcome = Literal["success", "failure", "needs_human"]


class _Item(BaseModel):
    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    id: str = Field(min_length=1, description="Unique within the evidence document.")
    source: str = Field(
        min_length=1, description="Who recorded it: runner, controller, github, ..."
    )
    at: AwareDatetime


class ChildClosure(BaseModel):
    """A child task's own derived closure, fed back to its parent."""

    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    outcome: ClosureOutcome
    waiting_reason: WaitingReason | None = None

    @model_validator(mode="after")
    def _reason_only_when_waiting(self) -> ChildClosure:
        if self.outcome == "waiting" and self.waiting_reason is None:
            raise ValueError("a waiting closure needs a waiting_reason")
        if self.outcome != "waiting" and self.waiting_reason is not None:
            raise ValueError(f"waiting_reason {self.waiting_reason} on a {self.outcome} closure")
        return self


class RunItem(_Item):
    """The unit's own execution pass, as the runtime saw it end (or still running)."""

    kind: Literal["run"] = "run"
    state: RunState
    outcome: RunOutcome | None = Field(
        default=None, description="The manifest outcome the runner validated, if any."
    )
    reason: str | None = None


class TaskItem(_Item):
    """A child task this unit created; it closes on its own and feeds its state back."""

    kind: Literal["task"] = "task"
    task_id: str = Field(min_length=1)
    state: RunState
    outcome: RunOutcome | None = None
    blocking: bool = Field(
        default=False, description="The parent cannot finish without this task's result."
    )
    closure: ChildClosure | None = None


class Question(BaseModel):
    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)


class WaitItem(_Item):
    """An explicit wait primitive recorded by the runtime."""

    kind: Literal["wait"] = "wait"
    on: Literal["timer", "external", "operator", "task"] | None = Field(
        default=None, description="What the wait is on; a wait without it is refused."
    )
    until: AwareDatetime | None = Field(default=None, description="timer: when it fires")
    condition: str | None = Field(default=None, description="external: what is watched")
    question: Question | None = Field(default=None, description="operator: the one question")
    reason: str | None = Field(default=None, description="operator: what must be decided")
    task_id: str | None = Field(default=None, description="task: the task waited on")
    resolved: bool = False

    @model_validator(mode="after")
    def _complete(self) -> WaitItem:
        needs = {
            None: "a reason: set `on` to timer, external, operator or task",
            "timer": "`until`" if self.until is None else None,
            "external": "`condition`" if not self.condition else None,
            "operator": "a `question` or a `reason`"
            if self.question is None and not self.reason
            else None,
            "task": "`task_id`" if not self.task_id else None,
        }
        missing = needs[self.on]
        if missing is not None:
            on = f"{self.on} " if self.on else ""
            raise ValueError(f"{on}wait without {missing}")
        return self


class InterruptionItem(_Item):
    """The user stopped the work: a pause, a `/holon stop`, a cancelled workflow run."""

    kind: Literal["interruption"] = "interruption"
    by: Literal["pause", "stop_command", "cancelled_workflow"]
    actor: str | None = None
    restart: str | None = Field(default=None, description="How to restart, for the handoff.")


class WorkItem(_Item):
    """Work the runtime can pick up again by itself."""

    kind: Literal["work_item"] = "work_item"
    state: Literal["runnable", "done"] = "runnable"
    summary: str | None = None


class ClaimItem(_Item):
    """The assistant claims completion: evidence, never authority."""

    kind: Literal["claim"] = "claim"
    text: str


class TextItem(_Item):
    """Assistant free text: recorded, never read by the derivation."""

    kind: Literal["text"] = "text"
    text: str


class PostureItem(_Item):
    """The runtime's own report of its posture (it may stay awake after a waiting result)."""

    kind: Literal["posture"] = "posture"
    posture: Literal["active", "idle", "sleeping"]


EvidenceItem = Annotated[
    RunItem
    | TaskItem
    | WaitItem
    | InterruptionItem
    | WorkItem
    | ClaimItem
    | TextItem
    | PostureItem,
    Field(discriminator="kind"),
]


class Unit(BaseModel):
    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: Literal["turn", "task"] = "turn"
    id: str = Field(default="unit", min_length=1)


class Evidence(BaseModel):
    """All evidence about one unit of work (a turn, or a task)."""

    # Built on first use: a pass with no work for it never validates one.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    unit: Unit = Field(default_factory=Unit)
    items: list[EvidenceItem] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Evidence:
        seen: set[str] = set()
        tasks = {item.task_id for item in self.items if isinstance(item, TaskItem)}
        for item in self.items:
            if item.id in seen:
                raise ValueError(f"evidence item {item.id!r}: duplicate id")
            seen.add(item.id)
            if isinstance(item, WaitItem) and item.on == "task" and item.task_id not in tasks:
                raise ValueError(
                    f"evidence item {item.id!r} (wait): waits on task {item.task_id!r}, "
                    "which no task item creates"
                )
        runs = [item.id for item in self.items if isinstance(item, RunItem)]
        if len(runs) > 1:
            raise ValueError(
                f"evidence item {runs[1]!r} (run): a unit has one run item, already {runs[0]!r}"
            )
        return self


def _describe(error: ValidationError, raw: object) -> str:
    """One line naming the offending item by its id, never echoing values."""
    first = error.errors(include_input=False, include_url=False)[0]
    loc = list(first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    if len(loc) >= 2 and loc[0] == "items" and isinstance(loc[1], int):
        items = raw.get("items") if isinstance(raw, dict) else None
        item = items[loc[1]] if isinstance(items, list) and loc[1] < len(items) else None
        return _item_line(loc[1], item, loc[2:], message)
    if message.startswith("evidence item"):
        return message
    where = ".".join(str(p) for p in loc)
    return f"{where}: {message}" if where else message


def describe_item(error: ValidationError, index: int, item: object) -> str:
    """The line `_describe` gives for an item (0-based `index`) validated on its own."""
    first = error.errors(include_input=False, include_url=False)[0]
    return _item_line(index, item, list(first["loc"]), first["msg"].removeprefix("Value error, "))


def _item_line(index: int, item: object, loc: list[Any], message: str) -> str:
    ident = item.get("id") if isinstance(item, dict) else None
    kind = item.get("kind") if isinstance(item, dict) else None
    name = f"evidence item {ident!r}" if ident else f"evidence item #{index + 1}"
    if kind:
        name += f" ({kind})"
    rest = [str(p) for p in loc if p != kind]
    field = f" {'.'.join(rest)}:" if rest else ""
    return f"{name}:{field} {message}"


def parse_evidence(raw: bytes | str, source: str = "evidence") -> Evidence:
    """Parse an evidence document (JSON); every problem is one line naming the item."""
    if isinstance(raw, str):  # a lone surrogate becomes invalid UTF-8, refused as such
        raw = raw.encode("utf-8", "surrogatepass")
    # One pass, bytes straight to models: about half the cost of parsing to Python objects and
    # validating those (bench.closure). Only a document that passes takes it; anything refused,
    # and a bare list or a surrogate escape (jsonio's own rules), is read again below, so what
    # is refused, and how it is said, is unchanged.
    if raw.lstrip()[:1] == b"{" and not jsonio.has_surrogate_escape(raw):
        try:
            return Evidence.model_validate_json(raw)
        except ValidationError:
            pass
    data = jsonio.loads(raw, source)
    if isinstance(data, list):
        data = {"items": data}
    if not isinstance(data, dict):
        raise InvalidInput(f"{source}: expected a JSON object with `items`")
    return validate_evidence(data, source)


def validate_evidence(data: dict[str, Any], source: str) -> Evidence:
    try:
        return Evidence.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(f"{source}: {_describe(exc, data)}") from None
