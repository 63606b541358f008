"""A binary file's contents, as `git diff --binary` writes them (deflated, base85), are seen by
the runner's scan of the patch for forwarded secrets: new files (literal hunks) and changed ones
(deltas), whatever the chunking; and the context's tokens the output redaction takes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from holon.runner.binary_patch import with_binary_contents
from holon.runner.output_redaction import context_tokens
from holon.runner.outputs import secrets_in
from holon.secrets import Redactor

KEY = "sk-ant-api03-PLANTEDbinaryKEY0123456789abcdefghijklmnop"


def _git(repo: Path, *args: str) -> bytes:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, env=env
    ).stdout


@pytest.fixture
def patch(tmp_path: Path) -> bytes:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    old = b"\0\1" + bytes(range(256)) * 12
    (repo / "changed.bin").write_bytes(old)
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    (repo / "changed.bin").write_bytes(old[:1500] + KEY.encode() + old[1500:])
    (repo / "new.bin").write_bytes(b"\0\0" + b"z" * 50000 + KEY.encode()[::-1] + b"\0")
    _git(repo, "add", "-N", "new.bin")
    return _git(repo, "diff", "--binary")


def test_the_patch_text_alone_does_not_show_the_key(patch: bytes) -> None:
    assert b"GIT binary patch" in patch
    assert KEY.encode() not in patch
    assert secrets_in([patch], {"ANTHROPIC_API_KEY": Redactor([KEY])}) == []


@pytest.mark.parametrize("size", [7, 100, 1 << 20])
def test_literal_and_delta_contents_are_seen_whatever_the_chunks(patch: bytes, size: int) -> None:
    chunks = [patch[i : i + size] for i in range(0, len(patch), size)]
    seen = b"".join(with_binary_contents(chunks))
    assert seen.startswith(patch[:size])
    assert KEY.encode() in seen  # the delta's insert
    assert KEY.encode()[::-1] in seen  # the new file's literal
    both = {"A": Redactor([KEY]), "B": Redactor([KEY[::-1]])}
    assert secrets_in(with_binary_contents(chunks), both) == ["A", "B"]


def test_a_hunk_that_does_not_decode_is_skipped() -> None:
    broken = b"GIT binary patch\nliteral 10\nz!!!!not base85\n\nliteral 0\nHcmV?d00001\n\n"
    assert b"".join(with_binary_contents([broken])) == broken


def test_the_contexts_tokens_are_known_values(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "issue.md").write_text("my token is ghp_PLANTEDissue0123456789 ok")
    (tmp_path / "sub" / "comments.json").write_text('{"body": "sk-proj-PLANTEDcomment99"}')
    (tmp_path / "link").symlink_to("/etc/passwd")
    shown = context_tokens(tmp_path, "goal: use xoxb-PLANTEDspec1234")
    assert sorted(shown.values) == [
        "ghp_PLANTEDissue0123456789",
        "sk-proj-PLANTEDcomment99",
        "xoxb-PLANTEDspec1234",
    ]
    assert context_tokens(None).values == ()
