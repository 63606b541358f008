"""Fake `claude` and `codex` executables for the CLI engine tests.

Each is a small Python script (shebang: the interpreter running the tests) that reads its prompt
from standard input, finds the finish.json path the prompt names, really runs its commands in the
workspace (the CLI's shell tool), and prints the documented event stream:

- claude: `claude -p --output-format stream-json --verbose` (system/init with model and
  claude_code_version; assistant messages with text and tool_use blocks, one event per block with
  the message's usage; user messages with tool_result blocks, a failed Bash result starting
  "Exit code N" with is_error; a final result with subtype, is_error, num_turns, usage and
  total_cost_usd), shaped on Claude Code's own output as published (e.g. the recorded protocol
  of hrntknr/claude-code-protocol and the Agent SDK's message types).
- codex: `codex exec --json` (thread.started, turn.started, item.started/item.completed with
  command_execution {command, aggregated_output, exit_code, status}, reasoning, file_change and
  agent_message items, turn.completed {usage}, turn.failed {error}, error), shaped on
  codex-rs/exec/src/exec_events.rs.

`FAKE_SCENARIO` picks what happens; with `FAKE_RECORD` set the fake first writes its argv,
environment, working directory and prompt there as JSON; with `FAKE_PIDS` it writes the pid of
a child it leaves running (the hang scenarios), to prove the whole group dies.
"""

from __future__ import annotations

import sys
from pathlib import Path

_COMMON = r"""
import json, os, shlex, subprocess, sys, time

prompt = sys.stdin.read()
if os.environ.get("FAKE_RECORD"):
    with open(os.environ["FAKE_RECORD"], "w") as handle:
        json.dump({"argv": sys.argv, "env": dict(os.environ), "cwd": os.getcwd(),
                   "stdin": prompt}, handle)
scenario = os.environ.get("FAKE_SCENARIO", "success")
finish_path = next(
    (line.strip() for line in prompt.splitlines() if line.strip().endswith("finish.json")), None
)


def emit(event):
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def write_finish(status, summary, cited, question=None):
    body = {"status": status, "summary": summary, "verification_commands": cited}
    if question is not None:
        body["question"] = question
    with open(finish_path, "w") as handle:
        json.dump(body, handle)


def hang():
    child = subprocess.Popen(["sleep", "1000"])
    if os.environ.get("FAKE_PIDS"):
        with open(os.environ["FAKE_PIDS"], "w") as handle:
            handle.write(str(child.pid))
    time.sleep(1000)
"""

CLAUDE = (
    _COMMON
    + r"""
SESSION = "8f6bd1a4-3c3e-4f52-9a0e-0c1f4b1d2e3a"
MODEL = "claude-sonnet-4-5-20250929"
VERIFY = "test -s fixed.txt && echo '2 passed'"


def usage(output_tokens):
    return {"input_tokens": 10, "cache_creation_input_tokens": 100,
            "cache_read_input_tokens": 1000, "output_tokens": output_tokens,
            "service_tier": "standard"}


def assistant(message_id, block, output_tokens=5):
    emit({"type": "assistant", "message": {
        "id": message_id, "type": "message", "role": "assistant", "model": MODEL,
        "content": [block], "stop_reason": None, "stop_sequence": None,
        "usage": usage(output_tokens)},
        "parent_tool_use_id": None, "session_id": SESSION, "uuid": message_id + "-u"})


def bash(message_id, tool_id, command):
    assistant(message_id, {"type": "tool_use", "id": tool_id, "name": "Bash",
                           "input": {"command": command, "description": "Run it"}})
    done = subprocess.run(command, shell=True, capture_output=True, text=True)
    out = (done.stdout + done.stderr).rstrip("\n")
    failed = done.returncode != 0
    content = f"Exit code {done.returncode}\n{out}" if failed else out
    emit({"type": "user", "message": {"role": "user", "content": [
        {"tool_use_id": tool_id, "type": "tool_result", "content": content,
         "is_error": failed}]},
        "parent_tool_use_id": None, "session_id": SESSION, "uuid": tool_id + "-r",
        "tool_use_result": {"stdout": done.stdout, "stderr": done.stderr,
                            "interrupted": False, "isImage": False}})
    return done.returncode


def result(subtype="success", is_error=False, turns=3, text="Done.", code=0, errors=None):
    event = {"type": "result", "subtype": subtype, "is_error": is_error,
             "duration_ms": 1234, "duration_api_ms": 1000, "num_turns": turns,
             "session_id": SESSION, "total_cost_usd": 0.0123,
             "usage": usage(40), "modelUsage": {}, "permission_denials": [],
             "uuid": "result-u"}
    if errors is not None:
        event["errors"] = errors
    else:
        event["result"] = text
    emit(event)
    sys.exit(code)


emit({"type": "system", "subtype": "init", "cwd": os.getcwd(), "session_id": SESSION,
      "tools": ["Bash", "Read", "Write", "Edit", "Glob", "Grep"], "mcp_servers": [],
      "model": MODEL, "permissionMode": "bypassPermissions", "slash_commands": [],
      "apiKeySource": "ANTHROPIC_API_KEY", "claude_code_version": "2.1.0",
      "output_style": "default", "agents": [], "skills": [], "plugins": [], "uuid": "init-u"})

if scenario == "hang":
    hang()
if scenario == "malformed":
    print("Welcome to Claude Code! (not JSON)")
    print("[1, 2, 3]")
    print('{"type": "assistant", "message": ')
    print("token sk-ant-api03-abcdefghijklmnopqrstuvwxyz in a stray line")
    sys.stdout.flush()
if scenario == "huge":
    emit({"type": "assistant", "message": {"id": "msg_big", "role": "assistant",
          "content": [{"type": "text", "text": "x" * (6 * 1024 * 1024)}]}})
    bash("msg_00", "toolu_00", "head -c 1048576 /dev/zero | tr '\\0' 'y'")

if os.environ.get("FAKE_LEAK"):
    bash("msg_env", "toolu_env", "env")
assistant("msg_01", {"type": "text", "text": "I will fix it and run the tests."})
bash("msg_01", "toolu_01", "printf 'fixed\\n' > fixed.txt")
if scenario == "failing_command":
    code = bash("msg_02", "toolu_02", "echo 'FAILED test_parse' >&2; exit 3")
    write_finish("failure", "The tests still fail.", ["echo 'FAILED test_parse' >&2; exit 3"])
    result()
bash("msg_02", "toolu_02", VERIFY)
if scenario == "max_turns":
    write_finish("success", "Claimed before the limit.", [VERIFY])
    result("error_max_turns", True, turns=2, text="", code=1)
if scenario == "error_result":
    write_finish("success", "Claimed despite the error.", [VERIFY])
    result("error_during_execution", True, errors=["API error: Overloaded"], code=1)
if scenario == "stderr_exit":
    sys.stderr.write("some warning\nError: Invalid API key · Please run /login\n")
    sys.exit(2)
assistant("msg_03", {"type": "text", "text": "Fixed; the tests pass."}, output_tokens=7)
if scenario == "symlink_finish":
    os.symlink("/etc/passwd", finish_path)
elif scenario == "invalid_finish":
    with open(finish_path, "w") as handle:
        json.dump({"status": "done", "summary": ""}, handle)
elif scenario == "unrecorded_citation":
    write_finish("success", "Fixed.", [VERIFY, "pytest -q"])
elif scenario != "no_finish":
    write_finish("success", "Fixed the parser; the tests pass.", [VERIFY])
result()
"""
)

CODEX = (
    _COMMON
    + r"""
VERIFY = "test -s fixed.txt && echo '2 passed'"
counter = iter(range(100))


def item(kind, **fields):
    return {"id": f"item_{next(counter)}", "type": kind, **fields}


def run(script):
    command = shlex.join(["/bin/bash", "-lc", script])  # how Codex reports a shell command
    started = item("command_execution", command=command, aggregated_output="",
                   exit_code=None, status="in_progress")
    emit({"type": "item.started", "item": started})
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    emit({"type": "item.completed", "item": {
        **started, "aggregated_output": done.stdout + done.stderr,
        "exit_code": done.returncode,
        "status": "completed" if done.returncode == 0 else "failed"}})
    return done.returncode


emit({"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"})
emit({"type": "turn.started"})
if scenario == "hang":
    hang()
emit({"type": "item.completed", "item": item("reasoning", text="**Fixing the parser**")})
with open("fixed.txt", "w") as handle:
    handle.write("fixed\n")
emit({"type": "item.completed", "item": item(
    "file_change", changes=[{"path": os.path.abspath("fixed.txt"), "kind": "add"}],
    status="completed")})
if scenario == "failing_command":
    run("echo 'FAILED test_parse' >&2; exit 3")
    write_finish("failure", "The tests still fail.", ["echo 'FAILED test_parse' >&2; exit 3"])
else:
    run(VERIFY)
if scenario == "turn_failed":
    write_finish("success", "Claimed despite the failure.", [VERIFY])
    emit({"type": "turn.failed", "error": {"message": "stream disconnected before completion"}})
    sys.exit(1)
if scenario == "reconnected":
    emit({"type": "error", "message": "Reconnecting... 1/5"})
if scenario == "fatal_error":
    emit({"type": "error", "message": "unexpected status 401 Unauthorized"})
    sys.exit(1)
emit({"type": "item.completed", "item": item("agent_message", text="Fixed; the tests pass.")})
if scenario not in ("no_finish", "failing_command"):
    write_finish("success", "Fixed the parser; the tests pass.", [VERIFY])
emit({"type": "turn.completed",
      "usage": {"input_tokens": 1200, "cached_input_tokens": 200, "output_tokens": 345}})
"""
)


def install(directory: Path, name: str, source: str) -> Path:
    """Write the fake as an executable named `name` in `directory`."""
    path = directory / name
    path.write_text(f"#!{sys.executable}\n{source}")
    path.chmod(0o755)
    return path
