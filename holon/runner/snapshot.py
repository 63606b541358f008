"""The workspace snapshot (RFC-0002 section 4): the agent works on a copy, never the original.

A git workspace keeps its history: the snapshot gets its own small `.git` (HEAD, refs, index,
shallow list, ignore rules, remotes without credentials) whose object store borrows, through git
alternates, one pack of exactly the objects reachable from the refs and index it carries (see
`objects.py`): never the original store, whose dangling blobs may hold what the user never
committed, and which an agent must not be able to write into. The files copied are the ones git
would show: tracked files with the user's uncommitted changes plus untracked files that are not
ignored (ignored ones only when asked). Copies are real copies (`cp --reflink=auto` clones blocks
where the filesystem can, and never hardlinks), so an agent appending to a file leaves the
original byte-identical.

The starting point is recorded as a git tree in a runner-private repository outside the run
root, so the patch of the agent's changes never contains the user's own uncommitted work; the
patch itself is computed in a git directory written after the agent stopped (`Snapshot.diff`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from holon.errors import InvalidInput, OperationalError
from holon.runner.git import GitCall, GitError, git, git_ok
from holon.runner.objects import ReachablePack
from holon.runner.timeline import mark
from holon.runner.tree import TreeError, write_tree

# Where the snapshot's borrowed objects live, relative to the run root, for both backends: the
# snapshot's alternates file points at `../../../git-objects` from `<root>/workspace/.git/objects`.
OBJECTS_LINK = "git-objects"
_ALTERNATE = f"../../../{OBJECTS_LINK}"

# Configuration a snapshot needs to read the repository and talk about its remotes. Everything else
# (credential helpers, `http.*.extraheader` tokens written by actions/checkout, hooks, includes) is
# left behind on purpose.
_KEPT_CONFIG = re.compile(
    r"core\.(repositoryformatversion|filemode|symlinks|ignorecase|precomposeunicode|autocrlf|eol)"
    r"|extensions\.(objectformat|compatobjectformat)"
    r"|remote\.[^\n]+\.(url|pushurl|fetch)"
    r"|branch\.[^\n]+\.(remote|merge)"
)


class SnapshotError(OperationalError):
    """The snapshot could not be taken or read."""


@dataclass(frozen=True)
class Snapshot:
    """A prepared snapshot and what the runner needs to diff it later."""

    source: Path
    root: Path
    kind: Literal["git", "directory"]
    head: str | None
    branch: str | None
    start_tree: str
    files: int
    include_ignored: bool
    private_git: Path  # the runner's own git directory, outside the run root
    objects: Path | None  # the pack directory the snapshot borrows, when kind == "git"
    # Holon's own reading of the start: the original's object stores and the kept settings.
    stores: tuple[str, ...] = ()
    config: tuple[tuple[str, str], ...] = ()

    def _fresh_git_dir(self) -> Path:
        """A git directory made now, after the agent stopped: its config is what Holon writes.

        Nothing in the private directory is trusted beyond object contents and the start index;
        the objects it wrote at the start are borrowed, like the original's stores.
        """
        path = Path(tempfile.mkdtemp(prefix="diff-", dir=self.private_git.parent))
        _make_git_dir(path, [str(self.private_git / "objects"), *self.stores], list(self.config))
        _copy_if_exists(self.private_git / "info" / "exclude", path / "info" / "exclude")
        return path

    def _end_tree(self, git_dir: Path) -> str:
        index = git_dir / "index"
        start = self.private_git / "start.index"
        if start.is_file() and not start.is_symlink():  # none for a workspace without files
            # copy2 keeps the start index's mtime: git compares an entry's stat only when the
            # file's mtime is older than its index, so an index dated "now" would take a
            # same-size edit made in the second the start tree was recorded for unchanged.
            shutil.copy2(start, index)
        env = {"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(self.root)}
        return write_tree(self.root, env, force=self._force)

    def current_tree(self) -> str:
        """The tree of the snapshot as it is now, with the same file selection as at the start."""
        return self._end_tree(self._fresh_git_dir())

    @property
    def _force(self) -> bool:
        return self.include_ignored or self.kind == "directory"

    def diff(self) -> bytes:
        """The agent's changes since the start as a `git apply`-able binary patch."""
        mark("diff: started")
        git_dir = self._fresh_git_dir()
        end = self._end_tree(git_dir)
        mark("diff: end tree written")
        if end == self.start_tree:
            return b""
        return git(
            [
                "diff",
                "--binary",
                "--full-index",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--no-renames",
                "--src-prefix=a/",
                "--dst-prefix=b/",
                self.start_tree,
                end,
            ],
            env={"GIT_DIR": str(git_dir)},
        )


@dataclass(frozen=True)
class _Repo:
    top: Path
    git_dir: Path
    common_dir: Path


def _find_repo(workspace: Path) -> _Repo | None:
    out = git_ok(
        [
            # Global config is ignored, so the user's safe.directory list is too: the workspace
            # they named is the one directory trusted (git checks the top it finds against it).
            *("-c", f"safe.directory={workspace.resolve()}"),
            "rev-parse",
            "--path-format=absolute",
            "--is-bare-repository",
            "--show-toplevel",
            "--git-dir",
            "--git-common-dir",
        ],
        cwd=workspace,
    )
    if out is None:
        return None
    lines = out.splitlines()
    if len(lines) != 4 or lines[0] != "false":
        return None
    top = Path(lines[1])
    if top.resolve() != workspace.resolve():
        # A subdirectory of a repository is snapshotted as a plain directory: its history
        # belongs to a tree the agent was not given.
        return None
    return _Repo(top=top, git_dir=Path(lines[2]), common_dir=Path(lines[3]))


def _env(repo: _Repo) -> dict[str, str]:
    """The original, named explicitly: no discovery, no ownership question after `_find_repo`."""
    return {"GIT_DIR": str(repo.git_dir), "GIT_WORK_TREE": str(repo.top)}


def _list_files_call(repo: _Repo, include_ignored: bool) -> GitCall:
    args = ["ls-files", "-z", "--cached", "--others"]
    if not include_ignored:
        args.append("--exclude-standard")
    return GitCall(args, cwd=repo.top, env=_env(repo))


def _list_files(repo: _Repo, out: bytes) -> list[bytes]:
    """The files `ls-files --cached --others` named (`out`) that are there to copy."""
    seen: set[bytes] = set()
    files = []
    top = bytes(repo.top)
    for name in out.split(b"\0"):
        # --cached also lists files the user deleted but did not stage, and unmerged paths twice.
        if name and name not in seen and os.path.lexists(top + b"/" + name):
            seen.add(name)
            files.append(name)
    return files


class _Copy:
    """`cp -a --reflink=auto --parents` of a file list, running while the caller does other work."""

    def __init__(self, source: Path, dest: Path, names: list[bytes], listing: Path) -> None:
        listing.write_bytes(b"\0".join(names))
        self.proc = (
            subprocess.Popen(
                [
                    *("xargs", "-0", "-a", str(listing)),
                    *("cp", "-a", "--reflink=auto", "--parents", "-t", str(dest), "--"),
                ],
                cwd=source,
                stdin=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            if names
            else None
        )

    def wait(self) -> None:
        if self.proc is None:
            return
        _, err = self.proc.communicate()
        if self.proc.returncode != 0:
            lines = err.decode("utf-8", "replace").strip().splitlines()
            raise SnapshotError(f"cannot copy the workspace: {lines[0] if lines else 'cp failed'}")

    def kill(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()  # reaps it and closes the pipe


def _gitlinks_call(repo: _Repo) -> GitCall:
    return GitCall(["ls-files", "-z", "--stage"], cwd=repo.top, env=_env(repo))


def _gitlinks(out: bytes) -> list[bytes]:
    """Paths the user's index (`ls-files --stage`: `out`) records as submodules (gitlinks)."""
    found = []
    for entry in out.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        if meta.startswith(b"160000 "):
            found.append(name)
    return found


def _detach_submodules(dest: Path, gitlinks: list[bytes]) -> None:
    """Submodule checkouts point at `.git/modules/<name>`, which the snapshot does not have.

    Their `.git` files are removed from the copy: the files stay for the agent to read, and git
    then sees an unpopulated submodule instead of failing on a dangling gitdir. Holon's own trees
    record their files like any other nested directory (`tree.py`), so an edit inside one is
    carried in the patch.
    """
    for name in gitlinks:
        gitfile = Path(os.fsdecode(bytes(dest) + b"/" + name)) / ".git"
        if gitfile.is_file() and not gitfile.is_symlink():
            gitfile.unlink()


def _strip_credentials(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=host))


def _kept_config_call(common_dir: Path) -> GitCall:
    return GitCall(["config", "--file", str(common_dir / "config"), "--list", "-z"])


def _kept_config(out: bytes) -> list[tuple[str, str]]:
    """What `_KEPT_CONFIG` keeps of `git config --list -z`'s `out`."""
    kept = []
    for entry in out.split(b"\0"):
        if not entry:
            continue
        key, _, value = entry.decode("utf-8", "surrogateescape").partition("\n")
        if _KEPT_CONFIG.fullmatch(key):
            if key.endswith(("url", "pushurl")):
                value = _strip_credentials(value)
            kept.append((key, value))
    return kept


def _copy_if_exists(src: Path, dst: Path) -> None:
    if src.is_file():
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)


def _quote(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped.replace("\t", "\\t") + '"'


def _config_text(entries: list[tuple[str, str]]) -> str:
    """A git config file for `entries` (`section[.subsection].key`, value), written in one go."""
    sections: dict[tuple[str, str | None], list[tuple[str, str]]] = {
        ("core", None): [("repositoryformatversion", "0"), ("bare", "false")]
    }
    for key, value in entries:
        section, _, rest = key.partition(".")
        subsection, _, name = rest.rpartition(".")
        items = sections.setdefault((section, subsection or None), [])
        # Later values of single-valued keys win in git; replace instead of repeating them.
        if name != "fetch":
            items[:] = [item for item in items if item[0] != name]
        items.append((name, value))
    lines = []
    for (section, sub), entries_of in sections.items():
        lines.append(f"[{section}]" if sub is None else f"[{section} {_quote(sub)}]")
        lines.extend(f"\t{name} = {_quote(value)}" for name, value in entries_of)
    return "\n".join(lines) + "\n"


def _make_git_dir(path: Path, alternates: list[str], config: list[tuple[str, str]]) -> None:
    (path / "objects" / "info").mkdir(parents=True)  # `path` itself may exist, empty
    (path / "refs" / "heads").mkdir(parents=True)
    (path / "refs" / "tags").mkdir(parents=True)
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "config").write_text(_config_text(config))
    if alternates:
        (path / "objects" / "info" / "alternates").write_text("\n".join(alternates) + "\n")


def _original_alternates(common_dir: Path) -> list[str]:
    """The original's own alternates, as absolute paths (a `--shared` clone borrows objects too)."""
    path = common_dir / "objects" / "info" / "alternates"
    if not path.is_file():
        return []
    result = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            entry = Path(line)
            if not entry.is_absolute():
                entry = (common_dir / "objects" / entry).resolve()
            result.append(str(entry))
    return result


# Told the snapshot's directories (`dest`, and the objects' for a git workspace, else None) as
# soon as both exist, still empty: what a container that mounts them needs to be created (not
# started) while they are filled. Called in the snapshot's thread; it must not raise.
OnReady = Callable[[Path, Path | None], None]


def _nothing(dest: Path, objects: Path | None) -> None:
    pass


def take_snapshot(
    source: Path,
    dest: Path,
    private: Path,
    *,
    include_ignored: bool = False,
    on_ready: OnReady = _nothing,
) -> Snapshot:
    """Copy `source` into `dest` (which must not exist) and record its starting point in `private`.

    For a git workspace `dest.parent / OBJECTS_LINK` receives the pack of reachable objects the
    snapshot borrows; a container backend mounts it read-only at the same relative place.
    `private` must lie outside anything the agent can reach (run.py makes it a sibling of the run
    root): Holon's start tree and the objects it wrote for it live there. `on_ready` is told the
    directories once they exist (`OnReady`); the snapshot is whole only when this returns.
    """
    if not source.is_dir():
        raise InvalidInput(f"workspace is not a directory: {source}")
    source, dest, private = source.absolute(), dest.absolute(), private.absolute()
    dest.mkdir(parents=True)
    repo = _find_repo(source)
    mark("snapshot: repository found")
    try:
        if repo is None:
            on_ready(dest, None)
            return _snapshot_directory(source, dest, private)
        return _snapshot_repo(repo, dest, private, include_ignored, on_ready)
    except (GitError, TreeError, OSError) as exc:
        if isinstance(exc, GitError | TreeError):
            raise SnapshotError(f"cannot snapshot {source}: {exc}") from None
        raise SnapshotError(f"cannot snapshot {source}: {exc.strerror or exc}") from None


def _snapshot_directory(source: Path, dest: Path, private: Path) -> Snapshot:
    proc = subprocess.run(
        ["cp", "-a", "--reflink=auto", "--", f"{source}/.", str(dest)],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SnapshotError(f"cannot copy the workspace: {detail[0] if detail else 'cp failed'}")
    _make_git_dir(private, [], [])
    index = private / "start.index"
    env = {"GIT_DIR": str(private), "GIT_WORK_TREE": str(dest), "GIT_INDEX_FILE": str(index)}
    tree = write_tree(dest, env, force=True)
    files = git(["ls-files", "-z"], cwd=dest, env=env).count(b"\0")
    return Snapshot(
        source=source,
        root=dest,
        kind="directory",
        head=None,
        branch=None,
        start_tree=tree,
        files=files,
        include_ignored=True,
        private_git=private,
        objects=None,
    )


def _snapshot_repo(
    repo: _Repo, dest: Path, private: Path, include_ignored: bool, on_ready: OnReady
) -> Snapshot:
    # Independent questions to the original, asked at once: the answers are read in order.
    starts: list[Callable[[], GitCall]] = [
        lambda: _list_files_call(repo, include_ignored),
        lambda: _kept_config_call(repo.common_dir),
        lambda: _gitlinks_call(repo),
        lambda: GitCall(["rev-parse", "--verify", "-q", "HEAD^{commit}"], env=_env(repo)),
        lambda: GitCall(["symbolic-ref", "-q", "--short", "HEAD"], env=_env(repo)),
    ]
    calls: list[GitCall] = []
    # The pack's directory made now, empty, for `on_ready`; the pack is written into it. Told
    # before the questions are asked: starting their processes takes a few ms of this thread.
    (dest.parent / OBJECTS_LINK).mkdir()
    on_ready(dest, dest.parent / OBJECTS_LINK)
    try:
        for start in starts:
            calls.append(start())
        return _snapshot_started(repo, dest, private, include_ignored, *calls)
    finally:
        for call in calls:
            call.kill()  # a no-op for a call whose answer was read


def _agent_git_dir(repo: _Repo, dot_git: Path, config: list[tuple[str, str]]) -> None:
    """The agent's repository: the user's view of HEAD, refs and index, borrowing only the pack."""
    _make_git_dir(dot_git, [_ALTERNATE], config)
    shutil.copy2(repo.git_dir / "HEAD", dot_git / "HEAD")
    for name in ("packed-refs", "shallow", "info/exclude"):
        _copy_if_exists(repo.common_dir / name, dot_git / name)
    _copy_if_exists(repo.git_dir / "index", dot_git / "index")
    refs = repo.common_dir / "refs"
    if refs.is_dir():
        shutil.copytree(refs, dot_git / "refs", symlinks=True, dirs_exist_ok=True)


def _snapshot_started(
    repo: _Repo,
    dest: Path,
    private: Path,
    include_ignored: bool,
    listing: GitCall,
    configured: GitCall,
    staged: GitCall,
    at_head: GitCall,
    on_branch: GitCall,
) -> Snapshot:
    names = _list_files(repo, listing.output())
    objects = repo.common_dir / "objects"
    config = _kept_config(configured.output(check=False))
    stores = [str(objects), *_original_alternates(repo.common_dir)]
    gitlinks = _gitlinks(staged.output())
    mark("snapshot: questions answered")
    # `ls-files --others` names a nested repository as one `dir/` entry; cp copies all of it.
    nested = [name.rstrip(b"/") for name in names if name.endswith(b"/")] + gitlinks

    # The runner's private record of the starting point, outside anything the agent can touch.
    # It is taken from the original tree (read-only: objects and index go to the private
    # directory) while the copy and the pack run, since they use different cores.
    _make_git_dir(private, stores, config)
    copy = _Copy(repo.top, dest, names, private / "files.list")
    pack: ReachablePack | None = None
    try:
        pack = ReachablePack(repo.git_dir, repo.top, stores, dest.parent / OBJECTS_LINK)
        # Written while the copy runs: the copy never names a top-level `.git`.
        _agent_git_dir(repo, dest / ".git", config)
        _copy_if_exists(repo.common_dir / "info" / "exclude", private / "info" / "exclude")
        index = private / "start.index"
        env = {
            "GIT_DIR": str(private),
            "GIT_WORK_TREE": str(repo.top),
            "GIT_INDEX_FILE": str(index),
        }
        try:
            _copy_if_exists(repo.git_dir / "index", index)
            tree = write_tree(repo.top, env, force=include_ignored, nested=nested)
        except GitError:
            # An index git cannot read outside its repository (split index, newer format):
            # start from nothing and hash every file instead.
            index.unlink(missing_ok=True)
            tree = write_tree(repo.top, env, force=include_ignored, nested=nested)
        mark("snapshot: start tree written")
        head = at_head.ok()
        branch = on_branch.ok()
        pack.wait()
        mark("snapshot: pack written")
    except BaseException:
        copy.kill()
        if pack is not None:
            pack.kill()
        raise
    copy.wait()
    _detach_submodules(dest, gitlinks)
    return Snapshot(
        source=repo.top,
        root=dest,
        kind="git",
        head=head or None,
        branch=branch or None,
        start_tree=tree,
        files=len(names),
        include_ignored=include_ignored,
        private_git=private,
        objects=dest.parent / OBJECTS_LINK,
        stores=tuple(stores),
        config=tuple(config),
    )
