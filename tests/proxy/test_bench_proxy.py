"""`bench.proxy` still runs (smoke: one small round, not judged) and reports both sides."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import proxy


def test_proxy_benchmark_runs_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert proxy.main(["--smoke", "--work-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    ms = r"-?[\d.]+ms"
    assert re.search(rf"direct loopback call +{ms} +{ms}", out)
    assert re.search(rf"through the key proxy +{ms} +{ms}", out)
    assert re.search(rf"added, median +{ms}", out)
    assert re.search(rf"added, p95 +{ms}", out)
    # The warm-up plus 20 measured requests, each metered by the proxy.
    assert "metered by the proxy: 21 requests, 294 input and 147 output tokens" in out
    assert "NOT JUDGED (smoke run)" in out
    assert list(tmp_path.iterdir()) == []  # its work directory removed
