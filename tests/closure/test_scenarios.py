"""The hand-written scenario table in docs/examples/closure/: every rule, reason and table row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from holon.cli.main import main
from holon.closure.derive import RULES, derive_closure
from holon.closure.evidence import parse_evidence
from holon.closure.mapping import TABLE
from holon.closure.record import ClosureRecord

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "closure"
NAMES = sorted(p.name.removesuffix(".evidence.json") for p in EXAMPLES.glob("*.evidence.json"))


def _expected(name: str) -> dict[str, Any]:
    data = json.loads((EXAMPLES / f"{name}.expected.json").read_text())
    data.pop("description")
    return data


def _derive(name: str, rules: Any = RULES) -> dict[str, Any]:
    evidence = parse_evidence((EXAMPLES / f"{name}.evidence.json").read_bytes())
    return ClosureRecord.of(derive_closure(evidence, rules)).model_dump(mode="json")


def test_every_example_has_an_expectation() -> None:
    assert len(NAMES) >= 30
    expected = sorted(
        p.name.removesuffix(".expected.json") for p in EXAMPLES.glob("*.expected.json")
    )
    assert expected == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_scenario(name: str) -> None:
    result = _derive(name)
    expected = _expected(name)
    assert {k: result[k] for k in expected} == expected


@pytest.mark.parametrize("name", NAMES)
def test_cli_exit_code_is_the_tables(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["closure", "derive", str(EXAMPLES / f"{name}.evidence.json"), "--explain"])
    printed = json.loads(capsys.readouterr().out)
    assert code == _expected(name)["exit_code"] == printed["exit_code"]
    assert printed["rule"] in printed["explain"]


def test_table_covers_every_rule_reason_and_row() -> None:
    results = [_derive(name) for name in NAMES]
    rules = {r["rule"] for r in results}
    assert rules == {name for name, _ in RULES} | {"no_closure_evidence"}
    reasons = {r["waiting_reason"] for r in results} - {None}
    assert reasons == {
        "awaiting_operator_input",
        "awaiting_external_change",
        "awaiting_task_result",
        "awaiting_timer",
    }
    rows = {(r["closure_outcome"], r["waiting_reason"], r["operator_wait"]) for r in results}
    assert rows == set(TABLE)


@pytest.mark.parametrize("position", range(len(RULES) - 1))
def test_swapping_adjacent_rules_is_noticed(position: int) -> None:
    swapped = list(RULES)
    swapped[position], swapped[position + 1] = swapped[position + 1], swapped[position]
    mismatches = [
        name
        for name in NAMES
        if {k: v for k, v in _derive(name, swapped).items() if k in _expected(name)}
        != _expected(name)
    ]
    assert mismatches, f"swapping rules {position + 1} and {position + 2} went unnoticed"
