"""`holon gateway normalize` as a user runs it: envelope JSON, or one line and exit 64."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from holon.cli.main import main
from holon.gateway.webhook import signature_for
from tests.gateway.conftest import example


def _write(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "payload.json"
    path.write_bytes(data)
    return str(path)


def test_normalize_prints_the_envelope(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = example("issue_comment", "created")
    payload["comment"]["body"] = "/holon solve fix the `login` loop"
    path = _write(tmp_path, json.dumps(payload).encode())
    assert main(["gateway", "normalize", "--event", "issue_comment", "--payload", path]) == 0
    env = json.loads(capsys.readouterr().out)
    assert env["type"] == "github.issue_comment.created"
    assert env["command"]["name"] == "solve"
    assert env["command"]["args"] == "fix the `login` loop"
    assert env["payload"] == payload


def test_signed_delivery(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    body = json.dumps(example("star", "created")).encode()
    path = _write(tmp_path, body)
    monkeypatch.setenv("HOOK_SECRET", "topsecret")
    monkeypatch.setenv("OLD_SECRET", "previous")
    argv = ["gateway", "normalize", "--event", "star", "--payload", path, "--delivery", "d-9"]
    good = signature_for(body, "previous")
    sign = ["--signature", good, "--secret-env", "HOOK_SECRET", "--secret-env", "OLD_SECRET"]
    assert main([*argv, *sign]) == 0
    assert json.loads(capsys.readouterr().out)["delivery"] == "d-9"
    bad = ["--signature", "sha256=" + "1" * 64, "--secret-env", "HOOK_SECRET"]
    assert main([*argv, *bad]) == 64
    err = capsys.readouterr().err
    assert err.strip() == "holon: error: X-Hub-Signature-256 does not match the webhook secret"
    assert "topsecret" not in err


@pytest.mark.parametrize(
    ("event", "data", "message"),
    [
        ("issues", b"{broken", "invalid JSON at line 1"),
        ("issues", b"\xc3\x28", "not valid UTF-8"),
        ("issues", json.dumps({"action": "opened"}).encode(), "no `issue` object"),
        ("pull_request", json.dumps(example("issues", "opened")).encode(), "disagrees"),
        ("issues$(reboot)", b"{}", "invalid event name"),
    ],
)
def test_refusals_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], event: str, data: bytes, message: str
) -> None:
    path = _write(tmp_path, data)
    assert main(["gateway", "normalize", "--event", event, "--payload", path]) == 64
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert message in err[0]


def test_oversized_payload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, b" " * (25 * 1024 * 1024 + 1))
    assert main(["gateway", "normalize", "--event", "star", "--payload", path]) == 64
    assert "over the 25 MiB limit" in capsys.readouterr().err


def test_signature_flags_must_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, b"{}")
    argv = ["gateway", "normalize", "--event", "star", "--payload", path]
    assert main([*argv, "--signature", "sha256=00"]) == 64
    assert "--signature needs --secret-env" in capsys.readouterr().err


def test_bad_mention(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, json.dumps(example("star", "created")).encode())
    argv = ["gateway", "normalize", "--event", "star", "--payload", path, "--mention", "two words"]
    assert main(argv) == 64
    assert capsys.readouterr().err.startswith("holon: error: --mention:")
