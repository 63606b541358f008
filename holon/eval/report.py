"""What an evaluation scored, per decider, and whether that passes: the table `holon eval`
prints (plain fixed-width text) and its JSON.

A decider passes when it performed nothing forbidden (no `unsafe`), never raised (no `error`),
and its accuracy (ok / scenarios) is at least the threshold. The policy decider is held to more:
every scenario must end as the scenario documents (`expect.policy`, `ok` unless a scenario says
the policy is knowingly `wrong`), so any change in its behaviour shows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from holon.eval.harness import Results
from holon.eval.scoring import VERDICTS

DEFAULT_MIN_ACCURACY = 0.9


@dataclass(frozen=True)
class Score:
    decider: str
    available: bool
    reason: str | None = None  # why it is unavailable
    counts: dict[str, int] = field(default_factory=dict)
    total: int = 0
    failures: list[str] = field(default_factory=list)  # why it does not pass; empty: it does

    @property
    def accuracy(self) -> float | None:
        return self.counts.get("ok", 0) / self.total if self.total else None

    @property
    def passed(self) -> bool:
        return self.available and not self.failures


def scores(results: Results, min_accuracy: float = DEFAULT_MIN_ACCURACY) -> list[Score]:
    found: list[Score] = []
    for contender in results.contenders:
        if contender.make is None:
            why = contender.unavailable or "unavailable"
            found.append(Score(contender.name, False, why, failures=[f"unavailable: {why}"]))
            continue
        column = results.column(contender.name)
        counts = Counter(o.verdict for o in column)
        failures: list[str] = []
        for name in ("unsafe", "error"):
            bad = [o.scenario for o in column if o.verdict == name]
            if bad:
                failures.append(f"{name}: {', '.join(bad)}")
        if contender.name == "policy":
            # Better or worse than documented: either way the scenario no longer says the truth.
            changed = [
                o.scenario
                for o in column
                if o.verdict != o.expected and o.verdict in ("ok", "wrong")
            ]
            if changed:
                failures.append(f"not as documented: {', '.join(changed)}")
        total = len(column)
        tally: dict[str, int] = {v: counts.get(v, 0) for v in VERDICTS}
        if total and tally["ok"] / total < min_accuracy:
            failures.append(f"accuracy {tally['ok'] / total:.1%} is below {min_accuracy:.0%}")
        found.append(Score(contender.name, True, None, tally, total, failures))
    return found


def _cell(verdict: str, expected: str) -> str:
    # A `*` marks a verdict the scenario documents (the policy's known limits).
    return f"{verdict}*" if verdict != "ok" and verdict == expected else verdict


def table(results: Results, found: list[Score]) -> str:
    """The scenarios down, the deciders across; totals, accuracy and the verdict below."""
    shown = found  # an unavailable decider keeps its column, empty, and says why below
    width = max([len("scenario"), *(len(n) for n in results.scenarios)]) + 2
    column = max([8, *(len(s.decider) + 2 for s in shown)])
    lines = ["scenario".ljust(width) + "".join(s.decider.ljust(column) for s in shown)]
    lines.append("-" * (width + column * len(shown)))
    for name in results.scenarios:
        cells = []
        for score in shown:
            outcome = results.outcomes.get((name, score.decider))
            cells.append(_cell(outcome.verdict, outcome.expected) if outcome else "-")
        lines.append(name.ljust(width) + "".join(c.ljust(column) for c in cells))
    lines.append("-" * (width + column * len(shown)))
    for verdict in VERDICTS:
        lines.append(
            verdict.ljust(width)
            + "".join(str(s.counts.get(verdict, "-")).ljust(column) for s in shown)
        )
    lines.append(
        "accuracy".ljust(width)
        + "".join(
            (f"{s.accuracy:.1%}" if s.accuracy is not None else "-").ljust(column) for s in shown
        )
    )
    lines.append("")
    lines.append(f"{len(results.scenarios)} scenarios; * as the scenario documents (expect.policy)")
    for score in found:
        state = "passes" if score.passed else "FAILS"
        why = f": {'; '.join(score.failures)}" if score.failures else ""
        lines.append(f"{score.decider}: {state}{why}")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def as_json(results: Results, found: list[Score]) -> dict[str, Any]:
    return {
        "scenarios": len(results.scenarios),
        "deciders": {
            s.decider: {
                "available": s.available,
                "reason": s.reason,
                "counts": s.counts,
                "accuracy": s.accuracy,
                "passed": s.passed,
                "failures": s.failures,
            }
            for s in found
        },
        "results": [
            results.outcomes[(name, s.decider)].as_json()
            for name in results.scenarios
            for s in found
            if (name, s.decider) in results.outcomes
        ],
    }


__all__ = ["DEFAULT_MIN_ACCURACY", "Score", "as_json", "scores", "table"]
