"""Hostile corpus: JSON and headers from outside that once crashed a command or the serve loop.

Nesting 100,000 levels deep (a RecursionError), lone surrogate escapes (serialization and journal
encoding crashed), integers past Python's digit limit, timestamps out of range (`10**20` epoch
seconds), a non-ASCII signature (a TypeError in `hmac.compare_digest`), and sizes only checked after
reading everything (`/dev/zero` never returned, gigabytes on standard input or in one replay line
were held in memory). Each now ends in one line and exit 64, or inside `holon serve` in the line
journaled as broken and skipped, and the size limits hold while reading.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from holon import jsonio
from holon.closure.evidence import parse_evidence
from holon.contract.manifest import ManifestError, parse_manifest
from holon.errors import InvalidInput
from holon.gateway.payload import decode_payload
from holon.gateway.replay import parse_line
from holon.gateway.webhook import SignatureError, SignatureVerifier, signature_for, verify_signature
from holon.state.control import encode_control, parse_control
from holon.state.journal import Journal
from holon.state.store import CorruptState, StateStore
from tests.gateway.conftest import example

REPO = Path(__file__).resolve().parents[2]
SERVE_EXAMPLE = REPO / "examples" / "serve"
DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "9" * 5000  # past Python's 4300-digit limit for int()
MiB = 1024 * 1024


def _entry(*argv: str) -> list[str]:
    return [sys.executable, "-c", "from holon.cli.main import entry; entry()", *argv]


def _measured(report: Path, *argv: str) -> list[str]:
    """The `holon` command, leaving its peak resident memory (VmHWM, in KiB) in `report`.

    Read by the process itself at exit: a child's ru_maxrss also counts the forking test
    process's memory, which Linux carries across exec.
    """
    code = (
        "import atexit, re\n"
        "def peak():\n"
        "    status = open('/proc/self/status').read()\n"
        f"    open({str(report)!r}, 'w').write(re.search(r'VmHWM:\\s+(\\d+)', status)[1])\n"
        "atexit.register(peak)\n"
        "from holon.cli.main import entry\n"
        "entry()\n"
    )
    return [sys.executable, "-c", code, *argv]


def _issues(**issue: Any) -> dict[str, Any]:
    payload = example("issues", "opened")
    payload["issue"].update(issue)
    return payload


def _raw_with(payload: dict[str, Any], marker: str, replacement: str) -> str:
    """The payload as JSON text with the string `"marker"` replaced by raw JSON text."""
    text = json.dumps(payload)
    assert f'"{marker}"' in text
    return text.replace(f'"{marker}"', replacement)


# Each row: a payload (as JSON text) that `holon gateway normalize --event issues` must refuse.
PAYLOADS = {
    "deep": _raw_with(_issues(title="MARK"), "MARK", DEEP),
    "lone-surrogate": _raw_with(_issues(title="MARK"), "MARK", '"fix \\ud800 now"'),
    "surrogate-key": _raw_with(_issues(labels="MARK"), "MARK", '{"\\udc00": 1}'),
    "huge-int": _raw_with(_issues(number="MARK"), "MARK", HUGE_INT),
    "nan": _raw_with(_issues(number="MARK"), "MARK", "NaN"),
    "1e999": _raw_with(_issues(comments="MARK"), "MARK", "1e999"),
    "iso-time-out-of-range": json.dumps(_issues(updated_at="9999-12-31T23:59:59-12:00")),
    "iso-time-year-1": json.dumps(_issues(updated_at="0001-01-01T00:00:00+14:00")),
    # Once accepted with `at` silently the time of receipt:
    "iso-time-five-digit-year": json.dumps(_issues(updated_at="99999-01-01T00:00:00Z")),
    "not-a-time": json.dumps(_issues(updated_at="2026-13-45T99:99:99Z")),
    # Once refused as "has no `issue.updated_at`":
    "epoch-10-pow-20-updated-at": json.dumps(_issues(updated_at=10**20)),
    "epoch-in-range-updated-at": json.dumps(_issues(updated_at=1_700_000_000)),
}
EXPECTED = {
    "deep": "nested too deeply",
    "lone-surrogate": "lone surrogate",
    "surrogate-key": "lone surrogate",
    "huge-int": "Exceeds the limit",
    "nan": "NaN is not a JSON number",
    "1e999": "out of range",
    "iso-time-out-of-range": "issue.updated_at`: timestamp",
    "iso-time-year-1": "out of range",
    "iso-time-five-digit-year": "issues payload `issue.updated_at`: timestamp "
    "'99999-01-01T00:00:00Z' is not an ISO 8601 time between 1970 and 3000",
    "not-a-time": "`issue.updated_at`: timestamp '2026-13-45T99:99:99Z' is not an ISO 8601 time",
    "epoch-10-pow-20-updated-at": "issues payload `issue.updated_at`: timestamp "
    "100000000000000000000 is out of range",
    "epoch-in-range-updated-at": "issues payload `issue.updated_at` is not a string",
}


def _assert_one_line_64(proc: subprocess.CompletedProcess[bytes], *expected: str) -> str:
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 64, err
    assert err.count("\n") == 1, err
    assert err.startswith("holon: error: "), err
    assert "Traceback" not in err
    for text in expected:
        assert text in err, err
    assert proc.stdout == b""
    return err


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The environment of a CLI run whose internal-error log must stay absent."""
    return {**os.environ, "HOLON_LOG_DIR": str(tmp_path / "logs"), "HOOK_SECRET": "s3cret"}


@pytest.mark.parametrize("case", sorted(PAYLOADS))
def test_gateway_normalize_refuses_hostile_payload(
    case: str, tmp_path: Path, env: dict[str, str]
) -> None:
    payload = tmp_path / "payload.json"
    payload.write_text(PAYLOADS[case])
    proc = subprocess.run(
        _entry("gateway", "normalize", "--event", "issues", "--payload", str(payload)),
        capture_output=True,
        env=env,
        check=False,
    )
    _assert_one_line_64(proc, EXPECTED[case])
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("case", sorted(PAYLOADS))
def test_decode_and_normalize_refuse_hostile_payload(case: str) -> None:
    from datetime import UTC, datetime

    from holon.gateway.github import normalize

    def decode_and_normalize() -> None:
        data = decode_payload(PAYLOADS[case].encode(), source="payload")
        normalize("issues", data, via="webhook", received_at=datetime.now(UTC))

    with pytest.raises(InvalidInput) as caught:
        decode_and_normalize()
    assert EXPECTED[case] in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("event", "action", "field"),
    [
        ("issues", "labeled", "issue.updated_at"),
        ("issue_comment", "created", "comment.created_at"),
        ("pull_request", "opened", "pull_request.updated_at"),
        ("pull_request", "labeled", "pull_request.updated_at"),
        ("pull_request_review", "submitted", "review.submitted_at"),
        ("check_suite", "completed", "check_suite.updated_at"),
        ("workflow_run", "completed", "workflow_run.updated_at"),
        ("push", None, "head_commit.timestamp"),
    ],
)
def test_a_time_field_past_year_9999_is_refused_not_replaced(
    event: str, action: str | None, field: str, tmp_path: Path, env: dict[str, str]
) -> None:
    """It was accepted, its envelope `at` silently the time it was received."""
    payload = example(event, action)
    *parents, name = field.split(".")
    node = payload
    for part in parents:
        node = node[part]
    assert name in node  # GitHub's own example has the field: only its value is edited
    node[name] = "99999-01-01T00:00:00Z"
    path = tmp_path / "payload.json"
    path.write_text(json.dumps(payload))
    proc = subprocess.run(
        _entry("gateway", "normalize", "--event", event, "--payload", str(path)),
        capture_output=True,
        env=env,
        check=False,
    )
    _assert_one_line_64(
        proc,
        f"{event} payload `{field}`: timestamp '99999-01-01T00:00:00Z' is not an ISO 8601 time",
    )


def test_epoch_timestamp_of_10_pow_20_is_one_line(tmp_path: Path, env: dict[str, str]) -> None:
    payload = example("push")
    payload["head_commit"] = None
    payload["repository"]["pushed_at"] = 10**20
    path = tmp_path / "push.json"
    path.write_text(json.dumps(payload))
    proc = subprocess.run(
        _entry("gateway", "normalize", "--event", "push", "--payload", str(path)),
        capture_output=True,
        env=env,
        check=False,
    )
    _assert_one_line_64(proc, "repository.pushed_at`: timestamp 100000000000000000000 is out")


@pytest.mark.parametrize(
    "signature",
    ["sha256=ü" + "0" * 63, "sha256=\u0663" * 9, "sha256=" + "0" * 63 + "\udcff", "sha256=é"],
    ids=["latin", "arabic-digits", "undecodable-argv", "short"],
)
def test_non_ascii_signature_is_a_bad_signature(
    signature: str, tmp_path: Path, env: dict[str, str]
) -> None:
    path = tmp_path / "payload.json"
    path.write_text(json.dumps(example("issues", "opened")))
    argv = _entry("gateway", "normalize", "--event", "issues", "--payload", str(path))
    argv += ["--signature", signature, "--secret-env", "HOOK_SECRET"]
    # argv as bytes: the undecodable case reaches Holon as a surrogate escape, as from a shell,
    # and is refused as an argument before any signature is looked at (tests/hostile/test_argv.py).
    proc = subprocess.run([os.fsencode(a) for a in argv], capture_output=True, env=env, check=False)
    undecodable = "\udcff" in signature
    _assert_one_line_64(proc, "--signature: " if undecodable else "X-Hub-Signature-256")
    with pytest.raises(SignatureError):
        verify_signature(path.read_bytes(), signature, ["s3cret"])


def test_event_name_that_disagrees_with_the_payload_shape(
    tmp_path: Path, env: dict[str, str]
) -> None:
    path = tmp_path / "comment.json"
    path.write_text(json.dumps(example("issue_comment", "created")))
    proc = subprocess.run(
        _entry("gateway", "normalize", "--event", "issues", "--payload", str(path)),
        capture_output=True,
        env=env,
        check=False,
    )
    _assert_one_line_64(proc, "event issues disagrees with its payload: it has `comment`")


@pytest.mark.parametrize(
    "argv",
    [
        ["gateway", "normalize", "--event", "issues", "--payload", "/dev/zero"],
        ["closure", "derive", "/dev/zero"],
        ["handoff", "render", "/dev/zero"],
    ],
    ids=["gateway", "closure", "handoff"],
)
def test_dev_zero_stops_at_the_limit(argv: list[str], env: dict[str, str]) -> None:
    start = time.monotonic()
    proc = subprocess.run(_entry(*argv), capture_output=True, env=env, check=False, timeout=60)
    _assert_one_line_64(proc, "/dev/zero: over the 25 MiB limit")
    assert time.monotonic() - start < 30


def test_actions_event_path_of_dev_zero_stops_at_the_limit() -> None:
    from datetime import UTC, datetime

    from holon.gateway.actions import from_actions

    env = {"GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": "/dev/zero"}
    with pytest.raises(InvalidInput, match="GITHUB_EVENT_PATH /dev/zero: over the 25 MiB limit"):
        from_actions(env, received_at=datetime.now(UTC))


def _run_fed(argv: list[str], env: dict[str, str], total: int) -> tuple[int, bytes]:
    """Run `argv` with `total` bytes of spaces written into its standard input through a pipe;
    return its exit code and its stderr."""
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=env,
        bufsize=0,
    )
    assert proc.stdin is not None
    assert proc.stderr is not None
    written = [0]

    def feed() -> None:
        chunk = b" " * MiB
        assert proc.stdin is not None
        try:
            while written[0] < total:
                proc.stdin.write(chunk)
                written[0] += len(chunk)
        except BrokenPipeError:
            pass  # the child stopped reading: what this test wants
        finally:
            proc.stdin.close()

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    err = proc.stderr.read()
    proc.wait()
    feeder.join(timeout=10)
    proc.stderr.close()
    assert written[0] < total, "the child read the whole stream"
    return proc.returncode, err


@pytest.mark.parametrize(
    "argv",
    [
        ["gateway", "normalize", "--event", "issues", "--payload", "-"],
        ["closure", "derive", "-"],
        ["handoff", "render", "-"],
    ],
    ids=["gateway", "closure", "handoff"],
)
def test_a_stream_on_stdin_stops_at_the_limit_with_memory_well_under_it(
    argv: list[str], env: dict[str, str], tmp_path: Path
) -> None:
    total = 256 * MiB
    start = time.monotonic()
    code, err = _run_fed(_measured(tmp_path / "peak", *argv), env, total)
    peak = int((tmp_path / "peak").read_text()) * 1024
    assert code == 64, err
    assert err.decode().count("\n") == 1
    assert b"standard input: over the 25 MiB limit" in err
    assert peak < 128 * MiB, f"peak RSS {peak // MiB} MiB"
    assert time.monotonic() - start < 30


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (DEEP, "nested too deeply"),
        ('{"items": [{"id": "\\ud800", "kind": "run"}]}', "lone surrogate"),
        ('{"items": [{"id": "a", "kind": "run", "attempt": ' + HUGE_INT + "}]}", "Exceeds"),
    ],
    ids=["deep", "surrogate", "huge-int"],
)
@pytest.mark.parametrize("command", ["closure", "handoff"])
def test_closure_and_handoff_documents(
    command: str, content: str, expected: str, tmp_path: Path, env: dict[str, str]
) -> None:
    path = tmp_path / "doc.json"
    path.write_text(content)
    argv = ["closure", "derive", str(path)] if command == "closure" else ["handoff", "render"]
    if command == "handoff":
        argv.append(str(path))
    proc = subprocess.run(_entry(*argv), capture_output=True, env=env, check=False)
    _assert_one_line_64(proc, expected)
    with pytest.raises(InvalidInput, match=expected):
        parse_evidence(content.encode(), source="doc")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"status": ' + DEEP + "}", "nested too deeply"),
        ('{"status": "completed", "outcome": "success", "summary": "\\udfff"}', "lone surrogate"),
        ('{"status": ' + HUGE_INT + "}", "Exceeds"),
    ],
    ids=["deep", "surrogate", "huge-int"],
)
def test_agent_manifest_through_the_same_reader(content: str, expected: str) -> None:
    with pytest.raises(ManifestError, match=expected):
        parse_manifest(content.encode())


def _replay_line(event: str, payload_json: str) -> str:
    return f'{{"event": "{event}", "payload": {payload_json}}}'


def test_serve_replay_journals_each_broken_line_and_goes_on(
    tmp_path: Path, env: dict[str, str]
) -> None:
    good = (SERVE_EXAMPLE / "replay.ndjson").read_text().splitlines()
    broken = {
        2: _replay_line("issues", PAYLOADS["deep"]),
        3: _replay_line("issues", PAYLOADS["lone-surrogate"]),
        4: _replay_line("issues", PAYLOADS["huge-int"]),
        5: _replay_line("issues", PAYLOADS["iso-time-out-of-range"]),
        6: _replay_line("issues", json.dumps(example("issue_comment", "created"))),
        7: '{"event": "issues", "payload": {}, "delivery": "\\ud800"}',
    }
    lines = [good[0], *broken.values(), *good[1:]]
    replay = tmp_path / "replay.ndjson"
    with replay.open("wb") as handle:
        handle.write("\n".join(lines).encode() + b"\n")
        # One line of a gigabyte, all but its head a hole in a sparse file: never read whole.
        handle.write(b'{"event": "issues", "payload": {"x": "')
        handle.seek(1024 * MiB, os.SEEK_CUR)
        handle.write(b'"}}\n' + good[-1].encode() + b"\n")
    huge_line = len(lines) + 1

    def serve(path: Path, state: Path) -> tuple[int, int]:
        report = state.with_name(state.name + ".peak")
        proc = subprocess.run(
            _measured(
                report,
                "serve",
                *("--state-dir", str(state), "--replay", str(path), "--dry-run", "--once"),
                *("--facts", str(SERVE_EXAMPLE / "facts.json")),
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            check=False,
        )
        return proc.returncode, int(report.read_text()) * 1024

    clean = tmp_path / "clean.ndjson"
    clean.write_text("\n".join([*good, good[-1]]) + "\n")
    clean_code, _ = serve(clean, tmp_path / "clean-state")
    code, peak = serve(replay, tmp_path / "state")
    assert code == clean_code
    assert peak < 256 * MiB, f"peak RSS {peak // MiB} MiB"
    events = [
        json.loads(line) for line in (tmp_path / "state" / "events.ndjson").read_text().splitlines()
    ]
    errors = {e["id"]: e["error"] for e in events if "error" in e}
    expected = {
        2: "nested too deeply",
        3: "lone surrogate",
        4: "Exceeds the limit",
        5: "out of range",
        6: "disagrees",
        7: "lone surrogate",
        huge_line: "over the 25 MiB limit",
    }
    assert set(errors) == {f"error:replay.ndjson:{n}" for n in expected}
    for number, text in expected.items():
        assert text in errors[f"error:replay.ndjson:{number}"]
        assert "\n" not in errors[f"error:replay.ndjson:{number}"]
    decisions = (tmp_path / "state" / "decisions.ndjson").read_text()
    clean_decisions = (tmp_path / "clean-state" / "decisions.ndjson").read_text()
    assert len(decisions.splitlines()) == len(clean_decisions.splitlines())
    assert not (tmp_path / "logs").exists()


@pytest.mark.parametrize("case", ["deep", "lone-surrogate", "huge-int", "nan"])
def test_replay_line_library(case: str) -> None:
    from datetime import UTC, datetime

    raw = _replay_line("issues", PAYLOADS[case]).encode()
    with pytest.raises(InvalidInput, match=EXPECTED[case]):
        parse_line(raw, "line 1", received_at=datetime.now(UTC))
    with pytest.raises(InvalidInput, match="over the 25 MiB limit"):
        parse_line(None, "line 2", received_at=datetime.now(UTC))


def test_journal_writes_a_lone_surrogate_as_valid_utf8(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "events.ndjson", fsync=False)
    journal.append({"id": "e1", "error": "bad \ud800 title", "\udcff": "key"})
    journal.append({"id": "e2"})
    raw = (tmp_path / "events.ndjson").read_bytes()
    raw.decode("utf-8")
    assert [e["id"] for e in journal.read()] == ["e1", "e2"]
    assert next(iter(journal.read()))["error"] == "bad \ufffd title"


def test_control_command_with_a_lone_surrogate(tmp_path: Path) -> None:
    text = encode_control({"command": "pause", "reason": "\ud800"})
    assert parse_control(text.encode("utf-8")) == {"command": "pause", "reason": "\ufffd"}
    assert parse_control(b'{"command": "pause", "reason": "\\ud800"}') is None
    assert parse_control(b'{"command": ' + DEEP.encode() + b"}") is None


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"records": ' + DEEP.encode() + b"}", "nested too deeply"),
        (b'{"records": {"\\ud800": {}}}', "lone surrogate"),
        (b'{"version": ' + HUGE_INT.encode() + b"}", "Exceeds"),
    ],
    ids=["deep", "surrogate", "huge-int"],
)
def test_restored_state_is_corrupt_not_a_crash(
    content: bytes, expected: str, tmp_path: Path
) -> None:
    store = StateStore(tmp_path / "state")
    store.directory.mkdir()
    store.state_path.write_bytes(content)
    with pytest.raises(CorruptState, match=expected):
        store.load()


def test_restored_journal_line_nested_deep_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    path.write_bytes(b'{"id": ' + DEEP.encode() + b'}\n{"id": "e2"}\n')
    with pytest.raises(InvalidInput, match="line 1 is not a JSON entry"):
        list(Journal(path, fsync=False).read())


def test_incremental_verifier_matches_the_one_shot_check() -> None:
    body = json.dumps(example("issues", "opened")).encode()
    signature = signature_for(body, "new")
    verifier = SignatureVerifier(signature, ["old", "new"])
    for start in range(0, len(body), 1000):
        verifier.update(body[start : start + 1000])
    verifier.verify()
    wrong = SignatureVerifier(signature, ["old"])
    wrong.update(body)
    with pytest.raises(SignatureError, match="does not match"):
        wrong.verify()
    # A malformed header is refused before any of the body is read.
    with pytest.raises(SignatureError, match="64 hex digits"):
        SignatureVerifier("sha256=" + "ü" * 64, ["new"])


def test_depth_scan_is_linear() -> None:
    # 100,000 levels: refused quickly, no recursion at all (the limit is far below the stack).
    start = time.monotonic()
    with pytest.raises(InvalidInput, match="nested too deeply"):
        jsonio.loads(("[" * 1_000_000 + "]" * 1_000_000).encode(), "doc")
    assert time.monotonic() - start < 5
