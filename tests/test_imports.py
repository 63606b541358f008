"""Light commands stay light: `holon --help` and `holon gateway normalize` import neither the docker
SDK, PyGithub nor jinja2 (the issue's "Performance" section).

Each command runs as a fresh process under `python -X importtime`, which lists every module the
interpreter imports, at any depth; a top-level `import docker` (or `import github`, `import
jinja2`) added to any module these commands load would show `docker` and its submodules there,
and the test would name the chain that pulled it in. The detector itself is checked on a process
that imports the docker SDK (through the docker backend) and jinja2, so a parser that finds
nothing cannot pass silently.

`holon action` needs PyGithub (with a token it talks to GitHub) and jinja2 (it renders the step
summary), but imports docker only when a skill runs with the docker runtime, and jinja2 only
from the function that renders (never as the import of a module it loads). An event that runs
no skill (`/holon help`, a plain comment) imports none of Holon's own heavier parts either: the
runner, publishing and its preview, the agent-context readers, the Agent Contract models and
the handoff (`LAZY`); a skill run imports them all, which checks the check.
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
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "tests/fixtures/octokit-webhooks/examples.json"
HEAVY = ("docker", "github", "jinja2")
# Holon's modules that `holon action` imports only when a pass needs them (a skill runs, a run
# is published or previewed, a run's context is collected, a subject's work is handed off).
LAZY = (
    "holon.runner",
    "holon.github.publish",  # publish.py and every publish_* module but the two below
    "holon.github.context",  # the readers: context, context_api, context_payload, ...
    "holon.contract",
    "holon.closure.handoff",
)
LIGHT = ("holon.github.publish_names", "holon.github.publish_policy")

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
    # The docker backend imports the SDK when it first talks to the engine (its preflight);
    # the skill prompt renderer imports jinja2 as a module import, which names the chain.
    code = "import holon.skills.prompt, holon.runner.docker_backend as b; b._sdk_errors()"
    _, stderr = run_importtime(["-c", code])
    found = heavy_imports(imported(stderr))
    assert any(c.startswith("docker ") or c == "docker" for c in found), found
    assert any(c.endswith("<- holon.skills.prompt") for c in found), found


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


# `holon action`: docker only when a skill runs with the docker runtime; jinja2 only when
# something is rendered (the step summary, a reply), i.e. imported by a function at run time
# (depth 0 in the listing), never as the import of a module `holon action` loads.


def _finish_only(path: Path) -> Path:
    turn = {
        "model": "recorded",
        "text": "Done.",
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 1, "output_tokens": 1},
        "tool_calls": [{"id": "c1", "name": "finish", "arguments": {"status": "success"}}],
    }
    path.write_text(json.dumps(turn) + "\n", encoding="utf-8")
    return path


def _action_imports(
    server: Any, tmp_path: Path, body: str, **env: str
) -> tuple[list[Imported], dict[str, str]]:
    from tests.actions.step_support import Step, payload

    def comment(data: dict[str, Any]) -> None:
        data["comment"]["body"] = body
        data["issue"].pop("pull_request", None)

    repo = server.state.repos["octocat/Hello-World"]
    repo.add_issue("Spelling error in the README file", user="Codertocat")
    repo.permissions["Codertocat"] = "write"
    step = Step(tmp_path / "step", "issue_comment", payload("issue_comment", "created", c=comment))
    step.server = server
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "holon", "action"],
        env=step.environ(**env),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "holon action: exit" in proc.stdout  # it ran to its end, not a refusal
    return imported(proc.stderr), step.outputs()


def lazy_imports(modules: list[Imported]) -> list[str]:
    """The `LAZY` modules imported, each with the chain that pulled it in."""
    return [
        chain(modules, i)
        for i, m in enumerate(modules)
        if m.name.startswith(LAZY) and m.name not in LIGHT
    ]


def _first_import(modules: list[Imported], top: str) -> Imported | None:
    """The package's own line (its submodules are listed before it, deeper)."""
    return next((m for m in modules if m.name == top), None)


@pytest.mark.parametrize("body", ["/holon help", "You are totally right!"])
def test_holon_action_without_a_skill_run_imports_no_docker_and_jinja2_only_to_render(
    github_server: Any, tmp_path: Path, body: str
) -> None:
    # The docker runtime is the default; with no skill run it is never started.
    modules, outputs = _action_imports(github_server, tmp_path, body, HOLON_RUNTIME="docker")
    assert outputs["runs"] == "[]"
    assert _first_import(modules, "docker") is None, heavy_imports(modules)
    jinja2 = _first_import(modules, "jinja2")
    # The step summary is rendered (and the usage reply): from a function, at run time.
    assert jinja2 is not None
    assert jinja2.depth == 0, heavy_imports(modules)
    # No skill runs: no runner, publishing, preview, context readers, contract or handoff.
    assert lazy_imports(modules) == []


def test_holon_action_running_a_skill_locally_imports_no_docker(
    github_server: Any, tmp_path: Path
) -> None:
    session = _finish_only(tmp_path / "session.ndjson")
    modules, outputs = _action_imports(
        github_server,
        tmp_path,
        "/holon solve",
        HOLON_RUNTIME="local",
        HOLON_ENGINE="replay",
        HOLON_REPLAY_SESSION=str(session),
    )
    assert "github-issue-solve" in outputs["runs"]  # a skill did run
    assert _first_import(modules, "docker") is None, heavy_imports(modules)
    # The control of the check above: a run imports what a pass without one must not (this
    # run changes nothing, so nothing is published; publishing is exercised in tests/serve).
    assert {"holon.runner", "holon.contract", "holon.closure.handoff"} <= {m.name for m in modules}
    assert lazy_imports(modules) != []


@pytest.mark.docker
def test_holon_action_imports_docker_when_a_skill_runs_in_a_container(
    github_server: Any, tmp_path: Path, agent_image: str
) -> None:
    # The positive control of the tests above: with a skill run in the docker runtime, docker
    # is imported, by the function that starts the run (the backend at depth 0).
    modules, outputs = _action_imports(
        github_server,
        tmp_path,
        "/holon solve",
        HOLON_RUNTIME="docker",
        HOLON_AGENT_IMAGE=agent_image,
    )
    assert "github-issue-solve" in outputs["runs"]
    backend = _first_import(modules, "holon.runner.docker_backend")
    assert backend is not None
    assert backend.depth == 0
    assert _first_import(modules, "docker") is not None


# What `holon run --runtime docker` must not load before its agent starts, on the thread that
# starts it: the docker SDK (with requests, urllib3 and ssl) loads in the engine preflight,
# beside the snapshot's git work, and the run record's, closure's and manifest's models load
# beside the running agent (holon/runner/run.py); the model key proxy only with a model key.
LATER = (
    "docker",
    "requests",
    "urllib3",
    "holon.runner.record",
    "holon.closure",
    "holon.contract.manifest",
    "holon.runner.model_proxy",
    "holon.skills.resolve",
    # A run given no skill (most runs) loads no skill models, catalog or folder reader: the
    # request's `skills` are validated by them only when there are any (holon/runner/run.py).
    "holon.skills",
    "holon.runner.skills",
)
RUN_START = (
    "import holon.cli.main, holon.cli.run_cmd, holon.runner, holon.contract.spec\n"
    "from holon.runner.backend import BackendOptions, make_backend\n"
    "make_backend('docker', BackendOptions(image='x'))\n"
    "from holon.runner import RunRequest\n"
    "spec = holon.contract.spec.parse_spec('version: v1\\nkind: Holon\\ngoal: {description: d}')\n"
    "RunRequest(spec=spec, workspace='.', output='out', image='x')\n"
)


def _later(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in LATER)


def test_holon_run_loads_the_sdk_and_the_record_beside_the_work_not_before() -> None:
    _, stderr = run_importtime(["-c", RUN_START])
    modules = imported(stderr)
    # The control: the listing holds the run's start (the docker backend made).
    assert any(m.name == "holon.runner.docker_backend" for m in modules)
    early = [chain(modules, i) for i, m in enumerate(modules) if _later(m.name)]
    assert early == []


def test_holon_run_help_imports_no_heavy_module() -> None:
    stdout, stderr = run_importtime(["-m", "holon", "run", "--help"])
    assert "--runtime" in stdout
    modules = imported(stderr)
    # The control: the run command's own imports are listed (importlib.import_module, which
    # loads the command, is not itself reported by -X importtime).
    assert any(m.name == "holon.cli._common" for m in modules)
    assert heavy_imports(modules) == []
    assert [m.name for m in modules if _later(m.name)] == []


# pydantic reads the signature of every default factory when it builds a model; a builtin's
# (`list`, `dict`) is parsed from its text signature, and the first parse compiles the
# tokenizer's patterns: about 3 ms of `holon run`'s start, spent before its agent starts when
# any model built then (the spec's, the request's, a skill's) names one (holon/validation.py).
MODELS_BEFORE_THE_START = """
import inspect, tokenize
compiled = []
real = tokenize._compile
tokenize._compile = lambda expr: compiled.append(expr) or real(expr)
import holon.cli.main, holon.cli.run_cmd
from holon.contract.spec import parse_spec
from holon.runner import RunRequest
spec = parse_spec("version: v1\\nkind: Holon\\ngoal:\\n  description: d\\n")
RunRequest(spec=spec, workspace=".", output="out", image="x")
print(len(compiled))
inspect.signature(list)  # the control: the detector sees a builtin's signature parsed
print(len(compiled))
"""


def test_the_models_built_before_a_run_starts_parse_no_builtin_signature() -> None:
    stdout, _ = run_importtime(["-c", MODELS_BEFORE_THE_START])
    before, control = (int(n) for n in stdout.split())
    assert control > 0
    assert before == 0
