"""`holon report`'s renderings: JSON, a Markdown table for a step summary, plain text.

Names read from the journals and the state (skills, closure outcomes) are outside text: the
templates escape them for their target; the figures are Holon's own formatting (`Trusted`).
"""

from __future__ import annotations

from typing import Any

from holon.markdown import Trusted
from holon.report.aggregate import Report, Row
from holon.templating import render

PACKAGE = "holon.report"


def to_json(report: Report) -> str:
    return report.model_dump_json(indent=2)


def to_markdown(report: Report) -> str:
    return render(PACKAGE, "report.md.j2", "markdown", **_view(report))


def to_text(report: Report) -> str:
    return render(PACKAGE, "report.txt.j2", "text", **_view(report))


def _seconds(value: float) -> str:
    if value < 120:
        return f"{value:.1f}s"
    if value < 7200:
        return f"{value / 60:.1f}m"
    return f"{value / 3600:.1f}h"


def _usd(value: float | None) -> str:
    return "n/a" if value is None else f"${value:.4f}"


def _row(row: Row) -> dict[str, Any]:
    latency = row.first_comment
    first = (
        f"{_seconds(latency.median_seconds)} / {_seconds(latency.max_seconds)} (n={latency.count})"
        if latency
        else "n/a"
    )
    figures = {
        "runs": row.runs,
        "prs_opened": row.prs_opened,
        "prs_merged": row.prs_merged,
        "prs_closed": row.prs_closed,
        "prs_open": row.prs_open,
        "prs_unknown": row.prs_unknown,
        "tokens": row.spend.tokens,
        "unpriced": row.spend.unpriced_tokens,
    }
    return {
        "skill": row.skill,  # outside text: escaped by the template's format
        "week": Trusted(row.week),  # Holon's own: an ISO week or "all"
        "closures": [(outcome, Trusted(str(n))) for outcome, n in row.closures.items()],
        "first_comment": Trusted(first),
        "usd": Trusted(_usd(row.spend.cost_usd)),
        "per_merged": Trusted(_usd(row.usd_per_merged_pr)),
        **{key: Trusted(str(value)) for key, value in figures.items()},
    }


def _view(report: Report) -> dict[str, Any]:
    return {
        "since": Trusted(report.since) if report.since else None,
        "rows": [_row(row) for row in report.rows],
        "skills": [_row(row) for row in report.skills],
        "total": _row(report.total),
        "events": Trusted(str(report.events)),
        "skipped": Trusted(str(report.skipped_lines)) if report.skipped_lines else None,
        "dropped": Trusted(str(report.dropped_entries)) if report.dropped_entries else None,
        "pulls_read": report.pulls_read,
    }


__all__ = ["to_json", "to_markdown", "to_text"]
