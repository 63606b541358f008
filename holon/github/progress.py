"""The progress comment: created when work starts (with a link to the run), settled with the
handoff when it ends, however it ends.

Both are the same comment, keyed (subject, workflow, skill) and written by `upsert_comment`, so
the handoff replaces the progress note in place, and settling twice (a retry, a redelivery)
edits nothing the second time. A failed, timed-out or cancelled run has a closure like any other
(failed, or waiting on the operator), and its handoff settles the comment the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from holon.github.comments import upsert_comment
from holon.github.effects import Scope, Subject
from holon.github.outcome import EffectOutcome
from holon.templating import render

if TYPE_CHECKING:
    from holon.closure.handoff import Handoff

NOUNS = {"issue": "issue", "pull_request": "pull request"}


def progress_body(subject: Subject, skill: str | None, run_url: str | None) -> str:
    """The progress note (Markdown); `run_url` is linked only when it is an http(s) URL."""
    return render(
        "holon.github",
        "progress_comment.md.j2",
        "markdown",
        noun=NOUNS[subject.kind],
        skill=skill,
        run_url=run_url,
    )


def start_progress(
    scope: Scope, subject: Subject, skill: str | None, run_url: str | None = None
) -> EffectOutcome:
    """Say on `subject` that work started, linking the run: 3 calls (list, post, list again),
    or list and edit when the comment exists, 1 when it already says this."""
    return upsert_comment(scope, subject, progress_body(subject, skill, run_url), skill=skill)


def settle(scope: Scope, subject: Subject, handoff: Handoff) -> EffectOutcome:
    """Replace the progress comment of `handoff`'s skill with the handoff (posting it when there
    was no progress comment). The comment's marker is the effect's, for `subject` and
    `scope.workflow`, whatever the handoff's context names."""
    from holon.closure.handoff import render_handoff

    body = render_handoff(handoff, "comment")
    return upsert_comment(scope, subject, body, skill=handoff.context.skill)
