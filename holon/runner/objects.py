"""The objects a snapshot borrows: one pack of what its refs and index reach, nothing else.

The original object store also holds what was never meant to be shared: the blob of a `.env`
added and then unstaged stays there, dangling, until git prunes it. Borrowing that store whole
would let the agent read every such object, and in the `local` runtime write into it. So the
snapshot borrows a pack built for the run instead: `git pack-objects --all --indexed-objects`
in the original (everything reachable from its refs, HEAD and index, the objects its own
alternates lend included), written into the run root. Objects already packed in the original are
copied as they are; loose ones are compressed at the fastest level and no deltas are searched, so
the cost is one read of the reachable objects, running while the files are copied.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from holon.runner.git import GitError, git_command, git_env


def _quoted(path: str) -> str:
    """A path as GIT_ALTERNATE_OBJECT_DIRECTORIES takes it: C-quoted when it holds a colon."""
    if ":" not in path and not path.startswith('"'):
        return path
    escaped = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


class ReachablePack:
    """`git pack-objects` into `dest/pack`, started now and finished by `wait()`."""

    def __init__(self, git_dir: Path, work_tree: Path, stores: list[str], dest: Path) -> None:
        (dest / "pack").mkdir(parents=True)  # `dest` itself may exist, empty
        (dest / "info").mkdir()
        self.proc = subprocess.Popen(
            git_command(
                [
                    "pack-objects",
                    "--all",
                    "--indexed-objects",
                    # Promised objects of a partial clone are missing by design; never fetched.
                    "--missing=allow-promisor",
                    "--window=0",
                    "--compression=1",
                    "--delta-base-offset",
                    "-q",
                    str(dest / "pack" / "pack"),
                ]
            ),
            cwd=work_tree,
            # The pack's own store is the object directory and the original's are alternates:
            # git writes its temporary files in the object directory, which must be ours (and
            # on the destination's filesystem), never the original's.
            env=git_env(
                {
                    "GIT_DIR": str(git_dir),
                    "GIT_WORK_TREE": str(work_tree),
                    "GIT_OBJECT_DIRECTORY": str(dest),
                    "GIT_ALTERNATE_OBJECT_DIRECTORIES": ":".join(_quoted(s) for s in stores),
                }
            ),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def wait(self) -> None:
        _, err = self.proc.communicate()
        if self.proc.returncode != 0:
            lines = err.decode("utf-8", "replace").strip().splitlines()
            raise GitError(f"git pack-objects failed: {lines[-1] if lines else 'no output'}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()  # reaps it and closes the pipe
