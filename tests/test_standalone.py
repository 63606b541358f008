"""The project stands alone: nothing in it points at design notes or data outside the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"DESIGN\.md|\.\./shared\b|\bshared/(seeds|data|DESIGN)")


def test_no_file_refers_to_notes_outside_the_project() -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    offenders = []
    for name in filter(None, listed):
        path = REPO / name.decode()
        if path.name == Path(__file__).name or not path.is_file():
            continue
        for number, line in enumerate(path.read_bytes().decode(errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{name.decode()}:{number}: {line.strip()[:80]}")
    assert offenders == []


def test_the_licence_pyproject_names_is_there() -> None:
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert 'license = { text = "MIT" }' in (REPO / "pyproject.toml").read_text()
