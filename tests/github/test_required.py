"""The checks verdict on one sha (holon/github/required.py): required checks from rulesets, or
everything on the sha when none are required; pending is not green; Holon's own job is left out."""

from __future__ import annotations

from typing import Any

import pytest

from holon.github.access import CheckRun, Status
from holon.github.required import required_checks, verdict

SHA = "c" * 40


def _run(
    name: str, status: str = "completed", conclusion: str | None = "success", **kw: Any
) -> CheckRun:
    return CheckRun(
        name=name,
        status=status,
        conclusion=conclusion if status == "completed" else None,
        app_id=kw.get("app_id", 15368),
        details_url=kw.get("details_url"),
    )


def _rule(*checks: tuple[str, int | None]) -> dict[str, Any]:
    items = [
        {"context": c} if app is None else {"context": c, "integration_id": app}
        for c, app in checks
    ]
    return {
        "type": "required_status_checks",
        "ruleset_id": 1,
        "parameters": {
            "required_status_checks": items,
            "strict_required_status_checks_policy": False,
        },
    }


OTHER_RULE = {
    "type": "commit_message_pattern",
    "parameters": {"operator": "starts_with", "pattern": "x"},
}


def test_required_checks_are_read_from_every_rule_that_requires_some() -> None:
    rules = [OTHER_RULE, _rule(("ci", None)), _rule(("ci", None), ("deploy", 42)), {"type": 3}]
    assert required_checks(rules) == [("ci", None), ("deploy", 42)]
    # Malformed parameters are no requirement (and no crash).
    assert required_checks([{"type": "required_status_checks", "parameters": "x"}]) == []


@pytest.mark.parametrize("conclusion", ["success", "neutral", "skipped"])
def test_a_required_check_passes_on_success_neutral_or_skipped(conclusion: str) -> None:
    found = verdict([_rule(("ci", None))], [_run("ci", conclusion=conclusion)], [], SHA)
    assert (found.state, found.green) == ("green", True)


@pytest.mark.parametrize(
    "conclusion", ["failure", "cancelled", "timed_out", "action_required", "stale", None]
)
def test_any_other_conclusion_is_red(conclusion: str | None) -> None:
    found = verdict([_rule(("ci", None))], [_run("ci", conclusion=conclusion)], [], SHA)
    assert (found.state, found.green) == ("red", False)
    assert found.reason == f"'ci' failed on {SHA[:12]}"


@pytest.mark.parametrize("status", ["queued", "in_progress", "waiting", "requested", "pending"])
def test_a_required_check_not_completed_is_pending_not_green(status: str) -> None:
    found = verdict([_rule(("ci", None))], [_run("ci", status=status)], [], SHA)
    assert (found.state, found.green) == ("pending", False)
    assert found.reason == f"'ci' not passed yet on {SHA[:12]}"


def test_a_required_check_that_never_reported_is_pending() -> None:
    found = verdict([_rule(("ci", None), ("lint", None))], [_run("lint")], [], SHA)
    assert (found.state, found.reason) == ("pending", f"'ci' not passed yet on {SHA[:12]}")


def test_only_required_checks_count_when_some_are_required() -> None:
    runs = [_run("ci"), _run("flaky-optional", conclusion="failure"), _run("slow", "in_progress")]
    assert verdict([_rule(("ci", None))], runs, [], SHA).green is True


def test_a_check_and_a_status_of_one_name_are_both_required() -> None:
    rules = [_rule(("ci", None))]
    assert verdict(rules, [], [Status("ci", "success")], SHA).green is True
    assert verdict(rules, [_run("ci")], [Status("ci", "failure")], SHA).state == "red"
    assert verdict(rules, [_run("ci")], [Status("ci", "pending")], SHA).state == "pending"
    assert verdict(rules, [_run("ci")], [Status("ci", "error")], SHA).state == "red"


def test_a_check_pinned_to_an_app_counts_only_from_that_app() -> None:
    rules = [_rule(("ci", 42))]
    assert verdict(rules, [_run("ci", app_id=7)], [], SHA).state == "pending"
    assert verdict(rules, [_run("ci", app_id=42)], [], SHA).green is True
    # A status cannot show which app set it: it does not stand in for the pinned check.
    assert verdict(rules, [], [Status("ci", "success")], SHA).state == "pending"


def test_red_outweighs_pending() -> None:
    rules = [_rule(("a", None), ("b", None))]
    found = verdict(rules, [_run("a", "in_progress"), _run("b", conclusion="failure")], [], SHA)
    assert found.state == "red"


def test_without_required_checks_everything_on_the_sha_must_pass() -> None:
    assert verdict([OTHER_RULE], [_run("ci"), _run("lint")], [Status("x", "success")], SHA).green
    assert verdict([], [_run("ci"), _run("lint", conclusion="failure")], [], SHA).state == "red"
    assert verdict([], [_run("ci"), _run("lint", "queued")], [], SHA).state == "pending"
    assert verdict([], [_run("ci")], [Status("x", "pending")], SHA).state == "pending"


def test_without_required_checks_a_sha_nothing_checked_is_not_green() -> None:
    found = verdict([], [], [], SHA)
    assert (found.state, found.green) == ("pending", False)
    assert found.reason == f"no check has reported on {SHA[:12]} yet"


def test_holons_own_job_is_left_out() -> None:
    mine = _run("holon", "in_progress", details_url="https://github.com/o/r/actions/runs/9/job/1")

    def own(run: CheckRun) -> bool:
        return "/actions/runs/9/" in (run.details_url or "")

    assert verdict([], [_run("ci"), mine], [], SHA, own=own).green is True
    # ...even when it is the only run: then nothing else has checked the sha.
    assert verdict([], [mine], [], SHA, own=own).state == "pending"
    # Required, it never reports for Holon: the merge waits (do not require Holon's own job).
    assert verdict([_rule(("holon", None))], [mine], [], SHA, own=own).state == "pending"


def test_names_in_reasons_are_quoted_cut_and_counted() -> None:
    runs = [_run(f"job-{i}", conclusion="failure") for i in range(5)] + [_run("x" * 300, "queued")]
    found = verdict([], runs, [], SHA)
    assert found.reason == f"'job-0', 'job-1', 'job-2' and 2 more failed on {SHA[:12]}"
    pending = verdict([], [_run("a\nb" + "y" * 300, "queued")], [], SHA)
    assert "\n" not in pending.reason
    assert len(pending.reason) < 120
