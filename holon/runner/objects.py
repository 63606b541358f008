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


class ReachablePack:
    """`git pack-objects` into `dest/pack`, started now and finished by `wait()`."""

    def __init__(self, git_dir: Path, work_tree: Path, dest: Path) -> None:
        (dest / "pack").mkdir(parents=True)
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
            env=git_env({"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(work_tree)}),
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
            self.proc.wait()
