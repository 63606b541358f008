"""The GitHub benchmark's tables and verdicts: calls by effect beside the documented figure,
the retried effects' calls, and PASS/FAIL per target."""

from __future__ import annotations

from collections import defaultdict

from bench.github_effects import PATCH_VALUES
from bench.github_ledger import Performed
from bench.github_limits import RETRY_EXTRA


def calls_table(performed: list[Performed], values: dict[str, int]) -> bool:
    """Rows by name (each attempt's calls); True when none exceeds its documented figure."""
    groups: dict[str, list[Performed]] = defaultdict(list)
    for item in performed:
        groups[item.row].append(item)
    header = ("effect", "times", "calls", "most", "documented", "docs row", "")
    rows = [header]
    ok = True
    for name, items in groups.items():
        limit = items[0].limit
        if limit is None:
            raise ValueError(f"{name}: no documented figure")
        worst = max(len(i.calls) for i in items)
        documented = limit.calls(values)
        within = worst <= documented
        ok &= within
        shown = limit.text() if limit.text().isdigit() else f"{limit.text()} = {documented}"
        rows.append(
            (
                name,
                str(len(items)),
                str(sum(len(i.calls) for i in items)),
                str(worst),
                shown,
                limit.row,
                "ok" if within else "OVER",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for row in rows:
        print("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    return ok


def retry_line(what: str, performed: list[Performed], operation: str, *, judged: bool) -> bool:
    """The attempts of the effect whose `operation` was answered 502, printed; judged: all its
    attempts together made at most the documented figure plus one look-up, sent the failed
    write once and settled."""
    first = next((p for p in performed if any(op == operation for _, op in p.calls)), None)
    if first is None:
        print(f"  {what}: no {operation} was made: FAIL")
        return False
    attempts = [p for p in performed if p.intent == first.intent] if first.intent else [first]
    calls = [call for p in attempts for call in p.calls]
    assert first.limit is not None
    documented = first.limit.calls(PATCH_VALUES)
    sent = sum(1 for _, op in calls if op == operation)
    settled = attempts[-1].status == "succeeded"
    within = len(calls) <= documented + RETRY_EXTRA and sent == 1 and settled
    ops = ", ".join(f"{method} {op}" for method, op in calls)
    mark = ("ok" if within else "OVER") if judged else "reported"
    print(
        f"  {what}: {len(attempts)} attempt(s), {len(calls)} calls "
        f"(documented {documented} + {RETRY_EXTRA} look-up), {operation} sent {sent}x, "
        f"{'settled' if settled else 'NOT settled'}: {mark}\n    {ops}"
    )
    return within or (not judged and settled)


class Verdicts:
    """PASS/FAIL per target; the exit code (1 when any judged target failed)."""

    def __init__(self) -> None:
        self.failed = False

    def judge(self, target: str, passed: bool | None) -> None:
        word = "NOT JUDGED (smoke run)" if passed is None else ("PASS" if passed else "FAIL")
        print(f"  {word:6}  {target}")
        self.failed |= passed is False

    def code(self) -> int:
        return 1 if self.failed else 0
