"""holon/executor/executor.py: dispatch by intent type; a missing handler or one that raises is a
failed attempt whose recorded error names what went wrong, never what the exception quoted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from holon.executor.executor import Executor, build_executor
from holon.executor.result import ActionResult
from holon.intent import INTENT_TYPES, ActionIntent
from tests.executor.conftest import ARGS, AT, REPO, Recording, clock, intent
from tests.gateway.conftest import example

TOKEN = "ghp_" + "0123456789abcdefABCDEF" * 2
# A line only the raw payload holds: the comment's body.
PAYLOAD_BODY = "please look at this, it is urgent"


def test_each_intent_goes_to_the_handler_of_its_type() -> None:
    label, comment = Recording(), Recording()
    executor = Executor({"label": label, "comment": comment}, clock)
    act = intent("label")
    result = executor.execute(act, 3)
    assert (label.calls, comment.calls) == ([(act.id, 3)], [])
    assert (result.id, result.status, result.attempt) == (f"{act.id}:3", "succeeded", 3)


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry_run", "live"])
def test_every_type_in_the_vocabulary_has_a_handler(dry_run: bool) -> None:
    executor = build_executor(dry_run=dry_run, clock=clock, run_skill=None)
    assert sorted(executor.handlers) == sorted(INTENT_TYPES)


def test_a_type_without_a_handler_is_a_failed_attempt_saying_so() -> None:
    act = intent("comment")
    result = Executor({"label": Recording()}, clock).execute(act, 1)
    assert (result.status, result.error) == ("failed", "no handler for comment")
    assert (result.intent_id, result.subject, result.attempt, result.at) == (
        act.id,
        "issue:1",
        1,
        AT,
    )
    assert (result.dry_run, result.effect) == (False, None)


def test_a_type_outside_the_vocabulary_reaches_no_handler() -> None:
    # An intent cannot be validated with such a type; one built around validation still
    # reaches nothing, not even the dry-run handler that accepts every GitHub effect.
    rogue = intent("noop").model_copy(update={"type": "deploy"})
    result = build_executor(dry_run=True, clock=clock, run_skill=None).execute(rogue, 1)
    assert (result.status, result.error, result.dry_run, result.effect) == (
        "failed",
        "no handler for deploy",
        False,
        None,
    )


class Raising:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc
        self.calls = 0

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        self.calls += 1
        raise self.exc


def test_a_handler_that_raises_is_a_failed_attempt_naming_the_error() -> None:
    act = intent("comment")
    handler = Raising(RuntimeError("boom"))
    result = Executor({"comment": handler}, clock).execute(act, 2)
    assert handler.calls == 1
    assert (result.id, result.status, result.attempt) == (f"{act.id}:2", "failed", 2)
    assert result.error == "RuntimeError raised by the comment handler"


def _payload() -> dict[str, Any]:
    payload = example("issue_comment", "created")
    payload["comment"]["body"] = PAYLOAD_BODY
    return payload


def _validation_error() -> Exception:
    class Comment(BaseModel):
        body: int

    try:
        Comment.model_validate(_payload()["comment"])  # pydantic quotes the input it refused
    except Exception as exc:
        return exc
    raise AssertionError("the payload validated")


RAISED = {
    "url_with_token": RuntimeError(
        f"POST https://x-access-token:{TOKEN}@api.github.com/repos/{REPO}/issues/1/comments: 401"
    ),
    "payload_in_message": ValueError(f"unexpected event {json.dumps(_payload())}"),
    "validation_error_quoting_input": _validation_error(),
    "key_error_of_a_secret": KeyError(TOKEN),
}


@pytest.mark.parametrize("exc", RAISED.values(), ids=RAISED.keys())
def test_a_raising_handlers_recorded_error_holds_no_secret_or_payload(exc: Exception) -> None:
    # The exception's own text is precisely what cannot be trusted: it travels into the actions
    # journal, the state and the subject's closure (a public comment).
    assert TOKEN in str(exc) or PAYLOAD_BODY in str(exc)  # the case is a real one
    executor = Executor({"comment": Raising(exc)}, clock)
    recorded = executor.execute(intent("comment"), 1)
    assert recorded.status == "failed"
    assert recorded.error == f"{exc.__class__.__name__} raised by the comment handler"
    line = json.dumps(recorded.model_dump(mode="json"))
    assert TOKEN not in line
    assert PAYLOAD_BODY not in line


def test_a_raising_handlers_traceback_goes_to_the_error_log_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOLON_LOG_DIR", str(tmp_path))
    executor = Executor({"comment": Raising(RAISED["url_with_token"])}, clock)
    executor.execute(intent("comment"), 1)
    log = (tmp_path / "holon-error.log").read_text()
    assert "RuntimeError" in log
    assert "raise self.exc" in log  # the traceback itself, for whoever debugs the handler
    assert TOKEN not in log


def test_args_table_covers_the_vocabulary() -> None:
    # The handler tests walk ARGS: a type missing from it would go untested.
    assert sorted(ARGS) == sorted(INTENT_TYPES)
