"""Two Holon processes on one machine running the same intent at once (the same event delivered
to two jobs of a self-hosted runner): each run's cleanup must end its own agent's processes
only. Before each execution had its own tag, the second net of the local runtime's reaper (the
run id in the environment) made the first run to finish kill the other's agent with SIGKILL,
which then failed its attempt ("agent exited with -9")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from holon.contract.layout import ENV_RUN_ID
from holon.runner import RunRequest, run
from tests.conftest import AGENT_SCRIPT, spec_for

RUN_ID = "act_0123456789abcdef01234567-1"


def test_a_run_ends_none_of_another_process_agent_of_the_same_run_id(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    # The other Holon's agent, still working: the same run id in its environment.
    other = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        env={**os.environ, ENV_RUN_ID: RUN_ID},
        start_new_session=True,
    )
    try:
        result = run(
            RunRequest(
                spec=spec_for("success"),
                workspace=make_repo(dirty=False),
                output=tmp_path / "out",
                runtime="local",
                agent=["sh", str(AGENT_SCRIPT)],
                work_dir=tmp_path,
                run_id=RUN_ID,
            )
        )
        assert result.status == "completed"
        assert other.poll() is None, f"the other process's agent was killed ({other.returncode})"
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()
