"""Hostile corpus: arguments and environment values that are not UTF-8.

Python hands such bytes to Holon as lone surrogates (`\\xff` becomes `\\udcff`); they reached the
JSON of an envelope, a pause record or a run record and ended in exit 70, `holon run --output` only
after the agent had run. Every argument is now checked before anything runs: one that is not UTF-8
is refused in one line naming its flag (exit 64), and so is a `--secret-env` value (never shown).
A user name that is not UTF-8 is recorded readable (U+FFFD) instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gateway.conftest import example

REPO = Path(__file__).resolve().parents[2]
HELLO_SPEC = REPO / "examples" / "hello" / "spec.yaml"


def _holon(
    argv: list[str | bytes], tmp_path: Path, **env: str | bytes
) -> subprocess.CompletedProcess[bytes]:
    """`holon` with `argv` as bytes, as a shell passes them."""
    full: dict[str | bytes, str | bytes] = {**os.environ, "HOLON_LOG_DIR": str(tmp_path / "logs")}
    full.update(env)
    head: list[str | bytes] = [sys.executable, "-c", "from holon.cli.main import entry; entry()"]
    return subprocess.run(
        [os.fsencode(a) for a in [*head, *argv]],
        capture_output=True,
        env={os.fsencode(k): os.fsencode(v) for k, v in full.items()},
        cwd=tmp_path,
        timeout=60,
        check=False,
    )


def _assert_one_line_64(proc: subprocess.CompletedProcess[bytes], tmp_path: Path, text: str) -> str:
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 64, err
    assert err.count("\n") == 1, err
    assert err.startswith("holon: error: "), err
    assert text in err, err
    assert proc.stdout == b""
    assert not (tmp_path / "logs").exists()
    return err


@pytest.fixture
def agent(tmp_path: Path) -> tuple[str, Path]:
    """An agent command that leaves a mark when it runs."""
    mark = tmp_path / "agent-ran"
    script = tmp_path / "agent.py"
    script.write_text(f"open({str(mark)!r}, 'w').write('ran')\n")
    return f"{sys.executable} {script}", mark


def _run(agent: str, *more: str | bytes) -> list[str | bytes]:
    return [
        *("run", "--spec", str(HELLO_SPEC), "--runtime", "local", "--agent", agent),
        *more,
    ]


# Each row: the argv (AGENT stands for the marking agent) and the flag the refusal names.
ARGV: dict[str, tuple[list[str | bytes], str]] = {
    "run-output": (
        _run("AGENT", "--workspace", "ws", "--output", b"ox\xff"),
        "--output: 'ox\\xff' is not valid UTF-8",
    ),
    "run-output-equals": (
        _run("AGENT", "--workspace", "ws", b"--output=ox\xff"),
        "--output: 'ox\\xff' is not valid UTF-8",
    ),
    "run-workspace": (
        _run("AGENT", "--workspace", b"ws\xfe", "--output", "out"),
        "--workspace: 'ws\\xfe' is not valid UTF-8",
    ),
    "run-agent": (
        [
            *("run", "--spec", str(HELLO_SPEC), "--runtime", "local"),
            *("--agent", b"/bin/echo \xff", "--workspace", "ws", "--output", "out"),
        ],
        "--agent: '/bin/echo \\xff' is not valid UTF-8",
    ),
    "run-spec": (
        ["run", "--spec", b"s\xff.yaml", "--workspace", "ws", "--output", "out"],
        "--spec: 's\\xff.yaml' is not valid UTF-8",
    ),
    "gateway-delivery": (
        [
            *("gateway", "normalize", "--event", "issues", "--payload", "ev.json"),
            "--delivery",
            b"\xff",
        ],
        "--delivery: '\\xff' is not valid UTF-8",
    ),
    "gateway-event": (
        ["gateway", "normalize", "--event", b"issues\xff", "--payload", "ev.json"],
        "--event: 'issues\\xff' is not valid UTF-8",
    ),
    "serve-pause-reason": (
        ["serve", "pause", "--state-dir", "state", "--reason", b"\xff"],
        "--reason: '\\xff' is not valid UTF-8",
    ),
    "closure-positional": (
        ["closure", "derive", b"\xff.json"],
        "argument 3: '\\xff.json' is not valid UTF-8",
    ),
}


@pytest.mark.parametrize("case", sorted(ARGV))
def test_an_argument_that_is_not_utf8_is_refused_before_anything_runs(
    case: str, tmp_path: Path, agent: tuple[str, Path]
) -> None:
    argv, expected = ARGV[case]
    command, mark = agent
    (tmp_path / "ws").mkdir()
    os.mkdir(os.fsencode(tmp_path) + b"/ws\xfe")  # exists: still refused, as its name is
    (tmp_path / "ev.json").write_text(json.dumps(example("issues", "opened")))
    argv = [command if a == "AGENT" else a for a in argv]
    proc = _holon(argv, tmp_path)
    _assert_one_line_64(proc, tmp_path, expected)
    assert not mark.exists()
    assert not (tmp_path / "state").exists()
    assert not [p for p in os.listdir(os.fsencode(tmp_path)) if p.startswith(b"o")]


@pytest.mark.parametrize(
    "argv",
    [
        _run("AGENT", "--workspace", "ws", "--output", "out", "--secret-env", "SECRET_X"),
        ["serve", "--state-dir", "state", "--listen", "127.0.0.1:0", "--secret-env", "SECRET_X"],
        [
            *("gateway", "normalize", "--event", "issues", "--payload", "ev.json"),
            *("--signature", "sha256=" + "0" * 64, "--secret-env", "SECRET_X"),
        ],
    ],
    ids=["run", "serve-listen", "gateway-signature"],
)
def test_a_secret_env_value_that_is_not_utf8_is_refused_unshown(
    argv: list[str | bytes], tmp_path: Path, agent: tuple[str, Path]
) -> None:
    command, mark = agent
    (tmp_path / "ws").mkdir()
    (tmp_path / "ev.json").write_text(json.dumps(example("issues", "opened")))
    argv = [command if a == "AGENT" else a for a in argv]
    proc = _holon(argv, tmp_path, SECRET_X=b"abc\xffdefghij")
    err = _assert_one_line_64(proc, tmp_path, "--secret-env SECRET_X: the value is not valid UTF-8")
    assert "abc" not in err
    assert "defghij" not in err
    assert not mark.exists()
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "state").exists()


def test_a_user_name_that_is_not_utf8_is_recorded_readable(tmp_path: Path) -> None:
    proc = _holon(
        ["serve", "pause", "--state-dir", "state", "--reason", "maintenance"],
        tmp_path,
        USER=b"ops\xff",
    )
    assert proc.returncode == 0, proc.stderr
    state = json.loads((tmp_path / "state" / "state.json").read_text(encoding="utf-8"))
    assert state["records"]["pause:serve"]["data"]["by"] == "ops\ufffd"
    assert not (tmp_path / "logs").exists()
