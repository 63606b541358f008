"""`python -m bench`: every benchmark's rows in one table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_one_table_of_every_chosen_benchmark(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench",
            "--smoke",
            "--only",
            "gateway",
            "--only",
            "closure",
            "--work-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
    assert table[0] == "| figure | measured | baseline | ratio | target | result |"
    rows = table[1:]
    assert any(r.startswith("| `gateway` normalize") for r in rows)
    assert any(r.startswith("| `closure` `holon closure derive FILE` per item") for r in rows)
    # A smoke run never judges: every row's result is "-".
    assert all(r.rstrip(" |").endswith("-") for r in rows), rows
    assert (tmp_path / "gateway.log").read_text().strip()


def test_a_missed_target_is_bold_in_the_table() -> None:
    from bench.__main__ import table
    from bench._common import Row

    done = [("x", [Row("f", "2 s", "1 s", "2.00x", "<= 1.5x", False)], "exit 1")]
    assert table(done).splitlines()[-1] == "| `x` f | 2 s | 1 s | 2.00x | <= 1.5x | **FAIL** |"
