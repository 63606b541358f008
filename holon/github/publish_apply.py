"""`git apply` on the base commit without a checkout: the new entries a patch makes.

Holon's own git (system and global configuration ignored, no hooks: `holon.runner.git`) runs
in a scratch bare repository whose index is the base commit's tree as GitHub lists it: every
entry's mode, blob id and path, but only the blobs the patch reads are fetched and stored.
`git apply --cached` then works on that index alone: it reads those blobs, writes the new
ones, and never touches a file system path the patch names, so no path of the agent's choosing
is ever created, followed or escaped from. It applies all or nothing.

What git changed is then compared with what the patch declared (`publish_patch`): the same
paths, each safe (`publish_names`), each a regular file, no file where a directory is or the
reverse. A patch git reads differently from Holon is refused, not published. `git write-tree
--missing-ok` gives the tree id the result must have on GitHub, checked after GitHub builds it.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from holon.github.errors import PublishError
from holon.github.publish_names import path_problem
from holon.github.publish_patch import FileChange
from holon.runner.git import git_command, git_env
from holon.terminal import line

REGULAR = frozenset({"100644", "100755"})
# Git gets only these of Holon's environment (and its own isolating GIT_* settings): nothing
# it runs needs a token, so the process that holds GITHUB_TOKEN does not hand it down.
_INHERITED = frozenset({"PATH", "TMPDIR", "LC_ALL", "GIT_TERMINAL_PROMPT"})
EVIDENCE_LINES = 20


@dataclass(frozen=True)
class Entry:
    mode: str
    sha: str


@dataclass(frozen=True)
class Applied:
    base_tree: str  # the base's tree id as git computes it from the listing
    tree: str  # the result's tree id
    written: dict[str, tuple[str, bytes]]  # path -> (mode, content), added or changed
    deleted: dict[str, str]  # path -> its mode in the base


class _Scratch:
    def __init__(self, root: Path) -> None:
        self.cwd = root / "empty"
        self.cwd.mkdir()
        extra = {"GIT_DIR": str(root / "git"), "GIT_INDEX_FILE": str(root / "index")}
        self.env = {
            k: v for k, v in git_env(extra).items() if k in _INHERITED or k.startswith("GIT_")
        }
        self.run(["init", "--bare", "-q", str(root / "git")])

    def run(self, args: list[str], stdin: bytes = b"", fail: str | None = None) -> bytes:
        proc = subprocess.run(
            git_command(args),
            cwd=self.cwd,
            env=self.env,
            input=stdin,
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            said = [line(x, 200) for x in proc.stderr.decode("utf-8", "replace").splitlines()]
            said = [x for x in said if x][:EVIDENCE_LINES]
            reason, what = ("does-not-apply", fail) if fail else ("mismatch", f"git {args[0]}")
            raise PublishError(
                reason, f"{what} failed: {said[0] if said else 'no output'}", tuple(said)
            )
        return proc.stdout

    def index(self) -> dict[str, Entry]:
        found: dict[str, Entry] = {}
        for record in self.run(["ls-files", "-s", "-z"]).split(b"\0"):
            if record:
                head, _, path = record.partition(b"\t")
                mode, sha, _stage = head.decode().split(" ")
                found[path.decode("utf-8", "surrogateescape")] = Entry(mode, sha)
        return found


def apply_patch(
    patch: bytes,
    changes: list[FileChange],
    base: Mapping[str, Entry],
    fetch: Callable[[str], bytes],
    max_bytes: int,
) -> Applied:
    """Apply `patch` to `base` (path -> entry); `fetch` gives a base blob's bytes by id."""
    with tempfile.TemporaryDirectory(prefix="holon-publish-") as root:
        scratch = _Scratch(Path(root))
        listing = b"".join(
            f"{e.mode} {e.sha}\t".encode() + p.encode("utf-8", "surrogatepass") + b"\0"
            for p, e in base.items()
        )
        scratch.run(["update-index", "-z", "--index-info"], listing)
        base_tree = scratch.run(["write-tree", "--missing-ok"]).decode().strip()
        budget = max_bytes
        for change in changes:
            if change.old_path is None:
                continue
            entry = _preimage(change, base)
            data = fetch(entry.sha)
            budget -= len(data)
            if budget < 0:
                raise PublishError(
                    "too-large", f"the files the patch changes exceed {max_bytes} bytes (max_bytes)"
                )
            stored = scratch.run(["hash-object", "-w", "--no-filters", "--stdin"], data)
            if stored.decode().strip() != entry.sha:
                raise PublishError(
                    "mismatch", f"GitHub's copy of {change.old_path} is not blob {entry.sha}"
                )
        scratch.run(
            ["apply", "--cached", "--whitespace=nowarn", "-"],
            patch,
            fail="applying diff.patch to the base commit",
        )
        after = scratch.index()
        written, deleted = _compare(base, after, changes)
        contents = {}
        for path, entry in written.items():
            data = scratch.run(["cat-file", "blob", entry.sha])
            budget -= len(data)
            if budget < 0:
                raise PublishError(
                    "too-large", f"the patched files exceed {max_bytes} bytes (max_bytes)"
                )
            contents[path] = (entry.mode, data)
        tree = scratch.run(["write-tree", "--missing-ok"]).decode().strip()
    return Applied(base_tree, tree, contents, deleted)


def _preimage(change: FileChange, base: Mapping[str, Entry]) -> Entry:
    path = change.old_path or ""
    entry = base.get(path)
    if entry is None:
        raise PublishError(
            "does-not-apply",
            f"diff.patch changes {path}, which the base commit does not have",
            (path,),
        )
    if entry.mode not in REGULAR and not (entry.mode == "120000" and change.new_path is None):
        raise PublishError(
            "unsafe-path",
            f"diff.patch changes {path}, which is not a regular "
            f"file in the base (mode {entry.mode})",
            (path,),
        )
    if change.old_sha and not entry.sha.startswith(change.old_sha):
        raise PublishError(
            "does-not-apply",
            f"diff.patch was made against another version of "
            f"{path} (blob {change.old_sha[:12]}, the base has {entry.sha[:12]})",
            (path,),
        )
    return entry


def _compare(
    base: Mapping[str, Entry], after: dict[str, Entry], changes: list[FileChange]
) -> tuple[dict[str, Entry], dict[str, str]]:
    """What git changed, checked against what the patch declared."""
    written = {p: e for p, e in after.items() if base.get(p) != e}
    deleted = {p: e.mode for p, e in base.items() if p not in after}
    declared = {p for c in changes for p in c.writes}
    if set(written) | set(deleted) != declared:
        odd = sorted((set(written) | set(deleted)) ^ declared)
        raise PublishError(
            "mismatch",
            "git applied diff.patch differently from how Holon read it; nothing is published",
            tuple(odd[:EVIDENCE_LINES]),
        )
    for path, entry in written.items():
        problem = path_problem(path)
        if problem is None and entry.mode not in REGULAR:
            problem = f"mode {entry.mode} (only regular files are published)"
        if problem:
            raise PublishError(
                "unsafe-path", f"diff.patch writes {problem}: {line(path, 200)}", (line(path, 200),)
            )
    _check_nesting(after, written)
    return written, deleted


def _check_nesting(after: dict[str, Entry], written: dict[str, Entry]) -> None:
    """No written file may sit where a directory is, or below a file (or link) of the tree."""
    directories = {p.rsplit("/", i)[0] for p in after for i in range(1, p.count("/") + 1)}
    for path in written:
        parents = [path.rsplit("/", i)[0] for i in range(1, path.count("/") + 1)]
        if path in directories or any(parent in after for parent in parents):
            raise PublishError(
                "unsafe-path",
                f"diff.patch puts a file where a directory is, or below a file: {line(path, 200)}",
                (line(path, 200),),
            )
