"""Evidence items validated into dictionaries, for the streamed derivation's hot path.

Building a frozen model per item is most of what validating evidence costs (measured: 10 us
per item as models, 2.8 us as these dictionaries, 2.2 us for json.loads of the same bytes).
The items a derivation mostly reads past (text, claims, waits, work items, postures) are
described here with the same fields and constraints as their models in
holon/closure/evidence.py, and `complete_wait` is `WaitItem._complete`; the other kinds (run,
task, interruption) are only told apart here and validated by their models. Whatever these
refuse is validated by the models again, whose message is the one reported; tests check both
accept the same items (tests/closure/test_stream.py).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import AwareDatetime, ConfigDict, Field, TypeAdapter
from typing_extensions import TypedDict

_STRICT = ConfigDict(extra="forbid")
_LOOSE = ConfigDict(extra="allow")


class _Question(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    id: Annotated[str, Field(min_length=1)]
    text: Annotated[str, Field(min_length=1)]


class _Base(TypedDict):
    __pydantic_config__ = _STRICT  # type: ignore[misc]
    id: Annotated[str, Field(min_length=1)]
    source: Annotated[str, Field(min_length=1)]
    at: AwareDatetime


class _Text(_Base):
    kind: Literal["text"]
    text: str


class _Claim(_Base):
    kind: Literal["claim"]
    text: str


class _Work(_Base):
    kind: Literal["work_item"]
    state: NotRequired[Literal["runnable", "done"]]
    summary: NotRequired[str | None]


class _Posture(_Base):
    kind: Literal["posture"]
    posture: Literal["active", "idle", "sleeping"]


class _Wait(_Base):
    kind: Literal["wait"]
    on: NotRequired[Literal["timer", "external", "operator", "task"] | None]
    until: NotRequired[AwareDatetime | None]
    condition: NotRequired[str | None]
    question: NotRequired[_Question | None]
    reason: NotRequired[str | None]
    task_id: NotRequired[str | None]
    resolved: NotRequired[bool]


class _Run(TypedDict):
    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    kind: Literal["run"]


class _Task(TypedDict):
    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    kind: Literal["task"]


class _Interruption(TypedDict):
    __pydantic_config__ = _LOOSE  # type: ignore[misc]
    kind: Literal["interruption"]


FastItem = Annotated[
    _Text | _Claim | _Work | _Posture | _Wait | _Run | _Task | _Interruption,
    Field(discriminator="kind"),
]
# Kinds whose dictionary is only told apart here: their model validates them.
MODEL_KINDS = frozenset({"run", "task", "interruption"})

_BATCH: TypeAdapter[list[dict[str, Any]]] | None = None


def batch_adapter() -> TypeAdapter[list[dict[str, Any]]]:
    global _BATCH
    if _BATCH is None:
        _BATCH = TypeAdapter(list[FastItem])  # type: ignore[arg-type]
    return _BATCH


def complete_wait(item: dict[str, Any]) -> bool:
    """`WaitItem._complete` on a validated dictionary: whether the wait says what it waits on."""
    on = item.get("on")
    if on is None:
        return False
    if on == "timer":
        return item.get("until") is not None
    if on == "external":
        return bool(item.get("condition"))
    if on == "operator":
        return item.get("question") is not None or bool(item.get("reason"))
    return bool(item.get("task_id"))
