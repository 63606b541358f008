"""The sandbox boundary through both backends: Holon's own steps never obey what the agent made.

Output-directory entries are never followed, artifacts count only as regular files inside the
output, every process the agent started ends with the run, the agent's output is streamed with a
stated cap, and forwarded secrets stay out of every record.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from tests.conftest import spec_for

SECRET = "ghp_S3cretValueForTheBoundaryTest0123"


def _spec(mode: str, **env: str) -> Any:
    return spec_for(mode, context={"env": {"MODE": mode, **env}})


def _host_target(tmp_path: Path) -> tuple[Path, Path]:
    target = tmp_path / "host-file.txt"
    target.write_text("precious host content\n")
    target_dir = tmp_path / "host-dir"
    target_dir.mkdir()
    return target, target_dir


@pytest.fixture
def other_fs_work_dir(tmp_path: Path) -> Iterator[Path]:
    """A run root on another filesystem than the output, where a move becomes a copy."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        yield tmp_path
        return
    work = Path(tempfile.mkdtemp(prefix="holon-test-", dir=shm))
    yield work
    shutil.rmtree(work, ignore_errors=True)


def test_runner_files_made_links_are_replaced_not_followed(
    run_agent: Callable[..., Any],
    make_repo: Callable[..., Path],
    tmp_path: Path,
    other_fs_work_dir: Path,
) -> None:
    target, target_dir = _host_target(tmp_path)
    spec = _spec("log_symlink", TARGET=str(target), TARGET_DIR=str(target_dir))
    result = run_agent("log_symlink", make_repo(dirty=False), spec=spec, work_dir=other_fs_work_dir)

    assert target.read_text() == "precious host content\n"
    assert list(target_dir.iterdir()) == []
    out = Path(result.output_path)
    for name in ("run.log", "run.json", "diff.patch"):
        assert not (out / name).is_symlink()
        assert (out / name).is_file()
    assert "must not reach the host file" in (out / "run.log").read_text()
    assert json.loads((out / "run.json").read_text())["run_id"] == result.run_id
    assert result.patch.source == "runner"
    assert any("run.log" in n and "symlink" in n for n in result.notes)
    assert len([n for n in result.notes if "run.json" in n]) == 1
    # Replaced links are noted, not violations: the run itself is judged on its merits.
    assert result.status == "completed"


def test_runner_names_made_directories_are_violations_with_a_record(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path]
) -> None:
    result = run_agent("record_dirs", make_repo(dirty=False))
    out = Path(result.output_path)
    assert result.status == "failed"
    assert int(result.exit_code) == 1
    assert "contract violation" in result.reason
    assert len(result.violations) == 3
    assert all("directory" in v for v in result.violations)
    record = json.loads((out / "run.json").read_text())
    assert record["violations"] == result.violations
    assert (out / "run.log").is_file()
    assert (out / "diff.patch").is_file()


def test_required_artifact_symlink_does_not_satisfy(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    target, target_dir = _host_target(tmp_path)
    spec = _spec("artifact_link", TARGET=str(target), TARGET_DIR=str(target_dir)).model_copy(
        update={
            "output": spec_for(
                "x", output={"artifacts": [{"path": "report.txt", "required": True}]}
            ).output
        }
    )
    result = run_agent("artifact_link", make_repo(dirty=False), spec=spec)
    assert result.status == "failed"
    assert any("report.txt" in v and "symlink" in v for v in result.violations)
    assert "precious" not in json.dumps(result.model_dump(mode="json"))


@pytest.mark.parametrize(
    ("artifact", "word"),
    [
        ("/etc/passwd", "outside the output"),
        ("../../etc/passwd", "outside the output"),
        ("real.json", "symlink"),
    ],
)
def test_manifest_artifacts_outside_or_linked_are_violations(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path], artifact: str, word: str
) -> None:
    mode = "manifest_paths" if artifact != "real.json" else "manifest_link"
    result = run_agent(mode, make_repo(dirty=False), spec=_spec(mode, ARTIFACT=artifact))
    assert result.status == "failed"
    assert int(result.exit_code) == 1
    if mode == "manifest_link":
        # The manifest itself is a link: not followed, so there is no manifest at all.
        assert result.manifest is None
        assert "symlink" in result.reason
    else:
        assert any(word in v for v in result.violations)


def test_processes_that_left_the_session_end_with_the_run(
    run_agent: Callable[..., Any],
    make_repo: Callable[..., Path],
    docker_or_local: str,
    request: pytest.FixtureRequest,
) -> None:
    started = time.monotonic()
    result = run_agent("escape", make_repo(dirty=False), timeout=60)
    assert time.monotonic() - started < 30
    assert result.status == "completed", result.reason
    if docker_or_local == "local":
        pids = [int(p) for p in (Path(result.output_path) / "escaped.pids").read_text().split()]
        assert len(pids) == 3
        for pid in pids:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)  # gone and reaped: not even a zombie is left
        assert any("killed" in n for n in result.notes)
    else:
        # In docker the container's PID namespace is the run: it is gone with every process.
        client = request.getfixturevalue("docker_client")
        left = client.containers.list(all=True, filters={"label": f"holon.run_id={result.run_id}"})
        assert left == []


@pytest.fixture
def docker_or_local(run_agent: Callable[..., Any]) -> str:
    return str(run_agent.runtime)  # type: ignore[attr-defined]


def test_large_output_is_cut_with_a_note(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path]
) -> None:
    limit = 64 * 1024
    size = 3 * 1024 * 1024
    spec = _spec("print_lots", BYTES=str(size))
    result = run_agent("print_lots", make_repo(dirty=False), spec=spec, log_limit=limit)
    assert result.status == "completed"
    log = Path(result.output_path) / "run.log"
    data = log.read_bytes()
    assert data.startswith(b"BEGIN\n")
    assert data.endswith(b"END\n")
    info = result.log
    assert info.limit == limit
    assert info.bytes >= size
    assert info.kept_bytes == limit
    assert info.cut_bytes == info.bytes - limit
    assert data[info.cut_at :].startswith(b"\n[holon: ")
    assert f"{info.cut_bytes} bytes of agent output cut here".encode() in data
    assert len(data) < limit + 200
    record = json.loads((Path(result.output_path) / "run.json").read_text())
    assert record["log"]["cut_at"] == info.cut_at


def test_small_output_is_kept_whole(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path]
) -> None:
    result = run_agent("print_lots", make_repo(dirty=False), spec=_spec("print_lots", BYTES="1000"))
    assert result.log.cut_at is None
    assert result.log.cut_bytes == 0
    assert result.log.kept_bytes == result.log.bytes
    assert (Path(result.output_path) / "run.log").stat().st_size == result.log.bytes


def test_forwarded_secret_never_reaches_holons_records(
    run_agent: Callable[..., Any], make_repo: Callable[..., Path]
) -> None:
    result = run_agent(
        "leak_secret", make_repo(dirty=False), secrets={"SECRET_TOKEN": SecretStr(SECRET)}
    )
    out = Path(result.output_path)
    encodings = [
        SECRET,
        base64.b64encode(SECRET.encode()).decode()[:40],
        base64.b64encode(b"x" + SECRET.encode()).decode()[4:40],
    ]
    log = (out / "run.log").read_text()
    record = (out / "run.json").read_text()
    dumped = result.model_dump_json()
    for text in (log, record, dumped):
        for form in encodings:
            assert form not in text
    assert "plain: ***" in log
    assert "split: ***" in log
    assert result.log.redactions >= 4
    assert result.secrets_redacted == ["SECRET_TOKEN"]
    assert result.manifest.outcome == "needs_human"
    assert "***" in result.manifest.question.text
    # The patch would carry the secret into a pull request: refused, and the agent's work is then
    # lost, so the run fails (not needs_human) and says why.
    assert not (out / "diff.patch").exists()
    assert result.patch.path is None
    assert "SECRET_TOKEN" in result.patch.error
    assert (result.status, result.outcome, int(result.exit_code)) == ("failed", "failure", 1)
    assert any("diff.patch refused" in v for v in result.violations)
    assert "diff.patch refused" in result.reason
