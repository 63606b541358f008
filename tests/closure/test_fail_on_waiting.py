"""`holon closure derive --fail-on-waiting`: the exit code stays the table's (docs/closure.md);
only the job conclusion of work that is not finished (exits 2 and 3) becomes failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from holon.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "closure"
NAMES = sorted(p.name.removesuffix(".evidence.json") for p in EXAMPLES.glob("*.evidence.json"))
# docs/closure.md, "The answer in a comment": exit -> (job by default, job with the flag).
JOBS = {0: ("success", "success"), 1: ("failure", "failure"), 2: ("success", "failure"),
        3: ("success", "failure")}  # fmt: skip


def _derive(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["closure", "derive", *args])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", NAMES)
def test_fail_on_waiting_changes_only_the_job(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    source = str(EXAMPLES / f"{name}.evidence.json")
    code, plain = _derive(capsys, source)
    flagged_code, flagged = _derive(capsys, source, "--fail-on-waiting")
    expected = json.loads((EXAMPLES / f"{name}.expected.json").read_text())["exit_code"]
    assert code == flagged_code == expected
    assert (plain["job_conclusion"], flagged["job_conclusion"]) == JOBS[expected]
    # Everything else is the same record.
    assert {k: v for k, v in plain.items() if k != "job_conclusion"} == {
        k: v for k, v in flagged.items() if k != "job_conclusion"
    }


def test_every_exit_code_is_exercised() -> None:
    codes = {json.loads((EXAMPLES / f"{n}.expected.json").read_text())["exit_code"] for n in NAMES}
    assert codes == set(JOBS)


def test_flagged_record_renders_with_its_failed_job(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, record = _derive(capsys, str(EXAMPLES / "timer.evidence.json"), "--fail-on-waiting")
    assert code == 3
    path = tmp_path / "closure.json"
    path.write_text(json.dumps(record))
    assert main(["handoff", "render", str(path), "--format", "summary"]) == 0
    assert "| 3 | failure | neutral |" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--fail-on-waiting=yes"], ["--fail-on-waiting", "extra"]])
def test_bad_flag_use_is_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    source = str(EXAMPLES / "timer.evidence.json")
    assert main(["closure", "derive", source, *argv]) == 64
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("holon: error: ")
    assert argv[-1].partition("=")[2 if "=" in argv[-1] else 0] in err[-1]
