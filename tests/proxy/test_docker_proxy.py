"""A docker run given a model key: the container never holds the key, whatever it looks at, and
has no network, yet its model request reaches the (loopback) provider with the key added by the
host's proxy, and the run record carries what that request used."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from holon.cli.report import describe_run
from holon.runner import RunRequest, run
from holon.runner.record import ModelUsage
from holon.secrets import Redactor
from tests.conftest import spec_for
from tests.proxy.conftest import KEY
from tests.support.fake_model import FakeModel

pytestmark = pytest.mark.docker

# Everything the agent could read, dumped to its output for the host to search: its environment,
# every process's environment and command line, the whole file tree but the kernel's and the
# output's, its network interfaces; then whether it can write where the socket is; then (when
# the test put the client in the workspace) one model request through the socket.
SCRIPT = r"""
out=/holon/output
mkdir -p $out/dump
env > $out/dump/env.txt
for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline /proc/self/mountinfo; do
  cat "$f"; echo
done > $out/dump/proc.txt 2>/dev/null
parts=""
for d in /* /holon/*; do
  case "$d" in /proc|/sys|/dev|/holon|/holon/output) ;; *) parts="$parts $d" ;; esac
done
tar -cf $out/dump/fs.tar $parts 2>$out/dump/tar.err
ls /sys/class/net > $out/dump/net.txt
if touch /holon/proxy/planted 2>/dev/null; then echo writable; else echo read-only; fi \
  > $out/dump/proxy-mount.txt
if [ -x /holon/workspace/uclient ]; then
  body='{"model":"claude-fake-1","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}'
  head='POST /v1/messages HTTP/1.1\r\nHost: model-proxy\r\nx-api-key: guessed\r\n'
  head="${head}anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n"
  printf "${head}content-length: %s\r\nconnection: close\r\n\r\n%s" "${#body}" "$body" \
    | /holon/workspace/uclient "$HOLON_MODEL_PROXY" > $out/dump/answer.txt
  echo "client exit $?" >> $out/dump/answer.txt
fi
printf '{"status":"completed","outcome":"success"}' > $out/manifest.json
"""


def _run(fake: FakeModel, workspace: Path, tmp_path: Path, image: str, **extra: Any) -> Any:
    spec = spec_for("proxy", context={"env": {"ANTHROPIC_BASE_URL": fake.anthropic_base}})
    return run(
        RunRequest(
            spec=spec,
            workspace=workspace,
            output=tmp_path / "out",
            runtime="docker",
            image=image,
            agent=["/bin/sh", "-c", SCRIPT],
            secrets={"ANTHROPIC_API_KEY": SecretStr(KEY)},
            work_dir=tmp_path,
            **extra,
        )
    )


def _everything(directory: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in sorted(directory.rglob("*")) if p.is_file()]


def test_the_container_finds_no_key_anywhere_and_has_no_network(
    agent_image: str, make_repo: Any, tmp_path: Path, fake: FakeModel
) -> None:
    result = _run(fake, make_repo(dirty=False), tmp_path, agent_image)
    assert result.outcome == "success", result.reason
    # The runner masks forwarded secrets in the output it publishes: nothing was there to mask,
    # so the key's absence below is the container's, not the masking's.
    assert not any("forwarded secrets redacted" in note for note in result.notes)
    dump = tmp_path / "out" / "dump"
    files = _everything(tmp_path / "out")
    assert (dump / "fs.tar").stat().st_size > 500_000  # busybox, the input, the workspace...
    find = Redactor([KEY])
    for path, data in files:
        assert KEY.encode() not in data, path
        assert not find.found_in(data), path  # nor base64- or URL-encoded
    env = dict(
        line.split("=", 1) for line in (dump / "env.txt").read_text().splitlines() if "=" in line
    )
    assert env["HOLON_MODEL_PROXY"] == "/holon/proxy/model.sock"
    assert env["HOLON_MODEL_PROVIDER"] == "anthropic"
    assert "ANTHROPIC_API_KEY" not in env
    assert "ANTHROPIC_BASE_URL" not in env  # the proxy's setting, not the agent's
    assert (dump / "net.txt").read_text().split() == ["lo"]  # network none by default
    assert (dump / "proxy-mount.txt").read_text().strip() == "read-only"
    # The runner's own record and log hold no key either; the run used no model.
    record = (tmp_path / "out" / "run.json").read_text()
    assert KEY not in record
    assert json.loads(record)["model_usage"] == {
        "input_tokens": 0,
        "output_tokens": 0,
        "requests": 0,
        "model": None,
    }


def test_a_request_from_the_container_reaches_the_model_with_the_key(
    agent_image: str,
    make_repo: Any,
    tmp_path: Path,
    fake: FakeModel,
    unix_client: Path | None,
) -> None:
    if unix_client is None:
        pytest.skip("no C compiler with a static libc here to build the test's socket client")
    workspace = make_repo(dirty=False)
    shutil.copy2(unix_client, workspace / "uclient")
    result = _run(fake, workspace, tmp_path, agent_image, model_tokens=1000)
    assert result.outcome == "success", result.reason
    answer = (tmp_path / "out" / "dump" / "answer.txt").read_text()
    assert answer.startswith("HTTP/1.1 200 "), answer
    assert "hello from the fake model" in answer
    assert answer.rstrip().endswith("client exit 0")
    [seen] = fake.requests
    assert seen.headers["x-api-key"] == KEY  # added on the host, the agent's guess dropped
    assert json.loads(seen.body)["messages"] == [{"role": "user", "content": "hi"}]
    usage = ModelUsage(input_tokens=14, output_tokens=7, requests=1, model="claude-fake-1")
    assert result.model_usage == usage
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["model_usage"] == usage.model_dump()
    summary = describe_run(result)
    assert (
        "model: 1 request(s) through the key proxy, 14 input and 7 output tokens (claude-fake-1)"
        in summary.splitlines()
    )
    for path, data in _everything(tmp_path / "out"):
        assert KEY.encode() not in data, path


def test_an_explicit_network_is_kept_and_a_run_without_a_model_key_is_not_proxied(
    agent_image: str, make_repo: Any, tmp_path: Path, fake: FakeModel
) -> None:
    spec = spec_for("proxy", context={"env": {"ANTHROPIC_BASE_URL": fake.anthropic_base}})
    result = run(
        RunRequest(
            spec=spec,
            workspace=make_repo(dirty=False),
            output=tmp_path / "out",
            runtime="docker",
            image=agent_image,
            agent=["/bin/sh", "-c", SCRIPT],
            secrets={"OTHER_TOKEN": SecretStr("not-a-model-key-123456")},
            work_dir=tmp_path,
        )
    )
    assert result.outcome == "success", result.reason
    dump = tmp_path / "out" / "dump"
    env = (dump / "env.txt").read_text()
    assert "HOLON_MODEL_PROXY" not in env
    assert "ANTHROPIC_BASE_URL=" in env  # untouched when there is no proxy
    assert (dump / "net.txt").read_text().split() != ["lo"]  # bridge, as before
    assert result.model_usage is None
