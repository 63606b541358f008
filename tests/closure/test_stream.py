"""`holon closure derive FILE` streamed: the same closure, or the same refusal, as the in-memory
path on every document (random documents, valid and broken), with bounded lists and no
whole-document limit."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from holon.cli.main import main
from holon.closure import reader, spool, stream
from holon.closure.derive import derive_closure
from holon.closure.evidence import parse_evidence
from holon.errors import InvalidInput

T = "2026-11-21T10:00:00Z"
TASKS = ["t0", "t1", "t2"]
STATES = ["running", "completed", "failed", "timed_out", "cancelled", "interrupted"]
OUTCOMES = [None, "success", "failure", "needs_human"]
# Ids and texts that look like JSON structure, escapes, non-ASCII and newlines.
TEXTS = ["x", "a}, {b", '"}, {"id": "x"}', "é\u202e", "line\nnext", "\\", "", "}]"]


def _at(rng: random.Random) -> str:
    return rng.choice(
        [T, "2026-11-21T09:00:00+02:00", "2026-11-21T10:00:00.5Z", "2026-11-22T00:00Z"]
    )


def _item(rng: random.Random, ident: str) -> dict[str, Any]:
    kind = rng.choice(
        ["run", "task", "wait", "wait", "interruption", "work_item", "claim", "text", "posture"]
    )
    item: dict[str, Any] = {"id": ident, "source": "test", "at": _at(rng), "kind": kind}
    if kind == "run":
        item |= {"state": rng.choice(STATES), "outcome": rng.choice(OUTCOMES)}
        if rng.random() < 0.3:
            item["reason"] = rng.choice(TEXTS)
    elif kind == "task":
        item |= {
            "task_id": rng.choice(TASKS),
            "state": rng.choice(STATES),
            "outcome": rng.choice(OUTCOMES),
            "blocking": rng.random() < 0.5,
        }
        if rng.random() < 0.3:
            outcome = rng.choice(["completed", "continuable", "failed", "waiting"])
            item["closure"] = {"outcome": outcome}
            if outcome == "waiting":
                item["closure"]["waiting_reason"] = "awaiting_timer"
    elif kind == "wait":
        on = rng.choice(["timer", "external", "operator", "operator", "task"])
        item |= {"on": on, "resolved": rng.random() < 0.3}
        if on == "timer":
            item["until"] = _at(rng)
        elif on == "external":
            item["condition"] = rng.choice(["ci", "review", "a}, {b"])
        elif on == "operator":
            if rng.random() < 0.5:
                item["question"] = {"id": "q", "text": rng.choice(["Which?", "é"])}
            else:
                item["reason"] = rng.choice(TEXTS[:3])
        else:
            item["task_id"] = rng.choice(TASKS)
    elif kind == "interruption":
        item |= {"by": rng.choice(["pause", "stop_command", "cancelled_workflow"])}
    elif kind == "work_item":
        if rng.random() < 0.7:
            item["state"] = rng.choice(["runnable", "done"])
        item["summary"] = rng.choice([None, *TEXTS])
    elif kind in ("claim", "text"):
        item["text"] = rng.choice(TEXTS)
    else:
        item["posture"] = rng.choice(["active", "idle", "sleeping"])
    return item


# Ways a document goes wrong: each is (item or document) -> text pieces that break it.
def _break_item(rng: random.Random, item: dict[str, Any]) -> None:
    how = rng.randrange(10)
    if how == 9:  # a wait that does not say what it waits on (refused by its model's check)
        on = rng.choice([None, "timer", "external", "operator", "task"])
        keep = {k: item[k] for k in ("id", "source", "at")}
        item.clear()
        item.update(keep, kind="wait", on=on, resolved=rng.random() < 0.5, condition="")
        return
    if how == 0:
        item["extra"] = 1
    elif how == 1:
        item.pop("source")
    elif how == 2:
        item["at"] = "2026-11-21T10:00:00"  # no timezone
    elif how == 3:
        item["kind"] = "nope"
    elif how == 4:
        item["id"] = ""
    elif how == 5 and item["kind"] == "wait":
        item.pop("on")
    elif how == 6:
        item["at"] = float("nan")  # written as NaN
    elif how == 7:
        item["deep"] = json.loads("[" * 120 + "]" * 120)
    else:
        item["text"] = 5


def _document(seed: int) -> str:
    rng = random.Random(seed)  # noqa: S311
    ids = [f"i{n}" if rng.random() < 0.8 else rng.choice(TEXTS[:6]) + str(n) for n in range(30)]
    items = [_item(rng, ids[n]) for n in range(rng.randrange(0, 25))]
    if items and rng.random() < 0.1:  # a duplicate id
        rng.choice(items)["id"] = rng.choice(items)["id"]
    if items and rng.random() < 0.15:
        _break_item(rng, rng.choice(items))
    # Keep runs rare (a second run item is refused): drop all but one most of the time.
    runs = [i for i in items if i["kind"] == "run"]
    if len(runs) > 1 and rng.random() < 0.9:
        items = [i for i in items if i["kind"] != "run" or i is runs[0]]
    doc: Any = {"items": items}
    if rng.random() < 0.3:
        doc = {"unit": {"kind": rng.choice(["turn", "task", "bad"]), "id": "u1"}, "items": items}
        if rng.random() < 0.5:
            doc = {"items": items, "unit": doc["unit"]}
    if rng.random() < 0.1:
        doc = items  # a bare list
    text = json.dumps(doc, indent=rng.choice([None, 1]), ensure_ascii=rng.random() < 0.5)
    mangle = rng.random()
    if mangle < 0.03:
        text = text.replace('"x"', '"\\ud800"', 1)
    elif mangle < 0.06:
        text = text[: len(text) // 2]
    elif mangle < 0.08:
        text += " {}"
    return text


def _in_memory(raw: bytes) -> Any:
    try:
        return derive_closure(parse_evidence(raw, source="ev.json")).model_dump()
    except InvalidInput as exc:
        return ("refused", str(exc))


def _streamed(path: Path, **kw: Any) -> Any:
    try:
        derived = stream.derive_file(str(path), max_listed=None, **kw)
    except InvalidInput as exc:
        return ("refused", str(exc).replace(str(path), "ev.json"))
    return derived.closure.model_dump()


@pytest.mark.parametrize("small", [False, True], ids=["chunks", "tiny-chunks"])
def test_streamed_derivation_is_the_in_memory_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: bool
) -> None:
    if small:  # every boundary falls inside an item somewhere
        monkeypatch.setattr(reader, "CHUNK", 7)
        monkeypatch.setattr(reader, "BATCH", 150)
        monkeypatch.setattr(reader, "_WINDOW", 5)
    path = tmp_path / "ev.json"
    refused = derived = 0
    for seed in range(400):
        text = _document(seed)
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        expected = _in_memory(path.read_bytes())
        # With the fallback the line is the in-memory path's own, word for word.
        assert _streamed(path) == expected, (seed, text)
        # Without it, the streamed path refuses exactly what the in-memory path refuses.
        own = _streamed(path, fallback=False)
        if isinstance(expected, tuple):
            refused += 1
            assert isinstance(own, tuple), (seed, text, expected)
        else:
            derived += 1
            assert own == expected, (seed, text, own)
    assert refused > 60
    assert derived > 150


def test_a_wait_on_a_task_named_later_is_accepted_and_one_never_named_is_refused(
    tmp_path: Path,
) -> None:
    wait = {"id": "w", "source": "s", "at": T, "kind": "wait", "on": "task", "task_id": "t9"}
    task = {"id": "t", "source": "s", "at": T, "kind": "task", "task_id": "t9", "state": "running"}
    path = tmp_path / "ev.json"
    path.write_text(json.dumps({"items": [wait, task]}))
    assert stream.derive_file(str(path)).closure.rule == "blocking_task"
    path.write_text(json.dumps({"items": [wait, {**task, "task_id": "t8"}]}))
    with pytest.raises(InvalidInput, match="'w' \\(wait\\): waits on task 't9'"):
        stream.derive_file(str(path), fallback=False)


def _items(n: int, claims: bool = True) -> list[dict[str, Any]]:
    kinds = [{"kind": "text", "text": "t"}, {"kind": "claim", "text": "Done.\n\u202e"}]
    kinds.append({"kind": "work_item", "summary": "s"})
    if not claims:
        kinds = kinds[:1]
    return [
        {
            "id": f"i{k}\u00e9" if k % 7 else f'"i{k}\n',
            "source": "s",
            "at": T,
            **kinds[k % len(kinds)],
        }
        for k in range(n)
    ]


@pytest.mark.parametrize("explain", [False, True])
def test_long_lists_stream_to_the_same_output(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    explain: bool,
) -> None:
    path = tmp_path / "ev.json"
    path.write_text(json.dumps({"items": _items(3000)}))
    argv = ["closure", "derive", str(path), *(["--explain"] if explain else [])]
    assert main(argv) == 3  # continuable: runnable work items
    whole = capsys.readouterr().out
    monkeypatch.setattr(stream, "MAX_LISTED", 0)
    monkeypatch.setattr(spool, "MEMORY_KEYS", 64)  # spilled to many runs, merged
    assert main(argv) == 3
    assert capsys.readouterr().out == whole
    data = json.loads(whole)
    assert len(data["deciding_items"]) == 1000
    assert len(data["rejected_claims"]) == 1000


def test_spooled_ids_merge_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spool, "MAX_RUNS", 3)
    rng = random.Random(1)  # noqa: S311
    keys = [(rng.randrange(50), rng.choice(TEXTS) + str(k)) for k in range(500)]
    ids = spool.SpooledIds(limit=16)
    for order, ident in keys:
        ids.add(order, ident)
    assert list(ids.ordered()) == sorted(keys)
    assert list(ids.ordered()) == sorted(keys)  # read twice
    ids.close()


def test_repeated_ids_are_found_exactly_across_partitions(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = spool.SeenIds(document_bytes=64 * spool.PART_BYTES)
    assert seen.mask == 63
    rng = random.Random(2)  # noqa: S311
    ids = [rng.choice(TEXTS) + str(k) for k in range(5000)]
    for n, ident in enumerate([*ids, ids[10], ids[4000], ids[10]]):
        seen.parts[hash(ident) & seen.mask].append(ident)
        if n % 100 == 0:
            seen.flush()
    assert seen.repeated() == {ids[10], ids[4000]}
    seen.close()


def test_a_file_past_the_document_limit_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(stream, "MAX_DOCUMENT_BYTES", 1024)  # no fallback: all streamed
    items = _items(500, claims=False)
    items.append({"id": "decider", "source": "r", "at": T, "kind": "run", "state": "failed"})
    path = tmp_path / "ev.json"
    path.write_text(json.dumps({"unit": {"id": "u"}, "items": items}))
    assert path.stat().st_size > 1024
    assert main(["closure", "derive", str(path)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["deciding_items"] == ["decider"]
    assert out["unit"] == "u"
    # The same file read whole from standard input keeps the document limit.
    with open(path, "rb") as handle:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(handle))
        with pytest.raises(InvalidInput, match="over the 1024 bytes limit"):
            stream.derive_file("-")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda items: items[2].update(at="nope"), "evidence item 'i2\u00e9' (text): at: Input"),
        (lambda items: items[3].update(id="i1\u00e9"), "evidence item 'i1\u00e9': duplicate id"),
        (
            lambda items: items.insert(4, json.loads("[" * 120 + "]" * 120)),
            "item #5: invalid JSON: nested",
        ),
        (
            lambda items: [
                items[k].pop("text") and items[k].update(kind="run", state="failed") for k in (5, 6)
            ],
            "evidence item 'i6\u00e9' (run): a unit has one run item, already 'i5\u00e9'",
        ),
    ],
)
def test_refusals_past_the_document_limit_name_the_item(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mutate: Any,
    message: str,
) -> None:
    monkeypatch.setattr(stream, "MAX_DOCUMENT_BYTES", 10)
    items = _items(300, claims=False)
    mutate(items)
    path = tmp_path / "ev.json"
    path.write_text(json.dumps({"items": items}, ensure_ascii=False))
    assert main(["closure", "derive", str(path)]) == 64
    err = capsys.readouterr().err.strip()
    assert message in err
    assert "\n" not in err


def test_an_item_over_the_item_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream, "MAX_DOCUMENT_BYTES", 10)
    monkeypatch.setattr(reader, "MAX_ITEM_BYTES", 4096)
    monkeypatch.setattr(reader, "BATCH", 1024)
    items = _items(20, claims=False)
    items[7]["text"] = "x" * 5000
    path = tmp_path / "ev.json"
    path.write_text(json.dumps({"items": items}))
    with pytest.raises(InvalidInput, match="evidence item #8: over the"):
        stream.derive_file(str(path))
    items[7]["text"] = "x" * 3000  # under it: accepted
    path.write_text(json.dumps({"items": items}))
    assert stream.derive_file(str(path)).closure.rule == "no_closure_evidence"
