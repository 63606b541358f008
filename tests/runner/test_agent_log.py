"""AgentLog: the agent's output kept with a stated cap, redacted across chunk borders."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from holon.runner.agent_log import AgentLog, cut_marker
from holon.secrets import Redactor

SECRET = "ghp_chunkBorderSecret0123456789"


def _kept(log: AgentLog) -> bytes:
    data = b"".join(log.kept())
    log.release()
    return data


def _write_all(log: AgentLog, data: bytes, size: int) -> None:
    for start in range(0, len(data), size):
        log.write(data[start : start + size])


def test_under_the_limit_everything_is_kept(tmp_path: Path) -> None:
    log = AgentLog(tmp_path / "log", 100, Redactor())
    _write_all(log, b"x" * 100, 7)
    info = log.close()
    assert _kept(log) == b"x" * 100
    assert (info.bytes, info.kept_bytes, info.cut_at, info.cut_bytes) == (100, 100, None, 0)


@pytest.mark.parametrize("chunk", [1, 3, 50, 1000])
def test_over_the_limit_head_and_tail_are_kept_and_the_cut_is_stated(
    tmp_path: Path, chunk: int
) -> None:
    data = bytes(i % 251 for i in range(1000))
    log = AgentLog(tmp_path / "log", 101, Redactor())
    _write_all(log, data, chunk)
    info = log.close()
    kept = _kept(log)
    assert info.bytes == 1000
    assert info.kept_bytes == 101
    assert info.cut_at == 51
    assert info.cut_bytes == 899
    assert kept == data[:51] + cut_marker(899) + data[-50:]


@pytest.mark.parametrize("chunk", [1, 2, 5, 13, 64])
def test_secret_split_across_chunks_is_redacted(tmp_path: Path, chunk: int) -> None:
    data = f"before {SECRET} middle {SECRET}{SECRET} after\n".encode()
    log = AgentLog(tmp_path / "log", 10_000, Redactor([SECRET]))
    _write_all(log, data, chunk)
    info = log.close()
    assert _kept(log) == b"before *** middle ****** after\n"
    assert info.redactions == 3


def test_writes_after_close_are_ignored(tmp_path: Path) -> None:
    log = AgentLog(tmp_path / "log", 100, Redactor())
    log.write(b"a")
    first = log.close()
    log.write(b"late")
    assert log.close() == first
    assert _kept(log) == b"a"


def test_a_large_output_is_not_held_in_memory(tmp_path: Path) -> None:
    """200 MB through a 1 MB cap, with a secret to look for: memory stays near the cap."""
    chunk = (b"0123456789abcdef" * 4096) + SECRET.encode()  # 64 KiB plus a secret
    log = AgentLog(tmp_path / "log", 1024 * 1024, Redactor([SECRET]))
    tracemalloc.start()
    try:
        for _ in range(200 * 1024 * 1024 // len(chunk)):
            log.write(chunk)
        info = log.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        log.release()
    assert info.bytes > 190 * 1024 * 1024
    assert (tmp_path / "log").stat().st_size < 1024 * 1024 + 100
    assert peak < 4 * 1024 * 1024, f"peak {peak} bytes"


def test_kept_output_is_read_back_through_its_own_handle_not_the_path(tmp_path: Path) -> None:
    secret_file = tmp_path / "elsewhere.txt"
    secret_file.write_bytes(b"not the agent's output")
    log = AgentLog(tmp_path / "log", 100, Redactor())
    log.write(b"agent output")
    # A local agent knows where the run root is and swaps the log's path for a link.
    (tmp_path / "log").unlink()
    (tmp_path / "log").symlink_to(secret_file)
    log.close()
    assert _kept(log) == b"agent output"
