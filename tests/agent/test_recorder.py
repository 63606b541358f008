"""The evidence recorder: streamed, masked, bounded, not fooled by what the model's shell does to
the files, with an in-memory index of exit codes the outcome trusts."""

from __future__ import annotations

import base64
import json
import os
import tracemalloc
from pathlib import Path

from holon.agent.conversation import Usage
from holon.agent.recorder import MAX_ENTRY, MAX_OUTPUT_TAIL, MAX_STRING, EvidenceRecorder
from holon.secrets import Redactor
from tests.agent.fakes import KEY

PLAIN_SECRET = "hunter2-plain-value"  # not secret-looking: only known as a forwarded value


def _recorder(output: Path) -> EvidenceRecorder:
    output.mkdir(exist_ok=True)
    return EvidenceRecorder.create(output, Redactor([PLAIN_SECRET]))


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_entries_are_on_disk_as_they_happen(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    recorder.transcript({"kind": "turn", "text": "hello"})
    # Not closed yet: each entry was flushed when it was made.
    assert _lines(tmp_path / "evidence/transcript.ndjson")[0]["text"] == "hello"
    record = recorder.command("pytest -q", 0, duration=1.5, output="3 passed")
    assert record.id == 1
    assert _lines(tmp_path / "evidence/commands.ndjson")[0]["output_tail"] == "3 passed"
    recorder.usage(Usage(input_tokens=10, output_tokens=2))
    recorder.usage(Usage(input_tokens=5, output_tokens=1))
    usage = json.loads((tmp_path / "evidence/usage.json").read_text())
    assert usage == {"input_tokens": 15, "output_tokens": 3, "requests": 2}
    recorder.close()


def test_secrets_never_reach_the_evidence(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    encoded = base64.b64encode(PLAIN_SECRET.encode()).decode()
    recorder.transcript(
        {"kind": "tool", "args": {"command": f"echo {KEY}"}, "list": [PLAIN_SECRET, encoded]}
    )
    recorder.command(f"curl -H 'x: {PLAIN_SECRET}'", 0, duration=0, output=f"env: KEY={KEY}\n")
    recorder.close()
    text = "".join(p.read_text() for p in (tmp_path / "evidence").iterdir())
    assert KEY not in text
    assert PLAIN_SECRET not in text
    assert encoded not in text
    assert "***" in text
    for line in (tmp_path / "evidence/transcript.ndjson").read_text().splitlines():
        json.loads(line)  # masking never breaks a line's JSON


def test_entries_are_bounded(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    recorder.transcript({"kind": "turn", "text": "x" * (MAX_STRING * 3)})
    recorder.transcript({"kind": "many", "parts": ["y" * (MAX_STRING - 10)] * 20})
    record = recorder.command("make", 2, duration=0, output="a" * 100 + "z" * (MAX_OUTPUT_TAIL * 4))
    recorder.close()
    lines = (tmp_path / "evidence/transcript.ndjson").read_text().splitlines()
    assert all(len(line) <= MAX_ENTRY + 100 for line in lines)
    assert "more characters cut" in json.loads(lines[0])["text"]
    assert json.loads(lines[1])["truncated"] is True
    assert record.truncated
    assert record.output_tail.endswith("z" * 100)  # the tail is what is kept
    assert "a" not in record.output_tail.split("\n", 1)[1]


def test_the_index_is_not_what_the_model_rewrites_on_disk(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    recorder.command("pytest", 1, duration=0, output="1 failed")
    recorder.command("sleep 999", None, duration=300, output="", timed_out=True)
    # The model's shell rewrites the evidence to claim the tests passed.
    commands = tmp_path / "evidence/commands.ndjson"
    commands.unlink()
    commands.write_text('{"id": 1, "command": "pytest", "exit_code": 0}\n')
    assert recorder.exit_codes == {1: 1, 2: None}
    recorder.close()


def test_a_planted_link_is_replaced_never_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    output = tmp_path / "out"
    output.mkdir()
    (output / "evidence").symlink_to(target)
    recorder = _recorder(output)
    assert not (output / "evidence").is_symlink()
    victim = tmp_path / "victim.json"
    victim.write_text("precious\n")
    (output / "evidence/usage.json").unlink()
    (output / "evidence/usage.json").symlink_to(victim)
    recorder.usage(Usage(input_tokens=1))
    recorder.close()
    assert victim.read_text() == "precious\n"
    assert list(target.iterdir()) == []
    assert not (output / "evidence/usage.json").is_symlink()


def test_memory_stays_flat_however_many_entries(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    entry = {"kind": "turn", "text": "z" * 1000}
    for _ in range(200):  # warm up caches
        recorder.transcript(entry)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for index in range(3000):
            recorder.transcript(entry)
            recorder.command(f"echo {index}", 0, duration=0, output="o" * 500)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    recorder.close()
    assert os.path.getsize(tmp_path / "evidence/transcript.ndjson") > 3_000_000
    # 3 MB of transcript went to disk; what stays is the small index and the summary's list.
    assert after - before < 400_000
