"""Ending every process of a local run, whatever the agent did to get away (setsid, env -i, forks).

While a local run executes, Holon is the child subreaper of its process tree
(`prctl(PR_SET_CHILD_SUBREAPER)`): a process whose parent exits is reparented to Holon instead of
init, so nothing the agent starts can leave the tree. When the agent has exited (or timed out),
every process of the run is killed and reaped: the agent's descendants, and the orphans reparented
to Holon, recognized as Holon's children in a session other than Holon's own (Holon's own helpers
stay in its session; the agent starts in a new one and no descendant can rejoin ours). A tag in
the environment (`HOLON_RUN_TAG`) is a second net for systems without a subreaper. The tag is
the run id plus a random part, one per execution: two Holon processes on one machine may run
the same intent at once (the same event delivered to two jobs of a self-hosted runner), and the
run id alone would make each one's cleanup kill the other's agent.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

ENV_RUN_TAG = "HOLON_RUN_TAG"
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
_lock = threading.Lock()
_users = 0
_set_by_us = False


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    sid: int
    zombie: bool


def _prctl(option: int, arg: object) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.prctl(option, arg, 0, 0, 0))


def _is_subreaper() -> bool:
    flag = ctypes.c_int(0)
    if _prctl(PR_GET_CHILD_SUBREAPER, ctypes.pointer(flag)) != 0:
        return False
    return flag.value != 0


@contextlib.contextmanager
def subreaper() -> Iterator[bool]:
    """Make this process the child subreaper while the block runs; yields whether it is one."""
    global _users, _set_by_us
    with _lock:
        if _users == 0:
            try:
                _set_by_us = not _is_subreaper() and _prctl(PR_SET_CHILD_SUBREAPER, 1) == 0
            except (OSError, AttributeError):  # no prctl: not Linux
                _set_by_us = False
        _users += 1
        active = _set_by_us or _safe_is_subreaper()
    try:
        yield active
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _set_by_us:
                # Orphans of later, unrelated work go back to init as usual.
                _prctl(PR_SET_CHILD_SUBREAPER, 0)
                _set_by_us = False


def _safe_is_subreaper() -> bool:
    try:
        return _is_subreaper()
    except (OSError, AttributeError):
        return False


def process_table() -> dict[int, Proc]:
    """Every process visible in /proc, with its parent and session."""
    table = {}
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as handle:
                    raw = handle.read()
            except OSError:
                continue
            # The command name may hold spaces and parentheses: fields start after the last ')'.
            fields = raw[raw.rfind(b")") + 2 :].split()
            if len(fields) < 4:
                continue
            pid = int(entry.name)
            table[pid] = Proc(pid, int(fields[1]), int(fields[3]), fields[0] in (b"Z", b"X"))
    return table


def run_members(
    table: dict[int, Proc],
    *,
    holon: int,
    holon_sid: int,
    agent: int,
    before: frozenset[int],
    tagged: frozenset[int] = frozenset(),
) -> set[int]:
    """The processes of a run: the agent, orphans adopted from it, tagged ones, and descendants."""
    roots = {agent} | set(tagged)
    for proc in table.values():
        if proc.ppid == holon and proc.pid not in before and proc.sid != holon_sid:
            roots.add(proc.pid)
    children: dict[int, list[int]] = {}
    for proc in table.values():
        children.setdefault(proc.ppid, []).append(proc.pid)
    members: set[int] = set()
    stack = [pid for pid in roots if pid in table]
    while stack:
        pid = stack.pop()
        if pid in members or pid == holon:
            continue
        members.add(pid)
        stack.extend(children.get(pid, ()))
    return members


def run_tag(run_id: str) -> str:
    """A tag for one execution of `run_id`, unique across processes (see the docstring)."""
    return f"{run_id}.{secrets.token_hex(8)}"


def tagged_processes(tag: str) -> frozenset[int]:
    """Processes carrying this execution's `HOLON_RUN_TAG` in their environment."""
    marker = f"{ENV_RUN_TAG}={tag}".encode() + b"\0"
    found = set()
    me = os.getpid()
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as handle:
                    if marker in handle.read():
                        found.add(int(entry.name))
            except OSError:
                continue
    return frozenset(found)


def children_of_self() -> frozenset[int]:
    me = os.getpid()
    return frozenset(p.pid for p in process_table().values() if p.ppid == me)


def end_run(agent: int | None, tag: str, before: frozenset[int], deadline: float = 5.0) -> int:
    """Kill and reap every process of the run except the agent itself (its Popen reaps it).

    `agent` is the agent's pid while it is not yet reaped, else None (its pid may be reused; its
    orphans are found as adopted children). Returns how many other processes were killed.
    """
    holon, holon_sid = os.getpid(), os.getsid(0)
    killed: set[int] = set()
    if agent is not None:
        # The agent's own group first: all there is to go on where /proc is missing.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(agent, signal.SIGKILL)
    else:
        agent = -1
    stop = time.monotonic() + deadline
    while True:
        table = process_table()
        members = run_members(
            table,
            holon=holon,
            holon_sid=holon_sid,
            agent=agent,
            before=before,
            tagged=tagged_processes(tag),
        )
        pending = False
        for pid in members:
            proc = table[pid]
            if not proc.zombie:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                    if pid != agent:
                        killed.add(pid)
                pending = True
            if proc.ppid == holon and pid != agent:
                # Adopted by us: only we can reap it, and only by its own pid, so no other
                # child's exit status is taken from its owner.
                with contextlib.suppress(ChildProcessError):
                    if os.waitpid(pid, os.WNOHANG)[0] == 0:
                        pending = True
            elif proc.zombie and pid != agent:
                pending = True  # its parent dies next and hands it to us
        if not pending or time.monotonic() > stop:
            return len(killed)
        time.sleep(0.005)
