"""The scripts of action.yml's own steps, run for real with bash: the agent image is used when
present, else pulled, else built from the action's Dockerfile (docker and the installer's Python
are stand-ins that record what they were asked); the state bundle is staged for the cache only
when there is one."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]

FAKE_DOCKER = """#!/bin/sh
echo "$*" >> "$FAKE_LOG"
case "$1" in
  image) exit "${FAKE_INSPECT:-1}" ;;
  pull) exit "${FAKE_PULL:-1}" ;;
  build)
    for last in "$@"; do :; done
    ls -A "$last" >> "$FAKE_LOG"
    ls -A "$last/dist" >> "$FAKE_LOG"
    exit "${FAKE_BUILD:-0}" ;;
esac
exit 0
"""

# The venv's Python, as the image step uses it: the version, and `pip wheel ... -w DIR SRC`.
FAKE_PYTHON = """#!/bin/sh
if [ "$1" = -c ]; then echo 9.8.7; exit 0; fi
echo "python $*" >> "$FAKE_LOG"
while [ $# -gt 0 ]; do
  if [ "$1" = -w ]; then dir=$2; fi
  shift
done
touch "$dir/holon-9.8.7-py3-none-any.whl"
"""


def _step(step_id: str) -> dict[str, Any]:
    steps = yaml.safe_load((REPO / "action.yml").read_text())["runs"]["steps"]
    return next(s for s in steps if s.get("id") == step_id)


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


class Step:
    """One step's `run:` under bash with the environment the runner would give it."""

    def __init__(self, step_id: str, tmp: Path) -> None:
        self.script = _step(step_id)["run"]
        self.tmp = tmp
        self.bin = tmp / "bin"
        self.bin.mkdir()
        self.log = tmp / "log"
        self.log.touch()
        self.output = tmp / "github_output"
        self.output.touch()
        self.temp = tmp / "runner_temp"
        self.temp.mkdir()

    def run(self, **env: str) -> subprocess.CompletedProcess[str]:
        full = {
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "FAKE_LOG": str(self.log),
            "GITHUB_OUTPUT": str(self.output),
            "RUNNER_TEMP": str(self.temp),
            **env,
        }
        return subprocess.run(
            # As the runner starts a `shell: bash` step.
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", self.script],
            env=full,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )

    def outputs(self) -> dict[str, str]:
        lines = self.output.read_text().splitlines()
        return dict(line.split("=", 1) for line in lines)


@pytest.fixture
def image_step(tmp_path: Path) -> Step:
    step = Step("image", tmp_path)
    _executable(step.bin / "docker", FAKE_DOCKER)
    return step


def _image_env(step: Step, **extra: str) -> dict[str, str]:
    python = _executable(step.tmp / "python", FAKE_PYTHON)
    return {
        "HOLON_ACTION_PATH": str(REPO),
        "HOLON_PYTHON": str(python),
        "HOLON_AGENT_IMAGE": "",
        "HOLON_ENGINE": "",
        **extra,
    }


def test_an_image_already_present_is_used(image_step: Step) -> None:
    done = image_step.run(**_image_env(image_step), FAKE_INSPECT="0")
    assert done.returncode == 0, done.stderr
    assert image_step.outputs() == {"image": "ghcr.io/holon-run/holon-agent:9.8.7"}
    assert image_step.log.read_text().splitlines() == [
        "image inspect ghcr.io/holon-run/holon-agent:9.8.7"
    ]


def test_an_absent_image_is_pulled(image_step: Step) -> None:
    done = image_step.run(**_image_env(image_step, HOLON_AGENT_IMAGE="mine:1"), FAKE_PULL="0")
    assert done.returncode == 0, done.stderr
    assert image_step.outputs() == {"image": "mine:1"}
    assert image_step.log.read_text().splitlines() == [
        "image inspect mine:1",
        "pull --quiet mine:1",
    ]


@pytest.mark.parametrize(
    ("engine", "clis"), [("", "0"), ("replay", "0"), ("claude-code", "1"), ("codex", "1")]
)
def test_an_image_that_cannot_be_pulled_is_built_from_the_actions_dockerfile(
    image_step: Step, engine: str, clis: str
) -> None:
    done = image_step.run(**_image_env(image_step, HOLON_ENGINE=engine))
    assert done.returncode == 0, done.stderr
    context = image_step.temp / "holon" / "image"
    image = "ghcr.io/holon-run/holon-agent:9.8.7"
    log = image_step.log.read_text().splitlines()
    assert log[:3] == [
        f"image inspect {image}",
        f"pull --quiet {image}",
        f"python -m pip wheel --quiet --no-deps -w {context}/dist {REPO}",
    ]
    assert log[3] == f"build --quiet --build-arg ENGINE_CLIS={clis} --tag {image} {context}"
    # The build context is the Dockerfile, its ignore file and the wheel: nothing else of the
    # action's checkout reaches the builder.
    assert log[4:] == [".dockerignore", "Dockerfile", "dist", "holon-9.8.7-py3-none-any.whl"]
    assert (context / "Dockerfile").read_bytes() == (REPO / "Dockerfile").read_bytes()
    assert image_step.outputs() == {"image": image}


def test_a_failed_build_fails_the_step(image_step: Step) -> None:
    done = image_step.run(**_image_env(image_step), FAKE_BUILD="1")
    assert done.returncode != 0
    assert image_step.outputs() == {}


def test_the_state_bundle_is_staged_for_the_cache_only_when_there_is_one(tmp_path: Path) -> None:
    step = Step("stage-cache", tmp_path)
    upload, cache = tmp_path / "upload", tmp_path / "cache"
    env = {"HOLON_UPLOAD_DIR": str(upload), "HOLON_CACHE_DIR": str(cache)}
    assert step.run(**env).returncode == 0  # no bundle at all
    upload.mkdir()
    assert step.run(**env).returncode == 0  # an empty one
    assert step.outputs() == {}
    assert not cache.exists()
    (upload / "state.json").write_text("{}")
    cache.mkdir()
    (cache / "stale.json").write_text("old")  # the restored entry is replaced, not merged into
    done = step.run(**env)
    assert done.returncode == 0, done.stderr
    assert step.outputs() == {"ready": "true"}
    assert sorted(p.name for p in cache.iterdir()) == ["state.json"]


def test_the_pip_key_is_the_hash_of_the_actions_pyproject(tmp_path: Path) -> None:
    step = Step("pip-key", tmp_path)
    done = step.run(HOLON_ACTION_PATH=str(REPO))
    assert done.returncode == 0, done.stderr
    want = hashlib.sha256((REPO / "pyproject.toml").read_bytes()).hexdigest()
    assert step.outputs() == {"hash": want}


def test_the_install_step_reports_the_venvs_holon(tmp_path: Path) -> None:
    # Not installed for real here (that needs an index); the step's contract with the later
    # steps is its two outputs, under RUNNER_TEMP.
    step = Step("install", tmp_path)
    python = _executable(
        tmp_path / "python3",
        '#!/bin/sh\nmkdir -p "$3/bin"\nprintf "#!/bin/sh\\n" > "$3/bin/python"\n'
        'chmod +x "$3/bin/python"\n',
    )
    done = step.run(HOLON_ACTION_PATH=str(REPO), HOLON_PYTHON=str(python))
    assert done.returncode == 0, done.stderr
    venv = step.temp / "holon" / "venv"
    assert step.outputs() == {"holon": f"{venv}/bin/holon", "python": f"{venv}/bin/python"}
    assert os.access(venv / "bin" / "python", os.X_OK)


_OUTPUT_VALUE = re.compile(
    r"\$\{\{ steps\.(?P<first>[\w-]+)\.outputs\.(?P<a>\w+) \|\| "
    r"steps\.(?P<second>[\w-]+)\.outputs\.(?P<b>\w+) \}\}"
)


def _output(value: str, steps: dict[str, dict[str, str]]) -> str:
    """An output's `a || b` as Actions evaluates it: a step that wrote nothing (cancelled, or
    failed first) has no outputs, and an empty string is falsy, so `||` takes the second."""
    match = _OUTPUT_VALUE.fullmatch(value)
    assert match is not None, value
    first = steps.get(match["first"], {}).get(match["a"], "")
    return first or steps.get(match["second"], {}).get(match["b"], "")


def test_outputs_fall_back_to_the_cleanup_when_the_main_step_wrote_none() -> None:
    outputs = yaml.safe_load((REPO / "action.yml").read_text())["outputs"]
    settled = {name: f"cleanup {name}" for name in outputs}
    finished = {name: f"main {name}" for name in outputs}
    for name, spec in outputs.items():
        value = str(spec["value"])
        # Cancelled: the main step wrote nothing, the cleanup settled and wrote its outputs.
        assert _output(value, {"cleanup": settled}) == f"cleanup {name}"
        # Finished: the cleanup did nothing (it writes no output then); the main step's stand.
        assert _output(value, {"holon": finished}) == f"main {name}"
        assert _output(value, {"holon": finished, "cleanup": settled}) == f"main {name}"


def test_the_holon_and_cleanup_steps_run_holon_action_with_their_phase(tmp_path: Path) -> None:
    for step_id, phase in (("holon", "main"), ("cleanup", "cleanup")):
        (tmp_path / step_id).mkdir()
        step = Step(step_id, tmp_path / step_id)
        fake = _executable(
            step.tmp / "holon",
            '#!/bin/sh\necho "$* $HOLON_PHASE $HOLON_DEFAULT_BRANCH" >> "$FAKE_LOG"\n',
        )
        env = {k: v for k, v in _step(step_id)["env"].items() if "${{" not in str(v)}
        done = step.run(**env, HOLON_BIN=str(fake), HOLON_DEFAULT_BRANCH="main")
        assert done.returncode == 0, done.stderr
        assert step.log.read_text() == f"action {phase} main\n"
