"""The context serve hands each agent skill run (`github-context`): collected from the event
that decided the run, through the GitHub edge's client when a token is configured, else from
the event's payload alone.

The event is found by the intent's `event_id`: the envelope of the pass under way, else the
events journal (every event is journaled before anything is decided about it, so a run
performed by recovery or on resume still finds its event there). Holon's own events (a run
settled) carry no GitHub payload: their runs' context is the API's alone, or only what is
missing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from holon.gateway.envelope import EventEnvelope, is_internal
from holon.intent import ActionIntent

if TYPE_CHECKING:
    import github

    from holon.contract.context import ContextSubject, SubjectKind
    from holon.github.context_source import ContextReader


def event_of(env: EventEnvelope | None) -> tuple[str, dict[str, object]]:
    """GitHub's event name and payload of `env` (`github.issue_comment.created` ->
    `issue_comment`); nothing for an event that is not GitHub's."""
    if env is None or is_internal(env) or env.source != "github":
        return "", {}
    parts = env.type.split(".")
    return (parts[1] if len(parts) > 1 else ""), env.payload


def subject_of_intent(intent: ActionIntent) -> ContextSubject | None:
    # The contract package (spec, manifest, layout models) only when a run needs its context.
    from holon.contract.context import ContextSubject

    target = intent.target
    if target.kind in ("issue", "pull_request") and target.id.isdigit() and int(target.id) > 0:
        kind: SubjectKind = "issue" if target.kind == "issue" else "pull_request"
        return ContextSubject(kind=kind, number=int(target.id))
    return None


class EventContext:
    """`ContextSource` for serve's run_skill handler."""

    def __init__(
        self,
        find: Callable[[str], EventEnvelope | None],
        client: github.Github | None = None,
        *,
        timeout: float = 30.0,
        untrusted: Literal["mark", "exclude"] = "mark",
        permission: Callable[[str, str], str | None] | None = None,
    ) -> None:
        self.find = find
        self.client = client
        self.timeout = timeout
        self.untrusted: Literal["mark", "exclude"] = untrusted  # settings.context.untrusted
        self.permission = permission  # (repo, login) -> permission: the edge's facts, cached

    def collect(self, intent: ActionIntent, dest: Path) -> None:
        # The readers are imported by the first run that needs a context, not by every serve.
        from holon.github.context import collect_event
        from holon.github.context_api import ApiReader
        from holon.github.context_payload import PayloadReader

        env = self.find(intent.event_id)
        event, payload = event_of(env)
        repo = intent.target.repo or (env.scope.repo if env is not None else None)
        reader: ContextReader = PayloadReader(event, payload)
        if self.client is not None and repo:
            known = self.permission
            reader = ApiReader(
                self.client,
                repo,
                timeout=self.timeout,
                permission_of=(lambda login: known(repo, login)) if known else None,
            )
        collect_event(
            event,
            payload,
            dest,
            reader=reader,
            repo=repo,
            subject=subject_of_intent(intent),
            untrusted=self.untrusted,
        )


__all__ = ["EventContext", "event_of", "subject_of_intent"]
