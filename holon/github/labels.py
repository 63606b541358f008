"""Label and unlabel an issue or a pull request, reading its labels first.

Adding a label that is there, or removing one that is not, writes nothing (GitHub compares
label names without case, and so does Holon). A name is data all the way: a JSON string in the
body of an add, one encoded path segment in a remove (`a/b` is `a%2Fb`, a newline `%0A`), never
a shell word. Names GitHub would not take are refused before any call: empty, longer than its
limit of 50 characters, or holding control characters (a newline among them); so are `.` and
`..`, which no encoding keeps from being read as a URL's dot segments.

Calls: 1 (read the issue) for a no-op, 2 (read, then add or remove) otherwise.
"""

from __future__ import annotations

import unicodedata

from holon.github.effects import EffectRefused, Scope, Subject, subject_for
from holon.github.outcome import EffectOutcome

NAME_LIMIT = 50  # GitHub's limit on a label name


def check_name(effect: str, name: str) -> str:
    """`name` when GitHub can take it as a label; a one-line refusal otherwise."""
    if not name.strip():
        raise EffectRefused(effect, "a label name cannot be empty")
    if len(name) > NAME_LIMIT:
        raise EffectRefused(effect, f"a label name has at most {NAME_LIMIT} characters")
    if any(unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") for char in name):
        raise EffectRefused(effect, "a label name cannot hold control or invisible characters")
    if name in (".", ".."):
        # Its URL would lose the segment (a dot segment), and the remove go to another route:
        # Holon adds no label it could not remove.
        raise EffectRefused(effect, f"a label named {name!r} is a dot segment in a URL")
    return name


def _present(labels: tuple[str, ...], name: str) -> str | None:
    """The label's name as the issue spells it, when it is there."""
    return next((x for x in labels if x.casefold() == name.casefold()), None)


def add_label(scope: Scope, subject: Subject, name: str) -> EffectOutcome:
    """Add label `name` to `subject` unless it is there."""
    subject = subject_for(scope, "label", subject)
    check_name("label", name)
    labels = scope.repo.issue(subject.number).labels
    if _present(labels, name) is not None:
        return EffectOutcome("label", False, {"labels": list(labels)}, "the label is there")
    scope.repo.add_labels(subject.number, [name])
    return EffectOutcome("label", True, {"labels": [*labels, name]})


def remove_label(scope: Scope, subject: Subject, name: str) -> EffectOutcome:
    """Remove label `name` from `subject` when it is there."""
    subject = subject_for(scope, "unlabel", subject)
    check_name("unlabel", name)
    labels = scope.repo.issue(subject.number).labels
    present = _present(labels, name)
    if present is None:
        return EffectOutcome("unlabel", False, {"labels": list(labels)}, "the label is not there")
    scope.repo.remove_label(subject.number, present)
    return EffectOutcome("unlabel", True, {"labels": [x for x in labels if x != present]})
