"""Benchmark: the agent's overhead outside the model, and its memory against the session's length.

Target (from the issue): a replayed 30-turn session with 20 tool calls runs within 3x of a
baseline that parses the same recorded responses and runs the same 20 commands directly with
`subprocess`, side by side; evidence and transcript are streamed to disk, with peak memory flat
in the number of turns (30 against 300 turns).

The session is generated (NDJSON, one ModelTurn per line: the replay engine's format): 20 turns
call `shell` with a cheap real command (shell built-ins, coreutils and grep on a 12 KiB file, no
interpreter starts), the others `view` or `edit` a file or only talk (the loop then nudges the
model), and the last calls `finish` citing a passing command.

- holon: `holon.agent.main.run_agent` in-process, exactly what `holon agent` runs (engine
  `replay`, `HOLON_REPLAY_SESSION`), in a fresh input/workspace/output layout (spec.yaml naming
  the built-in `github-issue-solve` skill, a git workspace): the spec, the skill and the
  prompts, the replay provider's parsing, the loop and its tools (each command in its own
  session and process group, output bounded), the evidence streamed to disk, `git status` for
  the skill's change check, summary.md and manifest.json.
- baseline: reads the same file, parses each line as a ModelTurn, and runs each shell call's
  command with `subprocess.run(["bash", "-c", cmd], capture_output=True)` in a copy of the
  same workspace, writing nothing.

Both run in this process, warm (one untimed, checked run of each first); the layouts are made
before the clock starts. Memory: `holon agent` as a fresh process (`python -m holon agent`,
started by a small launcher) per session length, its peak RSS from `wait4`, beside the evidence
each run wrote and the model's history (the text the loop keeps for the next request). Run from
the repository root: `python -m bench.agent`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._common import (
    MIN_ROUNDS,
    BenchError,
    Row,
    Samples,
    alternate,
    collect,
    git,
    judged,
    record,
    report,
    scratch,
    timed,
)

TARGET = 3.0
TURNS, COMMANDS = 30, 20
# The memory runs: the timed session and ten times its length.
MEMORY_SIZES = ((30, 20), (300, 200))
# How much more the long session's peak RSS may be than the short one's: the model's linear
# history grows by about 1.2 MiB from 30 to 300 turns (by design: each request sends it, and each
# tool result in it is cut at 16 KiB), while the evidence grows by 2.2 MiB; an agent holding its
# evidence in memory goes over.
MEMORY_ALLOWANCE_MIB = 2.5
SMOKE_TURNS, SMOKE_COMMANDS = 6, 3
SMOKE_MEMORY_SIZES = ((6, 3), (12, 6))
SMOKE_ROUNDS = 1

SKILL = "github-issue-solve"
SPEC = """\
version: v1
kind: Holon
metadata:
  name: bench-agent
  skills: [{skill}]
goal:
  description: Keep the progress file up to date
  issue_id: "7"
constraints:
  max_steps: {max_steps}
  timeout: 30m
"""

# A text file the commands read: 12 KiB, more than the 8 KiB tail of output each command's
# evidence keeps, less than the 16 KiB the model is shown.
_LINE = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron {n}\n"
DATA = "".join(_LINE.format(n=n) for n in range(150))
# The commands, cycled: half print more than the evidence keeps of them.
COMMAND_CYCLE = (
    "cat data.txt",
    "true",
    "seq 1 2500",
    "echo building step {i}",
    "grep -n alpha data.txt",
    "wc -l data.txt src/app.txt",
    "head -c 12000 data.txt",
    "ls -la src",
    "printf '%s\\n' one two three {i}",
    "tail -n 100 data.txt",
)
# What the turns that call no shell do, cycled.
OTHER_CYCLE = ("view", "edit", "view", "edit", "text", "edit", "view", "edit", "view")


@dataclass(frozen=True)
class Session:
    path: Path
    turns: int
    commands: int


def make_session(path: Path, turns: int, commands: int) -> Session:
    """A recorded session: `turns` model turns, `commands` of them a shell call, the last finish.

    The shell calls are spread evenly over the turns before the last."""
    if turns < 2 or not 1 <= commands <= turns - 1:
        raise BenchError(f"a session of {turns} turns cannot hold {commands} commands")
    body = turns - 1
    lines: list[dict[str, Any]] = []
    shells = others = edits = 0
    for i in range(body):
        usage = {"input_tokens": 2000 + 150 * i, "output_tokens": 40 + i % 30}
        call: dict[str, Any] | None
        if (i + 1) * commands // body > i * commands // body:
            command = COMMAND_CYCLE[shells % len(COMMAND_CYCLE)].format(i=shells)
            shells += 1
            text = f"Running command {shells} to see where things stand."
            call = {"name": "shell", "arguments": {"command": command}}
        else:
            kind = OTHER_CYCLE[others % len(OTHER_CYCLE)]
            others += 1
            if kind == "view":
                text = "Reading the source."
                start = 1 + (others * 7) % 100
                call = {
                    "name": "view",
                    "arguments": {"path": "data.txt", "start_line": start, "end_line": start + 40},
                }
            elif kind == "edit":
                text = "Recording the progress."
                call = {
                    "name": "edit",
                    "arguments": {
                        "path": "progress.txt",
                        "old": f"step {edits}\n",
                        "new": f"step {edits + 1}\n",
                    },
                }
                edits += 1
            else:
                text = "Thinking about what to look at next before calling a tool."
                call = None
        turn: dict[str, Any] = {
            "model": "bench-recorded",
            "text": text,
            "stop_reason": "end_turn" if call is None else "tool_use",
            "usage": usage,
            "tool_calls": [] if call is None else [{"id": f"call_{i + 1}", **call}],
        }
        lines.append(turn)
    finish = {
        "status": "success",
        "summary": f"Ran {commands} commands and updated progress.txt {edits} times.",
        "verification": [commands],
    }
    lines.append(
        {
            "model": "bench-recorded",
            "text": "Done.",
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 2000 + 150 * body, "output_tokens": 60},
            "tool_calls": [{"id": f"call_{turns}", "name": "finish", "arguments": finish}],
        }
    )
    if edits == 0:
        raise BenchError("the session makes no change; the skill would fail it")
    with path.open("w") as out:
        for line in lines:
            out.write(json.dumps(line) + "\n")
    return Session(path, turns, commands)


def make_workspace(path: Path) -> None:
    """The template workspace every run copies: a git repository with the files the session
    reads and edits."""
    (path / "src").mkdir(parents=True)
    (path / "data.txt").write_text(DATA)
    (path / "progress.txt").write_text("# progress\nstep 0\n")
    (path / "src" / "app.txt").write_text("the application\n" * 20)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "start")


@dataclass(frozen=True)
class Layout:
    root: Path
    input: Path
    workspace: Path
    output: Path

    def env(self, session: Session) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root),
            "LANG": "C.UTF-8",
            "HOLON_INPUT_DIR": str(self.input),
            "HOLON_WORKSPACE_DIR": str(self.workspace),
            "HOLON_OUTPUT_DIR": str(self.output),
            "HOLON_ENGINE": "replay",
            "HOLON_REPLAY_SESSION": str(session.path),
        }


def make_layout(root: Path, template: Path, session: Session) -> Layout:
    """A fresh run's directories, as the runner lays them out (not timed)."""
    layout = Layout(root, root / "input", root / "workspace", root / "output")
    layout.input.mkdir(parents=True)
    layout.output.mkdir()
    shutil.copytree(template, layout.workspace, symlinks=True)
    (layout.input / "spec.yaml").write_text(SPEC.format(skill=SKILL, max_steps=session.turns + 10))
    return layout


def run_holon(layout: Layout, session: Session) -> int:
    """`holon agent` in-process: its exit code."""
    from holon.agent.main import Options, run_agent

    return run_agent(Options(), layout.env(session))


def run_baseline(session: Session, workspace: Path) -> int:
    """Parse every recorded turn and run its shell commands bare; the number run."""
    from holon.agent.conversation import ModelTurn

    ran = 0
    with session.path.open("rb") as handle:
        for raw in handle:
            if not raw.strip():
                continue
            turn = ModelTurn.model_validate_json(raw)
            for call in turn.tool_calls:
                if call.name == "shell" and call.arguments is not None:
                    subprocess.run(
                        ["bash", "-c", call.arguments["command"]],
                        cwd=workspace,
                        capture_output=True,
                        check=False,
                    )
                    ran += 1
    return ran


def check_holon_run(layout: Layout, session: Session, code: int) -> None:
    """The agent did the whole session: success, every turn, every command, the change."""
    manifest_path = layout.output / "manifest.json"
    if not manifest_path.is_file():
        raise BenchError("holon agent wrote no manifest.json")
    manifest = json.loads(manifest_path.read_text())
    if code != 0 or manifest.get("outcome") != "success":
        raise BenchError(
            f"holon agent exited {code}, outcome {manifest.get('outcome')}: {manifest.get('error')}"
        )
    turns = manifest.get("metadata", {}).get("turns")
    if turns != session.turns:
        raise BenchError(f"holon agent took {turns} turns, the session has {session.turns}")
    commands = (layout.output / "evidence" / "commands.ndjson").read_text().splitlines()
    if len(commands) != session.commands:
        raise BenchError(f"{len(commands)} commands recorded, the session has {session.commands}")
    failed = [c for c in map(json.loads, commands) if c["exit_code"] != 0]
    if failed:
        raise BenchError(f"command {failed[0]['command']!r} exited {failed[0]['exit_code']}")
    edits = (layout.workspace / "progress.txt").read_text()
    if "step 0\n" in edits:
        raise BenchError("the session's edits did not reach progress.txt")


def evidence_bytes(output: Path) -> dict[str, int]:
    evidence = output / "evidence"
    return {
        name: (evidence / name).stat().st_size for name in ("transcript.ndjson", "commands.ndjson")
    }


def history_bytes(output: Path) -> int:
    """About the text the loop keeps for the model at the end of the run (its linear history):
    the turns' text and calls and the tool results, as the transcript recorded them."""
    total = 0
    with (output / "evidence" / "transcript.ndjson").open("rb") as handle:
        for raw in handle:
            entry = json.loads(raw)
            if entry.get("kind") in ("turn", "tool_result", "nudge"):
                total += len(str(entry.get("text", "")).encode())
                total += len(json.dumps(entry.get("tool_calls", [])))
    return total


@dataclass(frozen=True)
class MemoryRun:
    session: Session
    peak_kib: int
    evidence: dict[str, int]
    history: int


# Starts the measured process and reports its peak RSS. The measured process's parent must be
# small: a child that subprocess starts (vfork, or fork) carries its parent's resident size into
# its own ru_maxrss when it execs (Linux records the peak of the address space it leaves), so,
# started straight from this process, the agent's peak could never read below this benchmark's.
LAUNCHER = """\
import json, os, subprocess, sys
proc = subprocess.Popen(
    sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
)
err = proc.stderr.read().decode("utf-8", "replace")
_, status, usage = os.wait4(proc.pid, 0)
code = os.waitstatus_to_exitcode(status)
print(json.dumps({"exit": code, "maxrss_kib": usage.ru_maxrss, "stderr": err}))
"""


def measure_memory(work: Path, template: Path, session: Session, tag: str) -> MemoryRun:
    """`holon agent` as a fresh process on `session`: its peak RSS and the evidence it wrote."""
    layout = make_layout(work / tag, template, session)
    env = layout.env(session)
    # The repository's holon, whatever the current directory.
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    done = subprocess.run(
        [sys.executable, "-c", LAUNCHER, sys.executable, "-m", "holon", "agent"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        result = json.loads(done.stdout)
    except ValueError:
        raise BenchError(f"the memory launcher failed: {done.stderr.strip()[-500:]}") from None
    if result["stderr"].strip():
        raise BenchError(f"holon agent wrote to stderr: {result['stderr'].strip()[:500]}")
    check_holon_run(layout, session, result["exit"])
    return MemoryRun(
        session,
        result["maxrss_kib"],
        evidence_bytes(layout.output),
        history_bytes(layout.output),
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.agent", description=__doc__)
    parser.add_argument("--rounds", type=int, help=f"alternating rounds (default {MIN_ROUNDS})")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, check it works, do not judge the target"
    )
    parser.add_argument("--work-dir", type=Path, help="where to put the temporary files")
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = SMOKE_ROUNDS if args.smoke else MIN_ROUNDS
    if args.rounds < 1 or (not args.smoke and args.rounds < MIN_ROUNDS):
        parser.error(f"--rounds must be at least {MIN_ROUNDS} (or use --smoke)")
    return args


def _kib(n: float) -> str:
    return f"{n / 1024:,.0f} KiB"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    turns, commands = (SMOKE_TURNS, SMOKE_COMMANDS) if args.smoke else (TURNS, COMMANDS)
    sizes = SMOKE_MEMORY_SIZES if args.smoke else MEMORY_SIZES
    with scratch("holon-bench-agent-", args.work_dir) as tmp:
        work = Path(tmp)
        try:
            template = work / "template"
            make_workspace(template)
            session = make_session(work / "session.ndjson", turns, commands)
            print(f"session: {turns} turns, {commands} shell commands, the last turn finish")
            base, meas = time_both(work, template, session, args.rounds)
            print("memory: holon agent as a fresh process per session length ...")
            memory = [
                measure_memory(
                    work, template, make_session(work / f"mem-{t}.ndjson", t, c), f"mem-{t}"
                )
                for t, c in sizes
            ]
        except BenchError as exc:
            print(f"benchmark failed: {exc}", file=sys.stderr)
            return 2
    code = report(
        f"replayed {turns}-turn session with {commands} commands "
        f"({args.rounds} alternating rounds)",
        Samples("holon agent (replay, in-process)", meas),
        Samples("parse + subprocess.run(bash -c)", base),
        TARGET,
        smoke=args.smoke,
        figure=f"`holon agent` replay, {turns} turns, {commands} commands (in-process)",
    )
    extra = (statistics.median(meas) - statistics.median(base)) / turns
    print(f"  holon's own work per turn (difference of medians / turns): {extra * 1000:.2f} ms")
    return max(code, report_memory(memory, smoke=args.smoke))


def time_both(
    work: Path, template: Path, session: Session, rounds: int
) -> tuple[list[float], list[float]]:
    """The checked warm-up of each side, then `rounds` alternating timed runs of both."""
    layout = make_layout(work / "check-holon", template, session)
    check_holon_run(layout, session, run_holon(layout, session))
    ran = run_baseline(session, make_layout(work / "check-base", template, session).workspace)
    if ran != session.commands:
        raise BenchError(f"the baseline ran {ran} commands, the session has {session.commands}")
    print(f"verified: holon agent succeeded with {ran} commands; the baseline ran {ran}")
    # Every run gets a fresh layout, made before the clock starts.
    holon_layouts = [make_layout(work / f"holon-{i}", template, session) for i in range(rounds)]
    base_layouts = [make_layout(work / f"base-{i}", template, session) for i in range(rounds)]

    def baseline(i: int) -> float:
        return timed(lambda: run_baseline(session, base_layouts[i].workspace))

    def measured(i: int) -> float:
        codes: list[int] = []
        seconds = timed(lambda: codes.append(run_holon(holon_layouts[i], session)))
        check_holon_run(holon_layouts[i], session, codes[0])
        return seconds

    return alternate(rounds, baseline, measured)


def report_memory(runs: list[MemoryRun], *, smoke: bool) -> int:
    """Print the peaks and the evidence beside them; 1 when the longer session's peak grew more
    than the allowance."""
    print()
    print("peak memory of holon agent (a fresh process each, ru_maxrss) by session length")
    for run in runs:
        ev = run.evidence
        print(
            f"  {run.session.turns:>4} turns, {run.session.commands:>4} commands: "
            f"peak RSS {run.peak_kib / 1024:5.1f} MiB"
        )
        print(
            f"      evidence/transcript.ndjson {_kib(ev['transcript.ndjson'])}, "
            f"evidence/commands.ndjson {_kib(ev['commands.ndjson'])}; "
            f"the model's history {_kib(run.history)}"
        )
    small, large = runs[0], runs[-1]
    grew = (large.peak_kib - small.peak_kib) / 1024
    written = sum(large.evidence.values()) / max(sum(small.evidence.values()), 1)
    flat = grew <= MEMORY_ALLOWANCE_MIB
    print(
        f"  {large.session.turns} vs {small.session.turns} turns: peak RSS "
        f"{large.peak_kib / small.peak_kib:.2f}x ({grew:+.1f} MiB), evidence written {written:.1f}x"
    )
    print(f"  target: peak RSS at most +{MEMORY_ALLOWANCE_MIB:.1f} MiB")
    verdict = "NOT JUDGED (smoke run)" if smoke else "PASS" if flat else "FAIL"
    print(f"  result: {verdict}")
    record(
        Row(
            f"`holon agent` peak RSS, {small.session.turns} -> {large.session.turns} turns",
            f"{grew:+.1f} MiB",
            f"evidence {written:.1f}x",
            f"{large.peak_kib / small.peak_kib:.2f}x",
            f"<= +{MEMORY_ALLOWANCE_MIB:g} MiB",
            judged(smoke, flat),
        )
    )
    return 0 if smoke or flat else 1


def results(argv: list[str] | None = None) -> list[Row]:
    return collect(main, argv or [])[1]


if __name__ == "__main__":
    sys.exit(main())
