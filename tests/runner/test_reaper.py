"""Which processes belong to a run, and ending them all (holon.runner.reaper)."""

from __future__ import annotations

import os
import subprocess
import time

from holon.contract.layout import ENV_RUN_ID
from holon.runner.reaper import (
    ENV_RUN_TAG,
    Proc,
    children_of_self,
    end_run,
    process_table,
    run_members,
    run_tag,
    subreaper,
)

HOLON, HOLON_SID, AGENT = 100, 100, 200


def _table(*rows: tuple[int, int, int]) -> dict[int, Proc]:
    return {pid: Proc(pid, ppid, sid, False) for pid, ppid, sid in rows}


def test_members_are_the_agent_tree_and_orphans_adopted_from_another_session() -> None:
    table = _table(
        (HOLON, 1, HOLON_SID),
        (AGENT, HOLON, AGENT),
        (201, AGENT, AGENT),  # the agent's child
        (202, 201, 202),  # a grandchild that called setsid: still under the agent
        (300, HOLON, 300),  # an orphan of the run, adopted by Holon (subreaper)
        (301, 300, 300),  # its child
        (400, HOLON, HOLON_SID),  # Holon's own helper (git): same session as Holon
        (500, HOLON, 500),  # a child of Holon from before the run
        (600, 1, 600),  # an unrelated process
    )
    members = run_members(
        table, holon=HOLON, holon_sid=HOLON_SID, agent=AGENT, before=frozenset({500})
    )
    assert members == {AGENT, 201, 202, 300, 301}


def test_tagged_processes_count_even_when_not_adopted() -> None:
    table = _table((HOLON, 1, HOLON_SID), (700, 1, 700), (701, 700, 700))
    members = run_members(
        table,
        holon=HOLON,
        holon_sid=HOLON_SID,
        agent=AGENT,
        before=frozenset(),
        tagged=frozenset({700}),
    )
    assert members == {700, 701}


def test_process_table_sees_this_process() -> None:
    me = process_table()[os.getpid()]
    assert me.ppid == os.getppid()
    assert me.sid == os.getsid(0)


def test_subreaper_adopts_and_end_run_kills_and_reaps_escapees() -> None:
    with subreaper() as active:
        assert active
        before = children_of_self()
        agent = subprocess.Popen(
            [
                "sh",
                "-c",
                "(setsid env -i sh -c 'exec sleep 300' </dev/null >/dev/null 2>&1 &); "
                "setsid env -i sleep 300 </dev/null >/dev/null 2>&1 & echo $!",
            ],
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        assert agent.stdout is not None
        direct = int(agent.stdout.readline())
        agent.stdout.close()
        agent.wait()
        time.sleep(0.2)
        adopted = [
            p.pid
            for p in process_table().values()
            if p.ppid == os.getpid() and p.pid not in before and p.sid != os.getsid(0)
        ]
        assert direct in adopted
        assert len(adopted) == 2
        killed = end_run(agent.pid, "no-such-run", before)
    assert killed == 2
    for pid in adopted:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f"process {pid} survived (or is an unreaped zombie)")


def test_ending_a_run_spares_another_execution_of_the_same_run_id() -> None:
    """Run ids follow from intents: a second Holon on the machine (another job, a restart beside
    a crashed step) may run the same one. Ending ours must not kill its agent."""
    run_id = "act_same-1"
    other = subprocess.Popen(
        ["sleep", "300"],
        env={"PATH": os.environ["PATH"], ENV_RUN_ID: run_id, ENV_RUN_TAG: run_tag(run_id)},
        start_new_session=True,
    )
    try:
        with subreaper():
            before = children_of_self()
            assert end_run(None, run_tag(run_id), before, deadline=1.0) == 0
        assert other.poll() is None, "another execution's agent was killed"
    finally:
        other.kill()
        other.wait()
