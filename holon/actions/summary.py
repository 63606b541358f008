"""The step summary: what the step did, readable on the run's page (pure render).

Every piece of outside text (titles, rationales quoting comments, evidence) is escaped by the
Markdown environment; the Mermaid diagram's labels are escaped here for Mermaid (`mermaid`):
only a small set of characters is kept as is, everything else becomes Mermaid's `#code;`
entity, so a label can end neither its quotes, its node, its line, nor the code fence.
"""

from __future__ import annotations

import re

from holon.actions.result import StepResult
from holon.controller.budget import figure
from holon.markdown import Trusted
from holon.spend import Spend
from holon.templating import render

LABEL_LIMIT = 60  # characters of one diagram label (before escaping)
ITEMS = 50  # lines per list in the summary; the rest are counted
_KEEP = re.compile(r"[A-Za-z0-9 .,:/_()+=-]")


def mermaid(text: str, limit: int = LABEL_LIMIT) -> Trusted:
    """`text` as a quoted Mermaid node label: one line, at most `limit` characters, every
    character outside a safe set written as a numeric entity (`#34;` for a quote)."""
    one = " ".join(text.split())
    if len(one) > limit:
        one = one[: limit - 3] + "..."
    body = "".join(c if _KEEP.fullmatch(c) else f"#{ord(c)};" for c in one)
    return Trusted(f'"{body}"')


def _node_lines(result: StepResult) -> list[str]:
    """event -> decisions -> runs -> closure, as flowchart lines of escaped labels."""
    event = result.event or "event"
    if result.subject:
        event += f" on {result.subject}"
    if result.title:
        event += f": {result.title}"
    lines = [f"  event[{mermaid(event)}]"]
    # A decision on the step's event hangs from it; one on Holon's own event (a settled run)
    # from the run before it.
    decided = result.decided[:8]
    runs = result.runs[:8]
    run_of_decision: dict[int, int] = {}
    ran = 0
    for index, line in enumerate(decided):
        source = "event"
        if line.event and result.event and line.event != result.event and ran:
            source = f"r{ran - 1}"
        lines.append(f"  {source} --> d{index}[{mermaid(line.what)}]")
        if ran < len(runs) and runs[ran].skill and runs[ran].skill in line.what:
            run_of_decision[ran] = index
            ran += 1
    for index, run in enumerate(runs):
        label = f"{run.skill} {run.status}" + (f" ({run.outcome})" if run.outcome else "")
        lines.append(f"  d{run_of_decision.get(index, 0)} --> r{index}[{mermaid(label)}]")
    refused = result.refused[:8]
    for index, item in enumerate(refused):
        lines.append(f"  event -. refused .-> x{index}[{mermaid(item.what)}]")
    if not decided and not refused:
        lines.append(f"  event --> d0[{mermaid('no decision')}]")
    closure = result.closure
    if closure is not None:
        label = closure.closure_outcome + (
            f" / {closure.waiting_reason}" if closure.waiting_reason else ""
        )
        label += f" ({closure.lifecycle_outcome})" if closure.lifecycle_outcome else ""
        lines.append(f"  closure[{mermaid(label)}]")
        end = f"r{len(runs) - 1}" if runs else ("x0" if refused and not decided else "d0")
        lines.append(f"  {end} --> closure")
    return lines


def spent(usage: Spend | None) -> str:
    """`12,345 tokens ($0.12)`: what a run or the step spent on its model ("": not known)."""
    return figure(usage, None, None) if usage is not None else ""


def render_summary(result: StepResult) -> str:
    handoff = result.handoff
    artifacts = list(handoff.context.artifacts) if handoff is not None else []
    return render(
        "holon.actions",
        "summary.md.j2",
        "markdown",
        result=result,
        closure=result.closure,
        closures=sorted(result.closures.items()),
        handoff=handoff,
        evidence=(handoff.evidence if handoff is not None else [])[:ITEMS],
        artifacts=artifacts[:ITEMS],
        recorded=(handoff.recorded if handoff is not None else [])[:ITEMS],
        decided=result.decided[:ITEMS],
        refused=result.refused[:ITEMS],
        more_decided=max(0, len(result.decided) - ITEMS),
        more_refused=max(0, len(result.refused) - ITEMS),
        runs=[(run, spent(run.usage)) for run in result.runs[:ITEMS]],
        usage=spent(result.usage),
        diagram=Trusted("\n".join(_node_lines(result))),
        comment=Trusted(result.comment_url) if result.comment_url else None,
    )


__all__ = ["LABEL_LIMIT", "mermaid", "render_summary"]
