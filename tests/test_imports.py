"""Light commands stay light: `holon --help` and `holon gateway normalize` import neither the docker
SDK, PyGithub nor jinja2 (the issue's "Performance" section).

Each command runs as a fresh process under `python -X importtime`, which lists every module the
interpreter imports, at any depth; a top-level `import docker` (or `import github`, `import
jinja2`) added to any module these commands load would show `docker` and its submodules there,
and the test would name the chain that pulled it in. The detector itself is checked on a process
that does import the docker backend, so a parser that finds nothing cannot pass silently.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "tests/fixtures/octokit-webhooks/examples.json"
HEAVY = ("docker", "github", "jinja2")

_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|( *)(\S+)\s*$")


@dataclass(frozen=True)
class Imported:
    depth: int
    name: str


def imported(stderr: str) -> list[Imported]:
    """Every module `-X importtime` reported, in its order (a module's imports come before it)."""
    found = []
    for line in stderr.splitlines():
        match = _LINE.match(line)
        if match:
            found.append(Imported(len(match.group(1)) // 2, match.group(2)))
    return found


def chain(modules: list[Imported], index: int) -> str:
    """`docker <- holon.runner.docker_backend <- ...`: who imported the module at `index`."""
    names, depth = [modules[index].name], modules[index].depth
    for module in modules[index + 1 :]:
        if module.depth < depth:
            names.append(module.name)
            depth = module.depth
        if depth == 0:
            break
    return " <- ".join(names)


def heavy_imports(modules: list[Imported]) -> list[str]:
    return [chain(modules, i) for i, m in enumerate(modules) if m.name.split(".")[0] in HEAVY]


def run_importtime(args: list[str], *, env: dict[str, str] | None = None) -> tuple[str, str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr


def issue_comment(tmp_path: Path) -> Path:
    entries = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    payload = next(e for e in entries if e["name"] == "issue_comment")["examples"][0]
    path = tmp_path / "issue_comment.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_the_detector_sees_a_heavy_import_and_its_chain() -> None:
    _, stderr = run_importtime(["-c", "import holon.runner.docker_backend"])
    found = heavy_imports(imported(stderr))
    assert any(c.startswith("docker ") or c == "docker" for c in found), found
    assert any(c.endswith("<- holon.runner.docker_backend") for c in found), found


def test_holon_help_imports_no_heavy_module() -> None:
    stdout, stderr = run_importtime(["-m", "holon", "--help"])
    assert "gateway" in stdout
    modules = imported(stderr)
    assert any(m.name == "holon.cli.main" for m in modules)  # the listing is real
    assert heavy_imports(modules) == []


@pytest.mark.parametrize("signed", [False, True], ids=["unsigned", "signed"])
def test_gateway_normalize_imports_no_heavy_module(tmp_path: Path, signed: bool) -> None:
    payload = issue_comment(tmp_path)
    args = ["-m", "holon", "gateway", "normalize", "--event", "issue_comment"]
    args += ["--payload", str(payload), "--delivery", "d-1"]
    env: dict[str, str] = {}
    if signed:
        secret = "imports-test-secret"
        digest = hmac.new(secret.encode(), payload.read_bytes(), hashlib.sha256).hexdigest()
        args += ["--signature", f"sha256={digest}", "--secret-env", "HOLON_TEST_SECRET"]
        env["HOLON_TEST_SECRET"] = secret
    stdout, stderr = run_importtime(args, env=env)
    assert json.loads(stdout)["type"] == "github.issue_comment.created"
    modules = imported(stderr)
    assert any(m.name == "holon.gateway.github" for m in modules)
    assert heavy_imports(modules) == []
