"""Atomic writes (holon/fsutil.py): the new file whole, or the old one, never a temporary left."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from holon.fsutil import atomic_write_bytes, atomic_write_chunks


def test_chunks_are_written_as_their_concatenation(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "state.json"
    atomic_write_chunks(target, (b"{", b"", b"x" * 100_000, b"}"), mode=0o600)
    assert target.read_bytes() == b"{" + b"x" * 100_000 + b"}"
    assert target.stat().st_mode & 0o777 == 0o600
    atomic_write_bytes(target, b"small")
    assert target.read_bytes() == b"small"
    assert [p.name for p in target.parent.iterdir()] == ["state.json"]


def test_a_failure_between_chunks_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    atomic_write_bytes(target, b"old")

    def failing() -> Iterator[bytes]:
        yield b"new, half"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        atomic_write_chunks(target, failing())
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]
