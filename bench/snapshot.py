"""Benchmark: workspace snapshot of a large repository with uncommitted changes.

Target (from the issue): a snapshot of a 20,000-file repository with uncommitted changes is
within 1.5x of `cp -a --reflink=auto` of the same file set (tracked + untracked-not-ignored),
side by side, median of at least 10 alternating runs.

The baseline is the plain user's copy: the file list from `git ls-files` (computed once, not
timed) fed to a single `xargs -0 cp -a --reflink=auto --parents`. The measured side is
`holon.runner.snapshot.take_snapshot`, which lists, copies, builds the snapshot's `.git`,
packs the objects reachable from its refs and index (the only objects the snapshot borrows) and
records the starting tree. Run from the repository root: `python -m bench.snapshot`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import stat
import subprocess
import sys
import time
from pathlib import Path

from bench._common import (
    MIN_ROUNDS,
    BenchError,
    Row,
    Samples,
    alternate,
    collect,
    git,
    remove_tree,
    report,
    scratch,
    timed,
)

TARGET = 1.5
DEFAULT_FILES = 20_000
SMOKE_FILES = 50
SMOKE_ROUNDS = 1

# Words for file contents that look a little like source text.
_VOCABULARY = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi "
    "rho sigma tau upsilon phi chi psi omega def class return import from self value index "
    "node tree commit patch agent holon runner snapshot contract output input workspace"
)
_WORDS = _VOCABULARY.split()
_EXTENSIONS = (".py", ".txt", ".md", ".json", ".c", ".h", ".yaml", ".rs")


def _text(rng: random.Random, low: int, high: int) -> bytes:
    words = rng.choices(_WORDS, k=rng.randint(low, high))
    lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    return ("\n".join(lines) + "\n").encode()


def _tracked_path(i: int) -> str:
    # Nested directories of uneven depth, about 20 files per leaf directory at full size.
    ext = _EXTENSIONS[i % len(_EXTENSIONS)]
    top = f"pkg{i % 20:02d}"
    mid = f"mod{(i // 20) % 10}"
    if i % 3 == 0:
        return f"{top}/{mid}/file{i:05d}{ext}"
    return f"{top}/{mid}/sub{(i // 200) % 5}/deep{i % 2}/file{i:05d}{ext}"


def build_repo(
    root: Path, files: int, seed: int = 20_000, *, loose: bool = False
) -> dict[str, int]:
    """A committed git repository of `files` tracked files, then left dirty like a working copy.

    The commit is packed as `git gc` would pack it, or with `loose` left as loose objects: the
    snapshot packs the objects it borrows, and loose ones are its costliest case. After the
    commit: ~1% of files modified, a few deleted without staging, ~1% untracked files
    (some in a new directory) and ~1% ignored files (a build/ tree and *.log files).
    """
    # Seeded so every run benchmarks the same repository; nothing here needs to be secret.
    rng = random.Random(seed)  # noqa: S311
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    # No automatic gc or maintenance, and none detached into the background: a `git gc` left
    # running after set-up competed with the timed rounds for the disk and the CPU.
    for key, value in (("gc.auto", "0"), ("gc.autoDetach", "false"), ("maintenance.auto", "false")):
        git(root, "config", key, value)
    (root / ".gitignore").write_bytes(b"/build/\n*.log\n")
    paths: list[str] = []
    made_dirs: set[Path] = set()
    # One tracked file is the .gitignore itself.
    for i in range(files - 1):
        rel = _tracked_path(i)
        path = root / rel
        if path.parent not in made_dirs:
            path.parent.mkdir(parents=True, exist_ok=True)
            made_dirs.add(path.parent)
        if i % 1000 == 999:
            # A few relative symlinks: cp -a and the snapshot must keep them as links.
            os.symlink(Path(paths[-1]).name, path)
        else:
            path.write_bytes(_text(rng, 5, 400))
            if i % 97 == 0:
                path.chmod(0o755)
        paths.append(rel)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial import")
    if not loose:
        git(root, "repack", "-a", "-d", "-q")

    regular = [p for p in paths if not (root / p).is_symlink()]
    few = max(1, files // 100)
    modified = rng.sample(regular, few)
    for rel in modified:
        with (root / rel).open("ab") as handle:
            handle.write(b"uncommitted change\n")
    deleted = [p for p in rng.sample(regular, max(1, files // 2000)) if p not in modified]
    for rel in deleted:
        (root / rel).unlink()
    for i in range(few):
        target = root / ("notes" if i % 4 == 0 else Path(rng.choice(regular)).parent)
        target.mkdir(exist_ok=True)
        (target / f"untracked{i:04d}.txt").write_bytes(_text(rng, 5, 100))
    for i in range(few):
        if i % 2 == 0:
            target = root / "build" / f"obj{i % 7}" / f"out{i:04d}.o"
        else:
            target = root / Path(rng.choice(regular)).parent / f"debug{i:04d}.log"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(rng.randbytes(rng.randint(10, 2000)))
    settle(root)
    return {
        "tracked": files,
        "modified": len(modified),
        "deleted": len(deleted),
        "untracked": few,
        "ignored": few,
    }


def settle(root: Path, timeout: float = 300.0) -> None:
    """Wait for any gc git started on `root` (its gc.pid lock), then flush the written files to
    disk, so neither runs into the timed rounds."""
    lock = root / ".git" / "gc.pid"
    deadline = time.monotonic() + timeout
    while lock.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    os.sync()


def file_set(repo: Path) -> list[bytes]:
    """Tracked + untracked-not-ignored files that exist (deleted tracked files cannot be copied)."""
    out = git(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    names = dict.fromkeys(n for n in out.split(b"\0") if n)
    return [n for n in names if os.path.lexists(bytes(repo) + b"/" + n)]


def baseline_copy(repo: Path, names: list[bytes], dest: Path) -> None:
    dest.mkdir()
    proc = subprocess.run(
        ["xargs", "-0", "cp", "-a", "--reflink=auto", "--parents", "-t", str(dest), "--"],
        cwd=repo,
        input=b"\0".join(names),
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        raise BenchError(f"baseline cp failed: {proc.stderr.decode('utf-8', 'replace').strip()}")


def holon_snapshot(repo: Path, root: Path) -> int:
    """The same call and directory layout `holon.runner.run` uses; returns the file count."""
    from holon.runner.snapshot import take_snapshot

    root.mkdir()
    # Like run.py, the runner's private directory sits beside the run root, not under it.
    snap = take_snapshot(repo, root / "workspace", root.with_name(root.name + "-runner") / "git")
    return snap.files


def _inventory(top: Path, skip_git: bool) -> dict[str, tuple[str, int, str]]:
    """Every file and link under `top`: kind, permission bits and content (or link target) hash."""
    found: dict[str, tuple[str, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        if skip_git and here == top and ".git" in dirnames:
            dirnames.remove(".git")
        for name in filenames + [d for d in dirnames if (here / d).is_symlink()]:
            path = here / name
            info = path.lstat()
            rel = str(path.relative_to(top))
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", 0, os.readlink(path))
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                found[rel] = ("file", stat.S_IMODE(info.st_mode), digest)
    return found


def verify(repo: Path, names: list[bytes], work: Path) -> None:
    """Once, untimed: the snapshot holds exactly the files the baseline copy holds."""
    base = work / "verify-baseline"
    snap_root = work / "verify-holon"
    baseline_copy(repo, names, base)
    count = holon_snapshot(repo, snap_root)
    if count != len(names):
        raise BenchError(f"snapshot reports {count} files, the file set has {len(names)}")
    expected = _inventory(base, skip_git=False)
    actual = _inventory(snap_root / "workspace", skip_git=True)
    if expected != actual:
        missing = sorted(set(expected) - set(actual))[:5]
        extra = sorted(set(actual) - set(expected))[:5]
        differ = sorted(k for k in set(expected) & set(actual) if expected[k] != actual[k])[:5]
        raise BenchError(
            f"snapshot differs from the baseline copy: missing {missing}, extra {extra}, "
            f"different {differ}"
        )
    if len(expected) != len(names):
        raise BenchError(f"baseline copy has {len(expected)} files, expected {len(names)}")
    print(f"verified: snapshot and baseline copy hold the same {len(names)} files")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.snapshot", description=__doc__)
    parser.add_argument("--files", type=int, help=f"tracked files (default {DEFAULT_FILES})")
    parser.add_argument("--rounds", type=int, help=f"alternating rounds (default {MIN_ROUNDS})")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, check it works, do not judge the target"
    )
    parser.add_argument("--work-dir", type=Path, help="where to put the temporary repository")
    parser.add_argument(
        "--loose",
        action="store_true",
        help="leave every object of the repository loose (the reachable pack's costliest case)",
    )
    args = parser.parse_args(argv)
    if args.files is None:
        args.files = SMOKE_FILES if args.smoke else DEFAULT_FILES
    if args.rounds is None:
        args.rounds = SMOKE_ROUNDS if args.smoke else MIN_ROUNDS
    if args.files < 2:
        parser.error("--files must be at least 2")
    if args.rounds < 1 or (not args.smoke and args.rounds < MIN_ROUNDS):
        parser.error(f"--rounds must be at least {MIN_ROUNDS} (or use --smoke)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with scratch("holon-bench-snapshot-", args.work_dir) as tmp:
        work = Path(tmp)
        repo = work / "repo"
        try:
            print(f"building a {args.files}-file git repository in {repo} ...")
            shape = build_repo(repo, args.files, loose=args.loose)
            names = file_set(repo)
            print(
                "  {tracked} tracked, {modified} modified, {deleted} deleted, "
                "{untracked} untracked, {ignored} ignored; ".format(**shape)
                + f"file set to copy: {len(names)} files"
            )
            # The verification copy doubles as the warm-up of both sides.
            verify(repo, names, work)

            # Every run copies into a fresh directory, and all of them are deleted only at the end:
            # after a mass deletion ext4 scans its recently deleted inodes on every file creation
            # (`recently_deleted` in the inode allocator) for minutes, which made single copies
            # vary from 0.3 s to 4 s here and swamped what is being measured.
            def run_baseline(i: int) -> float:
                return timed(lambda: baseline_copy(repo, names, work / f"baseline-{i}"))

            def run_holon(i: int) -> float:
                return timed(lambda: holon_snapshot(repo, work / f"holon-{i}"))

            base, meas = alternate(args.rounds, run_baseline, run_holon)
            # rm -rf is much quicker than TemporaryDirectory's own clean-up on ~400,000 files.
            print("removing the copies ...")
            for child in work.iterdir():
                remove_tree(child)
        except BenchError as exc:
            print(f"benchmark failed: {exc}", file=sys.stderr)
            return 2
    title = (
        f"snapshot of a {args.files}-file repository with uncommitted changes "
        f"({len(names)} files copied, {args.rounds} alternating rounds, "
        f"{'all objects loose' if args.loose else 'objects packed'})"
    )
    return report(
        title,
        Samples("holon take_snapshot", meas),
        Samples("xargs -0 cp -a --reflink=auto --parents", base),
        TARGET,
        smoke=args.smoke,
        figure=f"take_snapshot, {len(names):,} files",
    )


def results(argv: list[str] | None = None) -> list[Row]:
    return collect(main, argv or [])[1]


if __name__ == "__main__":
    sys.exit(main())
