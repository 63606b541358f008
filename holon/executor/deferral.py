"""A skill run performed elsewhere: the handler prepared it and hands it on (fan-out's decide
job writes a run bundle for a container job), so this process performs nothing.

A handler says so by raising `Deferred`; the controller (`attempts.py`) then leaves the intent
inflight in the state, journals the deferral, and settles nothing: the attempt's result comes
later, from whoever collects what the run left (fan-out's settle job, through the serve's
recovery of inflight intents). The executor lets this one signal through untouched: it is not
a handler failure.
"""

from __future__ import annotations


class Deferred(Exception):
    """`run` names the deferred run (`<intent>-<attempt>`, where its output will be); `why`
    says where it went, for the journal and the summary. `by` names who took it (a workflow
    run; None: nobody yet, any later pass may); `keep`: it is still where an earlier deferral
    sent it, so that record (who, since when) stays as it is."""

    def __init__(self, run: str, why: str, *, by: str | None = None, keep: bool = False) -> None:
        super().__init__(run)
        self.run = run
        self.why = why
        self.by = by
        self.keep = keep


__all__ = ["Deferred"]
