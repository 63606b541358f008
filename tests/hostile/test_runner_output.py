"""Hostile corpus: the runner's handling of what the agent leaves behind, its processes, its output,
and the secrets it was given.

Each case is an agent (a shell script run by the local runtime, which gives the agent the invoking
user's full powers, so this is the hardest case for Holon) or an input; the assertions are the safe
outcome: nothing outside the output directory is read or written through the agent's links, no
process survives the run, no forwarded secret reaches a record, bad input is one line and exit 64.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from holon.cli.main import main
from holon.runner import RunRequest, RunResult, run
from tests.conftest import spec_for

SECRET = "ghp_HostileCorpusSecret0123456789abcd"
PRECIOUS = "host-content-the-agent-must-not-reach\n"
MANIFEST_OK = (
    'printf \'{"status":"completed","outcome":"success"%s}\' "$EXTRA"'
    ' > "$HOLON_OUTPUT_DIR/manifest.json"'
)


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A host directory with a precious file, outside the run's output."""
    place = tmp_path / "host"
    place.mkdir()
    (place / "precious.txt").write_text(PRECIOUS)
    (place / "dir").mkdir()
    return place


@pytest.fixture
def work_dir(tmp_path: Path) -> Iterator[Path]:
    """The run root on another filesystem than the output when there is one (/dev/shm), so that
    a move of Holon's files would become a copy, the case that once followed the agent's links."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        yield tmp_path
        return
    work = Path(tempfile.mkdtemp(prefix="holon-hostile-", dir=shm))
    yield work
    shutil.rmtree(work, ignore_errors=True)


@pytest.fixture
def agent(
    make_repo: Callable[..., Path], tmp_path: Path, work_dir: Path
) -> Callable[..., RunResult]:
    repo = make_repo(dirty=False)

    def go(script: str, *, artifacts: list[Any] | None = None, **kw: Any) -> RunResult:
        spec = spec_for("hostile", output={"artifacts": artifacts or []})
        request = RunRequest(
            spec=spec,
            workspace=repo,
            output=tmp_path / "out",
            runtime="local",
            agent=["sh", "-c", script],
            work_dir=work_dir,
            **kw,
        )
        return run(request)

    return go


def _precious_untouched(host: Path) -> None:
    assert (host / "precious.txt").read_text() == PRECIOUS
    assert list((host / "dir").iterdir()) == []


@pytest.mark.parametrize("name", ["run.log", "run.json", "diff.patch"])
def test_runner_file_made_a_link_to_a_host_file(
    agent: Callable[..., RunResult], host: Path, name: str
) -> None:
    result = agent(
        f'ln -s {host}/precious.txt "$HOLON_OUTPUT_DIR/{name}"; echo agent-said; {MANIFEST_OK}'
    )
    _precious_untouched(host)
    out = Path(result.output_path)
    assert not (out / name).is_symlink()
    assert (out / name).is_file()
    assert PRECIOUS not in (out / name).read_text()


@pytest.mark.parametrize("name", ["run.log", "run.json", "diff.patch"])
def test_runner_file_made_a_link_to_a_host_directory(
    agent: Callable[..., RunResult], host: Path, name: str
) -> None:
    result = agent(f'ln -s {host}/dir "$HOLON_OUTPUT_DIR/{name}"; {MANIFEST_OK}')
    _precious_untouched(host)
    assert (Path(result.output_path) / name).is_file()


@pytest.mark.parametrize("name", ["run.log", "run.json", "diff.patch"])
def test_runner_file_made_a_directory_is_a_recorded_violation(
    agent: Callable[..., RunResult], name: str
) -> None:
    result = agent(f'mkdir -p "$HOLON_OUTPUT_DIR/{name}/x"; {MANIFEST_OK}')
    assert int(result.exit_code) == 1
    assert any(name in v and "directory" in v for v in result.violations)
    record = json.loads((Path(result.output_path) / "run.json").read_text())
    assert record["status"] == "failed"


@pytest.mark.parametrize(
    ("script", "artifact"),
    [
        ('ln -s /etc/passwd "$HOLON_OUTPUT_DIR/report.txt"', "report.txt"),
        ('ln -s /etc "$HOLON_OUTPUT_DIR/reports"', "reports/passwd"),
        ('mkfifo "$HOLON_OUTPUT_DIR/report.txt"', "report.txt"),
        ('mkdir "$HOLON_OUTPUT_DIR/report.txt"', "report.txt"),
    ],
    ids=["symlink-to-etc-passwd", "through-symlinked-dir", "fifo", "directory"],
)
def test_required_artifact_not_a_regular_file_fails_the_run(
    agent: Callable[..., RunResult], script: str, artifact: str
) -> None:
    result = agent(f"{script}; {MANIFEST_OK}", artifacts=[{"path": artifact, "required": True}])
    assert result.status == "failed"
    assert int(result.exit_code) == 1
    assert artifact in result.reason


@pytest.mark.parametrize(
    "listed",
    ["/etc/passwd", "../../../../etc/passwd", "link.txt", "viadir/passwd"],
    ids=["absolute", "escaping", "symlink", "through-symlinked-dir"],
)
def test_manifest_artifact_outside_the_output_is_a_violation(
    agent: Callable[..., RunResult], listed: str
) -> None:
    script = (
        'ln -s /etc/passwd "$HOLON_OUTPUT_DIR/link.txt"; ln -s /etc "$HOLON_OUTPUT_DIR/viadir"; '
        f'EXTRA=\', "artifacts": ["{listed}"]\'; {MANIFEST_OK}'
    )
    result = agent(script)
    assert result.status == "failed"
    assert result.violations, result.reason


@pytest.mark.parametrize(
    "script",
    [
        f'{MANIFEST_OK}; mv "$HOLON_OUTPUT_DIR/manifest.json" "$HOLON_OUTPUT_DIR/m"; '
        'ln -s m "$HOLON_OUTPUT_DIR/manifest.json"',
        'mkfifo "$HOLON_OUTPUT_DIR/manifest.json"',
        'ln -s /dev/zero "$HOLON_OUTPUT_DIR/manifest.json"',
        'truncate -s 2G "$HOLON_OUTPUT_DIR/manifest.json"',
    ],
    ids=["symlink", "fifo", "link-to-dev-zero", "two-gigabytes"],
)
def test_manifest_not_a_regular_file_is_not_read(
    agent: Callable[..., RunResult], script: str
) -> None:
    started = time.monotonic()
    result = agent(script)
    assert time.monotonic() - started < 20  # a FIFO or /dev/zero never blocks or fills memory
    assert result.manifest is None
    assert result.status == "failed"


def test_grandchildren_that_setsid_and_drop_the_run_tag_do_not_survive(
    agent: Callable[..., RunResult],
) -> None:
    script = (
        '( setsid env -i sh -c \'echo $$ >> "$0"; exec sleep 300\' "$HOLON_OUTPUT_DIR/pids" '
        "</dev/null >/dev/null 2>&1 & ); "
        "setsid env -i sh -c 'echo $$ >> \"$0\"; while :; do sleep 1; done' "
        '"$HOLON_OUTPUT_DIR/pids" & '
        'while [ "$(wc -l < "$HOLON_OUTPUT_DIR/pids" 2>/dev/null || echo 0)" -lt 2 ]; '
        "do sleep 0.05; done; "
        f"{MANIFEST_OK}"
    )
    result = agent(script)
    pids = [int(p) for p in (Path(result.output_path) / "pids").read_text().split()]
    assert len(pids) == 2
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_secret_printed_and_quoted_by_the_agent_reaches_no_record(
    agent: Callable[..., RunResult],
) -> None:
    script = (
        'echo "token=$TOK"; printf %s "$TOK" | base64; '
        'EXTRA=", \\"error\\": \\"$TOK\\""; '
        'printf \'{"status":"failed","outcome":"failure","error":"leaked %s"}\' "$TOK" '
        '> "$HOLON_OUTPUT_DIR/manifest.json"; exit 1'
    )
    result = agent(script, secrets={"TOK": SecretStr(SECRET)})
    out = Path(result.output_path)
    for text in (
        (out / "run.log").read_text(),
        (out / "run.json").read_text(),
        result.model_dump_json(),
    ):
        assert SECRET not in text
        assert SECRET[4:20] not in text
    assert "leaked ***" in result.reason
    assert result.secrets_redacted == ["TOK"]


def _fails_for_the_refused_patch(result: RunResult) -> None:
    """A refused patch is the agent's work dropped: the run fails and every record says why."""
    out = Path(result.output_path)
    assert not (out / "diff.patch").exists()
    assert result.patch is not None
    assert result.patch.path is None
    assert result.patch.source == "none"
    assert "TOK" in (result.patch.error or "")
    assert (result.status, result.outcome, int(result.exit_code)) == ("failed", "failure", 1)
    assert any(v.startswith("diff.patch refused") and "TOK" in v for v in result.violations)
    record = json.loads((out / "run.json").read_text())
    assert record["status"] == "failed"
    assert record["exit_code"] == 1
    assert "diff.patch refused" in record["reason"]
    closure = record["closure"]
    assert (closure["closure_outcome"], closure["lifecycle_outcome"]) == ("failed", "failed")
    assert (closure["exit_code"], closure["check_conclusion"]) == (1, "failure")
    assert "diff.patch refused" in closure["detail"]
    assert SECRET not in (out / "run.json").read_text()


def test_secret_written_into_the_workspace_is_refused_as_a_patch(
    agent: Callable[..., RunResult],
) -> None:
    result = agent(
        f'echo "$TOK" > "$HOLON_WORKSPACE_DIR/config.env"; {MANIFEST_OK}',
        secrets={"TOK": SecretStr(SECRET)},
    )
    _fails_for_the_refused_patch(result)


def test_agent_written_patch_with_a_secret_is_refused(agent: Callable[..., RunResult]) -> None:
    result = agent(
        f'echo "+$TOK" > "$HOLON_OUTPUT_DIR/diff.patch"; {MANIFEST_OK}',
        secrets={"TOK": SecretStr(SECRET)},
    )
    _fails_for_the_refused_patch(result)


def test_refused_patch_fails_the_cli_run_with_exit_1(
    make_repo: Callable[..., Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOSTILE_TOKEN", SECRET)
    spec = tmp_path / "spec.yaml"
    spec.write_text("version: v1\nkind: Holon\ngoal: {description: x}\n")
    script = tmp_path / "agent.sh"
    script.write_text(f'echo "$HOSTILE_TOKEN" >> "$HOLON_WORKSPACE_DIR/tracked.txt"; {MANIFEST_OK}')
    argv = ["run", "--spec", str(spec), "--workspace", str(make_repo()), "--output"]
    argv += [str(tmp_path / "out"), "--runtime", "local", "--agent", f"sh {script}"]
    assert main([*argv, "--secret-env", "HOSTILE_TOKEN"]) == 1
    printed = capsys.readouterr().out
    assert "failed (failure), exit 1" in printed
    assert "violation: diff.patch refused" in printed
    assert SECRET not in printed


def test_secret_in_the_cli_summary_and_json_is_redacted(
    make_repo: Callable[..., Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HOSTILE_TOKEN", SECRET)
    spec = tmp_path / "spec.yaml"
    spec.write_text("version: v1\nkind: Holon\ngoal: {description: x}\n")
    script = (
        'printf \'{"status":"completed","outcome":"needs_human",'
        '"question":{"id":"q","text":"use %s?"}}\' "$HOSTILE_TOKEN" '
        '> "$HOLON_OUTPUT_DIR/manifest.json"; echo "$HOSTILE_TOKEN"; exit 2'
    )
    agent_script = tmp_path / "agent.sh"
    agent_script.write_text(script)
    for flag in ([], ["--json"]):
        out = tmp_path / f"out{len(flag)}"
        argv = [
            "run",
            "--spec",
            str(spec),
            "--workspace",
            str(make_repo(f"repo{len(flag)}")),
            "--output",
            str(out),
            "--runtime",
            "local",
            "--agent",
            f"sh {agent_script}",
            "--secret-env",
            "HOSTILE_TOKEN",
            *flag,
        ]
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert SECRET not in captured.out + captured.err
        assert "***" in captured.out


@pytest.mark.parametrize(
    "value",
    [
        "https://x-access-token:abc123def@github.com/o/r.git",
        "Authorization: token abcdef0123456789abcdef",
        "Bearer abc123def456ghi789",
        "clone with ghp_abcdefghijklmnop0123",
    ],
    ids=["url-credentials", "token-header", "bearer", "prefix-mid-value"],
)
def test_secret_inside_a_spec_value_is_rejected_without_echo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "version: v1\nkind: Holon\ngoal: {description: x}\n"
        f"context: {{env: {{REMOTE: {json.dumps(value)}}}}}\n"
    )
    argv = ["run", "--spec", str(spec), "--output", str(tmp_path / "out"), "--runtime", "local"]
    assert main([*argv, "--agent", "true"]) == 64
    err = capsys.readouterr().err
    assert "REMOTE looks like a secret" in err
    assert value not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "description",
    [
        "clone https://x-access-token:abc123def456@github.com/o/r.git and fix the bug",
        "call the API with header 'Authorization: Bearer abc123def456ghi789'",
    ],
    ids=["clone-url", "bearer-header"],
)
def test_secret_pasted_into_the_goal_is_rejected_without_echo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], description: str
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"version: v1\nkind: Holon\ngoal: {{description: {json.dumps(description)}}}\n")
    argv = ["run", "--spec", str(spec), "--output", str(tmp_path / "out"), "--runtime", "local"]
    assert main([*argv, "--agent", "true"]) == 64
    err = capsys.readouterr().err
    assert "goal.description looks like it holds a secret" in err
    assert "abc123def456" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--memory", "lots"),
        ("--memory", "-1g"),
        ("--memory", "99999999999999999999999g"),  # past the engine's int64: once after the copy
        ("--memory", "8589934592g"),
        ("--memory", "5m"),  # below Docker's minimum (6m): once refused at container create
        ("--cpus", "nan"),
        ("--cpus", "-2"),
    ],
)
def test_bad_limits_are_one_line_exit_64(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("version: v1\nkind: Holon\ngoal: {description: x}\n")
    argv = ["run", "--spec", str(spec), "--output", str(tmp_path / "out"), "--image", "x"]
    assert main([*argv, f"{flag}={value}"]) == 64
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"holon: error: {flag}")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in Path(tempfile.gettempdir()).iterdir() if "holon-" in p.name] == []


@pytest.mark.parametrize("limit", [["--memory", "2g"], ["--cpus", "1"], ["--cpus", "0.5"]])
def test_container_limits_with_the_local_runtime_are_refused_before_anything_runs(
    make_repo: Callable[..., Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    limit: list[str],
) -> None:
    # A subprocess cannot be held to them: running without the limit asked for is refused.
    spec = tmp_path / "spec.yaml"
    spec.write_text("version: v1\nkind: Holon\ngoal: {description: x}\n")
    ran = tmp_path / "ran"
    argv = ["run", "--spec", str(spec), "--workspace", str(make_repo()), "--output"]
    argv += [str(tmp_path / "out"), "--runtime", "local", "--agent", f"touch {ran}"]
    assert main([*argv, *limit]) == 64
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"holon: error: {limit[0]}: the local runtime cannot enforce a container limit "
        "(use --runtime docker, or leave it out)"
    ]
    assert not ran.exists()
    assert not (tmp_path / "out").exists()


@pytest.mark.docker
def test_more_cpus_than_the_engine_has_is_refused_before_the_agent_runs(
    docker_client: Any,
    agent_image: str,
    make_repo: Callable[..., Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cpus = int(docker_client.info()["NCPU"]) + 1
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "version: v1\nkind: Holon\ngoal: {description: x}\ncontext: {env: {MODE: success}}\n"
    )
    argv = ["run", "--spec", str(spec), "--workspace", str(make_repo()), "--output"]
    argv += [str(tmp_path / "out"), "--image", agent_image, "--cpus", str(cpus)]
    assert main(argv) == 64
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"holon: error: --cpus: {cpus} is more than the ")
    assert not (tmp_path / "out").exists()


def test_output_directory_swapped_for_a_link_by_the_agent(
    agent: Callable[..., RunResult], host: Path
) -> None:
    # A local agent has the user's powers: it can move the output away and put a link in its place.
    script = (
        f"{MANIFEST_OK}; "
        'mv "$HOLON_OUTPUT_DIR" "$HOLON_OUTPUT_DIR.moved"; '
        f'ln -s {host}/dir "$HOLON_OUTPUT_DIR"'
    )
    result = agent(script)
    _precious_untouched(host)
    moved = Path(result.output_path + ".moved")
    # Holon kept writing into the directory it opened before the agent ran.
    assert json.loads((moved / "run.json").read_text())["run_id"] == result.run_id
    assert (moved / "run.log").is_file()


def _unprivileged() -> list[str]:
    """A prefix that runs a command as a user without root's power to ignore permissions."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: permissions cannot be tested")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def test_agent_locks_the_output_and_a_directory_at_run_json(tmp_path: Path) -> None:
    prefix = _unprivileged()
    shared = Path(tempfile.mkdtemp(prefix="holon-locked-"))
    try:
        os.chmod(shared, 0o777)
        (shared / "ws").mkdir()
        (shared / "ws" / "file.txt").write_text("x\n")
        (shared / "spec.yaml").write_text("version: v1\nkind: Holon\ngoal: {description: x}\n")
        (shared / "agent.sh").write_text(
            'o="$HOLON_OUTPUT_DIR"\n'
            'mkdir -p "$o/run.json/inner" && echo x > "$o/run.json/inner/f"\n'
            'chmod 000 "$o/run.json/inner" "$o/run.json"\n'
            'printf \'{"status":"completed","outcome":"success"}\' > "$o/manifest.json"\n'
            'chmod 000 "$o"\n'
        )
        if prefix:
            for path in [shared, *shared.rglob("*")]:
                os.chown(path, 65534, 65534)
        env = {"PATH": os.environ["PATH"], "TMPDIR": str(shared), "HOME": str(shared)}
        argv = [
            *prefix,
            sys.executable,
            "-m",
            "holon",
            "run",
            "--spec",
            str(shared / "spec.yaml"),
            "--workspace",
            str(shared / "ws"),
            "--output",
            str(shared / "out"),
            "--runtime",
            "local",
            "--agent",
            f"sh {shared / 'agent.sh'}",
        ]
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 1, proc.stderr
        record = json.loads((shared / "out" / "run.json").read_text())
        assert record["status"] == "failed"
        assert any("run.json a directory" in v for v in record["violations"])
        # Unremovable by its owner (mode 000 inside): moved aside within the output instead.
        assert any("moved aside" in v for v in record["violations"]) == bool(prefix)
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(shared)], check=False)
        shutil.rmtree(shared, ignore_errors=True)
