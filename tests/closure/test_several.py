"""Several closures answering together (the subjects of one pass, of one `serve --once` run): the
most severe row of the table answers for all of them (holon/closure/mapping.py, SEVERITY)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from holon.closure.derive import derive_closure
from holon.closure.evidence import Evidence
from holon.closure.mapping import job_conclusion_of, report_for, worst_exit

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "closure"
NAMES = sorted(p.name.removesuffix(".evidence.json") for p in EXAMPLES.glob("*.evidence.json"))

ORDER = [0, 3, 2, 1]  # least to most severe, as docs/closure.md says


@pytest.mark.parametrize("codes", list(itertools.permutations(ORDER, 2)))
def test_the_more_severe_of_two_answers(codes: tuple[int, int]) -> None:
    expected = max(codes, key=ORDER.index)
    assert worst_exit(codes) == expected
    assert worst_exit(reversed(codes)) == expected  # the order the subjects come in never matters


def test_nothing_to_answer_for_is_done() -> None:
    assert worst_exit([]) == 0


def test_one_failure_among_many_fails() -> None:
    assert worst_exit([0, 0, 3, 2, 1, 0]) == 1
    assert worst_exit([0, 3, 3, 2]) == 2
    assert worst_exit([0, 3]) == 3


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("fail_on_waiting", [False, True])
def test_the_job_of_an_exit_code_is_the_tables(name: str, fail_on_waiting: bool) -> None:
    evidence = Evidence.model_validate_json((EXAMPLES / f"{name}.evidence.json").read_text())
    row = report_for(derive_closure(evidence), fail_on_waiting=fail_on_waiting)
    assert job_conclusion_of(row.exit_code, fail_on_waiting=fail_on_waiting) == row.job_conclusion
