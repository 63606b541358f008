"""Reading and applying a run's diff.patch: real patches from the runner's own diff, applied by
Holon's git to the base alone (no checkout), the result's tree id equal to the one git gets
from the edited workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from holon.github.errors import PublishError
from holon.github.publish_apply import apply_patch
from holon.github.publish_patch import parse_patch
from tests.conftest import git
from tests.github.publish_support import local_base, remove, runner_patch, write

BASE = {
    "README.md": b"# hello\n\nline 2\nline 3\n",
    "src/app.py": b"def main():\n    return 1\n",
    "doomed.txt": b"bye\n",
    "logo.png": bytes(range(256)) * 4,
    "run.sh": b"#!/bin/sh\necho hi\n",
    "dir with space/ü.txt": b"umlaut\n",
}


def _edit(ws: Path) -> None:
    write(ws / "README.md", b"# hello\n\nline 2 changed\nline 3\n")
    write(ws / "src/new/module.py", "VALUE = 2\n")
    remove(ws / "doomed.txt")
    write(ws / "logo.png", bytes(reversed(range(256))) * 4)
    write(ws / "icon.bin", b"\x00\x01\x02binary\xff")
    (ws / "run.sh").chmod(0o755)
    write(ws / "dir with space/ü.txt", "umlaut edited\n")


def test_a_runner_patch_is_read_as_the_files_it_changes(tmp_path: Path) -> None:
    patch = runner_patch(tmp_path, BASE, _edit)
    changes = {c.new_path or c.old_path: c for c in parse_patch(patch, 100)}
    assert set(changes) == {
        "README.md",
        "src/new/module.py",
        "doomed.txt",
        "logo.png",
        "icon.bin",
        "run.sh",
        "dir with space/ü.txt",
    }
    assert changes["doomed.txt"].new_path is None
    assert changes["src/new/module.py"].old_path is None
    assert changes["logo.png"].binary
    assert changes["icon.bin"].binary
    assert (changes["run.sh"].old_mode, changes["run.sh"].new_mode) == ("100644", "100755")
    assert changes["README.md"].old_sha is not None
    assert len(changes["README.md"].old_sha) == 40


def test_applying_it_to_the_base_alone_gives_the_agents_tree(tmp_path: Path) -> None:
    patch = runner_patch(tmp_path, BASE, _edit)
    base, blobs = local_base(BASE)
    fetched: list[str] = []

    def fetch(sha: str) -> bytes:
        fetched.append(sha)
        return blobs[sha]

    applied = apply_patch(patch, parse_patch(patch, 100), base, fetch, 10_000_000)
    # Only the blobs the patch reads were fetched: not the new files' nor untouched ones.
    assert len(fetched) == 5
    assert set(applied.deleted) == {"doomed.txt"}
    assert applied.written["icon.bin"] == ("100644", b"\x00\x01\x02binary\xff")
    assert applied.written["run.sh"] == ("100755", BASE["run.sh"])
    assert applied.written["README.md"][1] == b"# hello\n\nline 2 changed\nline 3\n"
    # The tree git computes is the one the edited workspace has, binary files included.
    expected = tmp_path / "expected"
    expected.mkdir()
    git(expected, "init", "-q")
    for path, data in BASE.items():
        write(expected / path, data)
    _edit(expected)
    git(expected, "add", "-A")
    assert applied.tree == git(expected, "write-tree").strip()
    assert applied.base_tree != applied.tree


def test_an_empty_patch_declares_nothing() -> None:
    assert parse_patch(b"", 10) == []


def test_a_hunk_that_does_not_apply_fails_with_the_file_and_line(tmp_path: Path) -> None:
    patch = runner_patch(tmp_path, BASE, _edit)
    # An agent's own patch without index lines, against a base whose README differs.
    patch = b"\n".join(x for x in patch.split(b"\n") if not x.startswith(b"index "))
    moved = {**BASE, "README.md": b"# hello\n\nsomeone else's line\nline 3\n"}
    base, blobs = local_base(moved)
    with pytest.raises(PublishError) as caught:
        apply_patch(patch, parse_patch(patch, 100), base, blobs.__getitem__, 10_000_000)
    assert caught.value.reason == "does-not-apply"
    assert any("README.md" in x for x in caught.value.evidence)


def test_a_patch_made_against_another_version_is_refused_before_git_runs(tmp_path: Path) -> None:
    patch = runner_patch(tmp_path, BASE, _edit)
    # The same hunk would apply (its context is intact), but the file is not the one the run saw.
    base, _ = local_base({**BASE, "README.md": BASE["README.md"] + b"a later line\n"})

    def fetch(sha: str) -> bytes:
        raise AssertionError("nothing is fetched for a patch that cannot be right")

    with pytest.raises(PublishError, match=r"another version of README\.md") as caught:
        apply_patch(patch, parse_patch(patch, 100), base, fetch, 10_000_000)
    assert caught.value.reason == "does-not-apply"


def test_a_file_the_base_lacks_is_named(tmp_path: Path) -> None:
    patch = runner_patch(tmp_path, BASE, _edit)
    base, blobs = local_base({k: v for k, v in BASE.items() if k != "doomed.txt"})
    with pytest.raises(PublishError, match=r"doomed\.txt, which the base commit does not have"):
        apply_patch(patch, parse_patch(patch, 100), base, blobs.__getitem__, 10_000_000)


def test_bounds_on_files_and_bytes(tmp_path: Path) -> None:
    patch = runner_patch(tmp_path, BASE, _edit)
    with pytest.raises(PublishError, match="more than 3 files") as caught:
        parse_patch(patch, 3)
    assert caught.value.reason == "too-large"
    base, blobs = local_base(BASE)
    with pytest.raises(PublishError, match="max_bytes"):
        apply_patch(patch, parse_patch(patch, 100), base, blobs.__getitem__, 1000)


def test_quoted_names_renames_and_copies_as_git_writes_them(tmp_path: Path) -> None:
    files = {"old name.txt": b"same\n" * 20, 'q"uote.txt': b"q\n", "tab\tname": b"t\n"}

    def change(ws: Path) -> None:
        (ws / "old name.txt").rename(ws / "new name.txt")
        write(ws / 'q"uote.txt', "q2\n")
        write(ws / "tab\tname", "t2\n")

    patch = runner_patch(tmp_path, files, change)
    assert b'"b/q\\"uote.txt"' in patch
    assert b'"b/tab\\tname"' in patch
    assert {c.new_path for c in parse_patch(patch, 10)} == {
        'q"uote.txt',
        "tab\tname",
        "new name.txt",
        None,
    }
    # An agent may write its own patch with renames; git names both sides.
    ws = tmp_path / "src-run" / "workspace"
    git(ws, "add", "-A")
    renamed = parse_patch(git(ws, "diff", "--cached", "-M", "--full-index", "HEAD").encode(), 10)
    moved = next(c for c in renamed if c.old_path == "old name.txt")
    assert moved.writes == ("old name.txt", "new name.txt")
    base, blobs = local_base(files)
    git(ws, "reset", "-q", "HEAD", "--", "tab\tname")  # a control character is never published
    patch = git(ws, "diff", "--cached", "-M", "--full-index", "HEAD").encode()
    applied = apply_patch(patch, parse_patch(patch, 10), base, blobs.__getitem__, 10_000)
    assert set(applied.deleted) == {"old name.txt"}
    assert applied.written["new name.txt"][1] == files["old name.txt"]
    assert set(applied.written) == {"new name.txt", 'q"uote.txt'}


def test_a_binary_delta_applies_against_the_fetched_base(tmp_path: Path) -> None:
    data = bytes((i * 7919) % 251 for i in range(65536))
    files = {"big.bin": data}
    changed = data[:1000] + b"\x00changed\x00" + data[1009:]
    patch = runner_patch(tmp_path, files, lambda ws: write(ws / "big.bin", changed))
    assert b"\ndelta " in patch  # git chose a delta against the base blob
    base, blobs = local_base(files)
    applied = apply_patch(patch, parse_patch(patch, 10), base, blobs.__getitem__, 1_000_000)
    assert applied.written["big.bin"] == ("100644", changed)


def test_empty_files_and_files_without_a_final_newline(tmp_path: Path) -> None:
    files = {"empty.txt": b"", "tail.txt": b"no newline", "crlf.txt": b"a\r\nb\r\n"}

    def change(ws: Path) -> None:
        remove(ws / "empty.txt")
        write(ws / "new-empty.txt", b"")
        write(ws / "tail.txt", b"still no newline")
        write(ws / "crlf.txt", b"a\r\nB\r\n")

    patch = runner_patch(tmp_path, files, change)
    base, blobs = local_base(files)
    applied = apply_patch(patch, parse_patch(patch, 10), base, blobs.__getitem__, 10_000)
    assert applied.deleted == {"empty.txt": "100644"}
    assert applied.written == {
        "new-empty.txt": ("100644", b""),
        "tail.txt": ("100644", b"still no newline"),
        "crlf.txt": ("100644", b"a\r\nB\r\n"),
    }
