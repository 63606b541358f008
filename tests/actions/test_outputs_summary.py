"""The step's outputs, its exit code and its summary, from a `StepResult` (pure)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from holon.actions.outputs import NAMES, outputs_of
from holon.actions.result import Line, RunRow, StepResult, step_exit
from holon.actions.summary import LABEL_LIMIT, mermaid, render_summary
from holon.closure.derive import Closure
from holon.closure.handoff import ArtifactLink, HandoffContext, Subject, build_handoff
from holon.closure.record import ClosureRecord

ROWS: dict[str, dict[str, Any]] = {
    "completed": {"closure_outcome": "completed", "rule": "completion"},
    "failed": {"closure_outcome": "failed", "rule": "terminal_failure"},
    "interrupted": {
        "closure_outcome": "waiting",
        "waiting_reason": "awaiting_operator_input",
        "operator_wait": "interruption",
        "rule": "blocking_wait",
    },
    "external": {
        "closure_outcome": "waiting",
        "waiting_reason": "awaiting_external_change",
        "rule": "blocking_wait",
    },
}


def closure(kind: str, unit: str = "issue:1") -> ClosureRecord:
    fields = {
        "unit": unit,
        "runtime_posture": "idle",
        "rule_number": 1,
        "deciding_items": ["run:x"],
        "detail": f"{kind} detail",
        **ROWS[kind],
    }
    return ClosureRecord.of(Closure.model_validate(fields))


def test_every_output_is_written_even_when_there_was_no_work() -> None:
    outputs = outputs_of(StepResult(exit_code=0))
    assert list(outputs) == list(NAMES)
    assert outputs == {**dict.fromkeys(NAMES, ""), "runs": "[]"}


def test_the_outputs_describe_the_events_subject() -> None:
    record = closure("interrupted")
    handoff = build_handoff(
        record.closure(), record.report(), HandoffContext(subject=Subject(kind="issue", id="1"))
    )
    result = StepResult(
        exit_code=0,
        subject="issue:1",
        closures={"issue:1": record, "pull_request:2": closure("failed", "pull_request:2")},
        runs=[RunRow("act_1", "github-issue-solve", "issue:1", "cancelled")],
        comment_url="https://github.com/o/r/issues/1#issuecomment-9",
        handoff=handoff,
        extra_outputs={"has_runs": "true"},
    )
    outputs = result.outputs
    assert outputs["closure_outcome"] == "waiting"
    assert outputs["waiting_reason"] == "awaiting_operator_input"
    assert outputs["lifecycle_outcome"] == "userinterlude"
    assert json.loads(outputs["runs"]) == [
        {
            "intent": "act_1",
            "skill": "github-issue-solve",
            "subject": "issue:1",
            "status": "cancelled",
            "outcome": "",
            "output": "",
        }
    ]
    assert outputs["comment_url"].endswith("issuecomment-9")
    assert json.loads(outputs["handoff"])["outcome"] == "userinterlude"
    assert outputs["has_runs"] == "true"


def test_without_the_events_subject_the_worst_closure_answers() -> None:
    result = StepResult(
        exit_code=0,
        subject="issue:9",
        closures={"issue:1": closure("completed"), "issue:2": closure("failed", "issue:2")},
    )
    assert result.closure_subject == "issue:2"
    assert result.outputs["closure_outcome"] == "failed"


@pytest.mark.parametrize(
    ("kind", "fail_on_waiting", "code"),
    [
        ("completed", False, 0),
        ("failed", False, 1),
        ("interrupted", False, 0),
        ("external", False, 0),
        ("completed", True, 0),
        ("interrupted", True, 1),
        ("external", True, 1),
        ("failed", True, 1),
    ],
)
def test_the_exit_code_is_the_closures_job_conclusion(
    kind: str, fail_on_waiting: bool, code: int
) -> None:
    assert step_exit(closure(kind), fail_on_waiting=fail_on_waiting, failed=False) == code


def test_no_work_exits_0_and_a_failure_inside_holon_exits_1() -> None:
    assert step_exit(None, fail_on_waiting=True, failed=False) == 0
    assert step_exit(closure("completed"), fail_on_waiting=False, failed=True) == 1


HOSTILE = 'Crash"] --> pwned["x`]\n```\n| a | b |\n<script>@octocat [x](javascript:alert(1)) #1;'


def _diagram(text: str) -> str:
    (body,) = re.findall(r"```mermaid\n(.*?)\n```\n", text, re.S)
    return body


def test_a_hostile_title_breaks_neither_the_diagram_nor_the_table() -> None:
    result = StepResult(
        exit_code=1,
        event="github.issue_comment.created",
        subject="issue:1",
        title=HOSTILE,
        closures={"issue:1": closure("failed")},
        decided=[Line(f"run_skill on {HOSTILE}", HOSTILE)],
        refused=[Line(HOSTILE, HOSTILE)],
        runs=[RunRow("act_1", HOSTILE, "issue:1", "failed", "failure", HOSTILE)],
        notes=[HOSTILE],
    )
    text = render_summary(result)
    # One fence opens the diagram and one closes it: the title's fence is not a fence.
    assert text.count("```") == 2
    lines = _diagram(text).splitlines()
    assert lines[0] == "flowchart LR"
    for line in lines[1:]:
        # Every node label is one quoted string without a quote, backtick or bracket inside.
        for label in re.findall(r'\["(.*?)"\]', line):
            assert not set(label) & set('"`[]<>\n|')
        stripped = re.sub(r'\["[^"]*"\]', "", line)
        assert re.fullmatch(r"  \w+( (-->|-\. refused \.->) \w+)?", stripped), line
    # The table rows keep their five cells: a title's pipe is escaped.
    rows = [x for x in text.splitlines() if x.startswith("| ") and "github" in x]
    assert all(re.sub(r"\\\|", "", row).count("|") == 6 for row in rows)
    assert "<script>" not in text
    assert "@octocat" not in text  # no mention (a zero-width space follows the @)
    assert "](javascript:" not in text


def test_a_label_is_bounded_and_its_entities_cannot_be_forged() -> None:
    label = mermaid("x" * 500)
    assert len(label) == LABEL_LIMIT + 2
    assert mermaid("#quot;") == '"#35;quot#59;"'
    assert mermaid('a"b') == '"a#34;b"'


def test_the_summary_says_what_it_decided_refused_and_made() -> None:
    record = closure("completed")
    context = HandoffContext(
        subject=Subject(kind="issue", id="1"),
        artifacts=[ArtifactLink(name="pull request #2", url="https://github.com/o/r/pull/2")],
        state=["commit abc"],
    )
    handoff = build_handoff(record.closure(), record.report(), context)
    result = StepResult(
        exit_code=0,
        event="github.issue_comment.created",
        subject="issue:1",
        closures={"issue:1": record},
        runs=[RunRow("act_1", "github-issue-solve", "issue:1", "succeeded", "success", "/r")],
        decided=[Line("run_skill github-issue-solve on issue:1", "rule solve matched")],
        refused=[Line("label on issue:1", "budget: spent")],
        handoff=handoff,
        comment_url="https://github.com/o/r/issues/1#issuecomment-3",
    )
    text = render_summary(result)
    assert "| issue\\:1 | completed |  | finished | success |" in text
    assert "[pull request \\#2](https://github.com/o/r/pull/2)" in text
    assert "rule solve matched" in text
    assert "budget\\: spent" in text
    assert "(https://github.com/o/r/issues/1#issuecomment-3)" in text
    assert "### Evidence" in text
    assert 'closure["completed (finished)"]' in text
