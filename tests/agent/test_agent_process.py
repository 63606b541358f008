"""`holon agent` as a process of its own: the installed command, SIGTERM mid-run, and a model
command that looks for the key in its environment and in the agent's /proc."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.agent.fakes import KEY, Layout, make_layout

ROOT = Path(__file__).resolve().parents[2]
HOLON = ROOT / ".venv" / "bin" / "holon"


def _manifest(layout: Layout) -> dict[str, object]:
    data: dict[str, object] = json.loads((layout.output / "manifest.json").read_text())
    return data


def test_the_installed_command_fails_fast_without_a_session(tmp_path: Path) -> None:
    layout = make_layout(tmp_path, git=False)
    env = layout.env(HOLON_ENGINE="replay", ANTHROPIC_API_KEY=KEY)
    done = subprocess.run(
        [str(HOLON), "agent"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1, done.stderr
    manifest = _manifest(layout)
    assert manifest["outcome"] == "failure"
    assert manifest["error"] == (
        "engine replay cannot run: HOLON_REPLAY_SESSION is not set: the replay engine needs a "
        "recorded session"
    )
    assert (layout.output / "summary.md").is_file()


def test_the_installed_probe_names_an_unknown_engine(tmp_path: Path) -> None:
    layout = make_layout(tmp_path, git=False)
    done = subprocess.run(
        [str(HOLON), "agent", "--probe", "--engine", "nope"],
        env=layout.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert str(_manifest(layout)["error"]).startswith("probe: unknown engine 'nope'")


def _agent(
    scenario: str, layout: Layout, *flags: str, as_nobody: bool = False
) -> subprocess.Popen[str]:
    env = layout.env(ANTHROPIC_API_KEY=KEY)
    argv = [sys.executable, "-m", "tests.agent.fake_agent", scenario, *flags]
    if as_nobody:
        # Root reads any process's /proc whatever it is; the user a model's commands run as
        # is the agent's own, so both run as nobody here.
        site = next((ROOT / ".venv" / "lib").glob("python3*/site-packages"))
        argv = [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}",
            *argv[1:],
        ]
        env["PYTHONPATH"] = f"{site}:{ROOT}"
    return subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_sigterm_mid_run_writes_a_terminated_manifest(tmp_path: Path) -> None:
    layout = make_layout(tmp_path, git=False)
    proc = _agent("sleep", layout)
    deadline = time.monotonic() + 20
    while not (layout.output / "started").exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert time.monotonic() - sent < 2.0  # within docker stop's grace
    assert proc.returncode == 1, err
    manifest = _manifest(layout)
    assert manifest["outcome"] == "failure"
    assert manifest["error"] == "terminated (SIGTERM) before the run finished"
    transcript = (layout.output / "evidence/transcript.ndjson").read_text()
    assert '"sleeping"' in transcript


def _peek_layout() -> Layout:
    # Somewhere nobody can reach: the test's own temp dir (world-writable), not pytest's.
    root = Path(tempfile.mkdtemp(prefix="agent-peek-"))
    root.chmod(0o755)
    layout = make_layout(root, git=False)
    for path in (layout.input, layout.workspace, layout.output):
        path.chmod(0o777)
    (layout.input / "spec.yaml").chmod(0o644)
    return layout


def _peek(*flags: str) -> str:
    as_nobody = os.geteuid() == 0
    if as_nobody and not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: cannot run the agent as another user")
    layout = _peek_layout()
    proc = _agent("peek", layout, *flags, as_nobody=as_nobody)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 1), err
    summary = (layout.output / "summary.md").read_text()
    for path in sorted(layout.output.rglob("*")):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path
    return summary


def test_a_model_command_cannot_see_the_key() -> None:
    summary = _peek()
    assert "env:no proc:no" in summary


def test_without_hardening_the_key_is_readable_from_proc() -> None:
    # The control: the same command does find the key when the agent stays dumpable, so the
    # test above can fail.
    summary = _peek("--soft")
    assert "env:no proc:yes" in summary
