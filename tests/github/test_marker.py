"""The hidden marker: written in one safe alphabet, read strictly, never crashed by hostile text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from holon.closure.derive import derive_closure
from holon.closure.evidence import parse_evidence
from holon.closure.handoff import HandoffContext, build_handoff, render_handoff
from holon.closure.mapping import report_for
from holon.github.marker import MAX_VALUE, Marker, format_marker, parse_marker, safe

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "closure"
SAFE = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/-",
    min_size=1,
    max_size=40,
)
KIND = SAFE.map(lambda s: s.replace(":", "_"))
LINE = "<!-- holon:v1 subject=issue:42 workflow=holon skill=github-issue-solve -->"


def test_the_documented_line() -> None:
    assert format_marker("issue", "42", "holon", "github-issue-solve") == LINE
    assert parse_marker(f"Done.\n\n{LINE}\n") == Marker(
        "issue", "42", "holon", "github-issue-solve"
    )
    assert getattr(parse_marker(LINE), "subject", None) == "issue:42"
    assert format_marker("repository", "octo/hello", "holon") == (
        "<!-- holon:v1 subject=repository:octo/hello workflow=holon skill=none -->"
    )
    assert parse_marker(format_marker("ref", "refs/heads/main", "w")) == Marker(
        "ref", "refs/heads/main", "w"
    )


def test_it_reads_the_marker_the_handoff_comment_writes() -> None:
    closure = derive_closure(
        parse_evidence((EXAMPLES / "completed_success.evidence.json").read_bytes())
    )
    context = HandoffContext.model_validate(
        {"subject": {"kind": "pull_request", "id": "7"}, "workflow": "holon ci", "skill": "review"}
    )
    comment = render_handoff(build_handoff(closure, report_for(closure), context), "comment")
    assert parse_marker(comment) == Marker("pull_request", "7", "holon_ci", "review")


@given(KIND, SAFE, SAFE, st.one_of(st.none(), SAFE.filter(lambda s: s != "none")))
def test_safe_values_round_trip(kind: str, id: str, workflow: str, skill: str | None) -> None:
    assert parse_marker(format_marker(kind, id, workflow, skill)) == Marker(
        kind, id, workflow, skill
    )


@given(st.text(min_size=1, max_size=60), st.text(min_size=1, max_size=60), st.text(min_size=1))
def test_any_value_is_reduced_to_the_safe_alphabet(kind: str, id: str, workflow: str) -> None:
    if len(workflow) > MAX_VALUE:
        with pytest.raises(ValueError, match="1 to 256"):
            format_marker(kind, id, workflow)
        return
    line = format_marker(kind, id, workflow)
    assert line.count("-->") == 1
    assert "\n" not in line
    found = parse_marker(line)
    assert found == Marker(safe(kind).replace(":", "_"), safe(id), safe(workflow))


@given(st.text(), st.text())
def test_hostile_text_around_a_marker_neither_crashes_nor_misleads(before: str, after: str) -> None:
    assert parse_marker(before) is None or "<!-- holon:v1 " in before
    body = f"{before.replace('<!--', '')}{LINE}{after.replace('<!--', '')}"
    assert parse_marker(body) == Marker("issue", "42", "holon", "github-issue-solve")


@pytest.mark.parametrize(
    "body",
    [
        None,
        42,
        b"<!-- holon:v1 subject=issue:42 workflow=holon skill=s -->",
        "",
        "<!-- holon:v1 subject=issue:42 workflow=holon skill=s",  # never closed
        "<!-- holon:v1 subject=issue:42 workflow=holon -->",  # no skill
        "<!-- holon:v2 subject=issue:42 workflow=holon skill=s -->",  # another version
        "<!-- HOLON:v1 subject=issue:42 workflow=holon skill=s -->",
        "<!--  holon:v1 subject=issue:42 workflow=holon skill=s -->",  # two spaces
        "<!-- holon:v1 subject=issue workflow=holon skill=s -->",  # no id
        "<!-- holon:v1 subject=issue:4 2 workflow=holon skill=s -->",  # a space in a value
        "<!-- holon:v1 subject=issue:42 workflow=ho<b>lon skill=s -->",
        "<!-- holon:v1 subject=issue:42 workflow=holon skill=s\u200b -->",
        "<!-- holon:v1 subject=issue:42 skill=s workflow=holon -->",  # reordered
        "<!-- holon:v1 subject=issue:42 workflow=holon skill=s extra=1 -->",
        "<!-- holon:v1 subject=issue:" + "9" * (MAX_VALUE + 1) + " workflow=w skill=s -->",
        # Two markers that disagree: neither is believed.
        LINE + "\n<!-- holon:v1 subject=issue:43 workflow=holon skill=github-issue-solve -->",
        "<!-- holon:v1 " * 5000,
    ],
)
def test_anything_but_one_well_formed_marker_is_none(body: object) -> None:
    assert parse_marker(body) is None


def test_the_same_marker_twice_is_one_and_a_code_block_does_not_hide_it() -> None:
    # Whether it counts is the caller's decision, by the author's login (docs/github.md).
    assert parse_marker(f"{LINE}\n{LINE}") is not None
    assert parse_marker(f"```\n{LINE}\n```") == Marker("issue", "42", "holon", "github-issue-solve")
