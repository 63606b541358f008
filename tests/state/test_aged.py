"""The age-indexed records (state/aged.py): `prune` on them drops exactly what the full walk
drops, and `StateJSON` made from their changes is the state's whole JSON, byte for byte."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from holon.state.aged import Records
from holon.state.model import Record, RecordKind, ServeState, StateJSON, prune

T0 = datetime(2026, 1, 1, tzinfo=UTC)
KINDS: tuple[RecordKind, ...] = ("dedupe", "intent", "closure", "memory", "spend", "wait", "meta")
STATUSES = ("pending", "inflight", "succeeded", "failed", "seen", "live")


def _record(rng: random.Random) -> Record:
    # Few distinct keys and times: replacements and ties in age are common.
    return Record(
        kind=rng.choice(KINDS),
        key=f"k{rng.randrange(60)}",
        status=rng.choice(STATUSES),
        updated_at=T0 + timedelta(days=rng.randrange(40), seconds=rng.randrange(3)),
        writer="w",
        deleted=rng.random() < 0.15,
    )


def _mutate(rng: random.Random, state: ServeState) -> None:
    roll = rng.random()
    if roll < 0.75 or not state.records:
        state.put(_record(rng))
    elif roll < 0.85:
        del state.records[rng.choice(list(state.records))]
    elif roll < 0.92:
        state.records.pop(rng.choice(list(state.records)))
    else:
        record = state.records[rng.choice(list(state.records))]
        state.delete(record.kind, record.key, at=record.updated_at, writer="w")


@pytest.mark.parametrize("seed", range(40))
def test_indexed_prune_drops_what_the_full_walk_drops(seed: int) -> None:
    rng = random.Random(seed)  # noqa: S311 (reproducible cases, not secrets)
    indexed = ServeState()
    assert type(indexed.records) is Records
    for _ in range(25):
        for _ in range(rng.randrange(1, 80)):
            _mutate(rng, indexed)
        walked = ServeState.model_construct(records=dict(indexed.records))  # no index: the walk
        now = T0 + timedelta(days=rng.randrange(20, 75))
        caps = {
            name: rng.randrange(0, 12)
            for name in ("max_dedupe", "max_settled", "max_closures", "max_memories")
        }
        expected = prune(walked, now=now, **caps)
        assert prune(indexed, now=now, **caps) == expected
        assert list(indexed.records.items()) == list(walked.records.items())


def test_the_index_follows_every_way_of_changing_the_records() -> None:
    state = ServeState()
    records = state.records
    assert isinstance(records, Records)
    old = Record(kind="dedupe", key="a", status="seen", updated_at=T0, writer="w")
    new = old.model_copy(update={"key": "b", "updated_at": T0 + timedelta(days=1)})
    records.update({"dedupe:a": old})
    records.setdefault("dedupe:b", new)
    records |= {"dedupe:a": old}
    assert records.count(0) == 2
    assert prune(state, now=T0 + timedelta(days=2), max_dedupe=1) == 1
    assert list(records) == ["dedupe:b"]
    records.clear()
    assert records.count(0) == 0
    assert prune(state, now=T0 + timedelta(days=2), max_dedupe=0) == 0


@pytest.mark.parametrize("seed", range(20))
def test_state_json_from_the_changes_is_the_whole_json(seed: int) -> None:
    rng = random.Random(seed)  # noqa: S311 (reproducible cases, not secrets)
    states = [ServeState(), ServeState()]
    writer = StateJSON()
    for _ in range(40):
        # Mostly one state, sometimes the other: changes are only trusted for the one last dumped.
        state = states[0] if rng.random() < 0.8 else states[1]
        for _ in range(rng.randrange(0, 30)):
            _mutate(rng, state)
        if rng.random() < 0.3:
            prune(state, now=T0 + timedelta(days=rng.randrange(20, 75)), max_dedupe=5)
        expected = state.model_dump_json(exclude_defaults=True).encode()
        assert writer.dump(state) == expected
        # Nor does it hold the JSON of records gone from the state (a bounded state's cache).
        assert writer._pieces.keys() == state.records.keys()
