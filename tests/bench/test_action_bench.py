"""`bench.action` still runs: one round of each part, its report complete. Times are not judged
here (smoke mode); what is checked is that each part did its job and said so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import action

SECONDS = r"[\d.]+s"


@pytest.mark.slow
def test_action_benchmark_runs_and_reports_every_part(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Smoke: Holon's wheel is built, its dependencies linked from this venv (no downloads of
    # them), one round of each side.
    assert action.main(["--smoke", "--work-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out

    # (a) the decision step, its baseline named, what it imported, the verdict line.
    assert "verified: exit 0, one usage reply posted" in out
    assert (
        "unavoidable third-party packages (the baseline imports): pydantic, yaml, github, jinja2"
        in out
    )
    assert "  docker imported: no" in out
    assert re.search(rf"holon action \(/holon help\) +{SECONDS} +{SECONDS} +{SECONDS} +1\n", out)
    assert re.search(r"ratio \(measured/baseline\) +[\d.]+x", out)
    assert re.search(r"target +<=1\.50x", out)
    assert "NOT JUDGED (smoke run)" in out

    # (b) time to first comment: every step of both sides with its share, the difference, and
    # the total against the floor (a bare install plus one API call).
    share = rf"{SECONDS} \( *\d+%\)"
    for row in (
        r"venv \(python -m venv, without pip\)",
        r"pip install --no-index --find-links",
        r"to the first comment \(holon action / one API call\)",
    ):
        assert re.search(rf"  {row} +{share} +{share} +[+-][\d.]+s\n", out), row
    assert re.search(rf"  total +{SECONDS} +{SECONDS} +[\d.]+x\n", out)
    assert "target <= 1.5x of the floor: NOT JUDGED" in out
    assert re.search(r"dependency set: .*pydantic.*pygithub", out)

    # (c) importtime evidence: both commands listed, neither imports a heavy module.
    for command in ("holon --help", r"holon gateway normalize \(issue_comment\)"):
        listing = re.search(
            rf"  {command}: top 10 cumulative imports \(any depth\)\n((?: +[\d.]+ ms +\S+\n)+)"
            r"    docker, github, jinja2 imported: none\n",
            out,
        )
        assert listing is not None, command
        assert len(listing.group(1).splitlines()) == 10
    assert "result: PASS (neither imports docker, github nor jinja2)" in out
    assert "imports: PASS; docker in holon action: PASS" in out
