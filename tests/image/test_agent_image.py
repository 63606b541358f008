"""The agent image, built from local parts with the top-level Dockerfile, works as Holon's agent
image: Holon is installed for its non-root user, and the docker backend probes and runs an agent
in it end to end."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scripts import agent_image

pytestmark = [pytest.mark.docker, pytest.mark.slow]

HELLO_AGENT = "python3 -m holon.examples.hello_agent"


def in_image(client: Any, image: str, script: str) -> tuple[int, str]:
    """`sh -c script` in the image as its own user, no network; (exit code, output)."""
    container = client.containers.create(
        image, entrypoint=["sh", "-c", script], network_mode="none"
    )
    try:
        container.start()
        code = int(container.wait(timeout=60)["StatusCode"])
        return code, container.logs().decode(errors="replace")
    finally:
        container.remove(force=True)


def holon_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "holon", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_holon_is_installed_for_the_images_non_root_user(
    docker_client: Any, holon_image: str
) -> None:
    code, output = in_image(
        docker_client,
        holon_image,
        'id -u; python3 -c "import holon, sys; print(holon.__file__); print(sys.version_info[:2])"'
        "; holon --help; git --version; pwd",
    )
    assert code == 0, output
    lines = output.splitlines()
    assert lines[0] == "1000"
    assert lines[1] == "/opt/holon/lib/python3.11/site-packages/holon/__init__.py"
    assert lines[2] == "(3, 11)"
    assert "usage: holon" in output
    assert "git version" in output
    assert lines[-1] == "/holon/workspace"


def test_the_image_keeps_its_promises(docker_client: Any, holon_image: str) -> None:
    config = docker_client.images.get(holon_image).attrs["Config"]
    assert config["Entrypoint"] == ["holon", "agent"]
    assert config["User"] == "1000:1000"
    assert config["WorkingDir"] == "/holon/workspace"
    names = [entry.partition("=")[0] for entry in config["Env"]]
    assert not [name for name in names if "KEY" in name or "TOKEN" in name]


def test_a_second_build_reuses_the_image(docker_client: Any, holon_image: str) -> None:
    started = time.monotonic()
    assert agent_image.build(docker_client) == holon_image
    assert time.monotonic() - started < 30


REPLAY_ENV = "  env:\n    HOLON_ENGINE: replay\n    HOLON_REPLAY_SESSION: example:solve-calc\n"
DEMO = Path(__file__).resolve().parents[2] / "examples" / "solve" / "project"


def _spec(tmp_path: Path, env: str = REPLAY_ENV) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "version: v1\nkind: Holon\nmetadata:\n  name: image-solve\n"
        "  skills: [github-issue-solve]\ncontext:\n" + env + "goal:\n"
        "  description: add() returns the difference instead of the sum; fix it\n"
        "  issue_id: 1\n"
    )
    return spec


def test_the_images_own_entrypoint_probes_holon_agent(holon_image: str, tmp_path: Path) -> None:
    """`holon probe` through the docker backend and the image's entrypoint, `holon agent
    --probe`: ready with the replay engine's session, not ready (naming why) without."""
    probe = holon_cli("probe", "--image", holon_image, "--spec", str(_spec(tmp_path)), cwd=tmp_path)
    assert probe.returncode == 0, probe.stdout + probe.stderr
    assert "probe ok" in probe.stdout
    bare = _spec(tmp_path / "bare", env="  env: {HOLON_ENGINE: builtin}\n")
    refused = holon_cli("probe", "--image", holon_image, "--spec", str(bare), cwd=tmp_path)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "ANTHROPIC_API_KEY" in refused.stdout + refused.stderr


def test_a_replayed_skill_run_in_the_image_fixes_the_demo_project(
    holon_image: str, tmp_path: Path
) -> None:
    """github-issue-solve by `holon agent` in the image through the docker backend, the bundled
    session replayed: its commands run for real in the container, the test fails, the fix
    lands, the test passes, and the runner judges and records it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for source in DEMO.iterdir():
        (repo / source.name).write_text(source.read_text())
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    for step in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run([*git, *step], check=True)
    out = tmp_path / "out"
    run = holon_cli(
        "run", "--runtime", "docker", "--image", holon_image, "--network", "none",
        "--spec", str(_spec(tmp_path)), "--workspace", str(repo), "--output", str(out),
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["status"], manifest["outcome"]) == ("completed", "success")
    assert manifest["metadata"]["engine"]["model"] == "recorded-session"
    commands = [
        json.loads(x) for x in (out / "evidence" / "commands.ndjson").read_text().splitlines()
    ]
    assert [c["exit_code"] for c in commands] == [1, 0]
    assert "FAILED" in commands[0]["output_tail"]
    patch = (out / "diff.patch").read_text()
    assert "+    return a + b" in patch
    assert "__pycache__" not in patch
    record = json.loads((out / "run.json").read_text())
    assert record["runtime"] == "docker"
    assert record["closure"]["lifecycle_outcome"] == "finished"


def test_a_probe_that_fails_in_the_image_fails(holon_image: str, tmp_path: Path) -> None:
    """The probe above can fail: an agent that exits non-zero in the image is reported."""
    probe = holon_cli(
        "probe", "--image", holon_image, "--agent", "python3 -c 'raise SystemExit(3)'", cwd=tmp_path
    )
    assert probe.returncode != 0


def test_a_full_run_in_the_image_records_the_agents_change(
    holon_image: str, make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    repo = make_repo(dirty=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "version: v1\nkind: Holon\nmetadata:\n  name: image-run\n"
        "goal:\n  description: say hello from the agent image\n"
    )
    out = tmp_path / "out"
    run = holon_cli(
        "run", "--runtime", "docker", "--image", holon_image, "--agent", HELLO_AGENT,
        "--network", "none", "--spec", str(spec), "--workspace", str(repo), "--output", str(out),
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["outcome"] == "success"
    patch = (out / "diff.patch").read_text()
    assert "+++ b/HOLON_NOTES.md" in patch
    assert "+- Goal received: say hello from the agent image" in patch
    record = json.loads((out / "run.json").read_text())
    assert record["runtime"] == "docker"
