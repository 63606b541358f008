"""The step summary: what the step did, readable on the run's page (pure render).

Every piece of outside text (titles, rationales quoting comments, evidence) is escaped by the
Markdown environment; the Mermaid diagram's labels are escaped here for Mermaid (`mermaid`):
only a small set of characters is kept as is, everything else becomes Mermaid's `#code;`
entity, so a label can end neither its quotes, its node, its line, nor the code fence.
"""

from __future__ import annotations

import re

from holon.actions.result import StepResult
from holon.markdown import Trusted
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
    decisions = [
        *(f"{d.what}" for d in result.decided),
        *(f"refused {r.what}" for r in result.refused),
    ]
    if not decisions:
        decisions = ["no decision"]
    for index, text in enumerate(decisions[:8]):
        lines.append(f"  event --> d{index}[{mermaid(text)}]")
    runs = result.runs[:8]
    for index, run in enumerate(runs):
        label = f"{run.skill} {run.status}" + (f" ({run.outcome})" if run.outcome else "")
        source = next(
            (f"d{i}" for i, d in enumerate(result.decided[:8]) if run.skill in d.what), "d0"
        )
        lines.append(f"  {source} --> r{index}[{mermaid(label)}]")
    closure = result.closure
    if closure is not None:
        label = closure.closure_outcome + (
            f" / {closure.waiting_reason}" if closure.waiting_reason else ""
        )
        label += f" ({closure.lifecycle_outcome})" if closure.lifecycle_outcome else ""
        ends = [f"r{i}" for i in range(len(runs))] or ["d0"]
        for end in ends:
            lines.append(f"  {end} --> closure[{mermaid(label)}]")
    return lines


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
        runs=result.runs[:ITEMS],
        diagram=Trusted("\n".join(_node_lines(result))),
        comment=Trusted(result.comment_url) if result.comment_url else None,
    )


__all__ = ["LABEL_LIMIT", "mermaid", "render_summary"]
