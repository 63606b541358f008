"""What a state bundle keeps of the state and the journals: scrubbed of token-shaped values, event
payloads trimmed to what decisions need. Pure: values in, values out.

Scrubbing: every string value (not the `id`s Holon derived, which are hashes and name entries
across copies) goes through `holon.secrets.mask_secret_looking`, so a token a comment quoted, a
URL with a password, a `Bearer ...` line never reaches an artifact or a cache.

Trimming (`trim_payload`, GitHub's events only; Holon's own events are kept whole): a payload
keeps every field something downstream reads, which is the connector (`gateway.github.normalize`,
which `gateway.restored.rederive` runs again on recovery and on resume), the policy's rule
matching (`label.name`, `review.state`, the check's `conclusion`, `app.slug` and `name`, top-level
scalars a rule's `$field` input names), the guardrails and the payload context reader (titles,
bodies, states, labels, authors and `author_association`, heads and bases, `html_url`,
`details_url`, check outputs). What goes is what nothing reads:

- every API URL (`url`, `*_url` but `html_url` and `details_url`), `node_id`, `gravatar_id`,
  `_links`, `reactions`, `performed_via_github_app`, e-mail addresses, `enterprise`;
- an account (an object with a `login`) is reduced to `login`, `id`, `type`; `organization` to
  `login`, `id`; `installation` to `id`;
- a repository (an object with a `full_name`) to `id`, `name`, `full_name`, `owner`, `private`,
  `fork`, `default_branch`, `pushed_at`, `html_url`.

tests/actions/test_state_trim.py checks, over every GitHub webhook example, that the envelope the
connector makes of a trimmed payload is the one it made of the whole payload, and that the
context reader reads the same subject and trigger from it.
"""

from __future__ import annotations

from typing import Any

from holon.secrets import mask_secret_looking

_KEPT_URLS = frozenset({"html_url", "details_url"})
_DROPPED = frozenset(
    {
        "url",
        "node_id",
        "gravatar_id",
        "_links",
        "reactions",
        "performed_via_github_app",
        "email",
        "enterprise",
    }
)
_ACCOUNT = ("login", "id", "type")
_REPOSITORY = (
    "id",
    "name",
    "full_name",
    "owner",
    "private",
    "fork",
    "default_branch",
    "pushed_at",
    "html_url",
)
_TOP = {"organization": ("login", "id"), "installation": ("id",)}


def _dropped(key: str) -> bool:
    return key in _DROPPED or (key.endswith("_url") and key not in _KEPT_URLS)


def _trim(value: Any) -> Any:
    if isinstance(value, list):
        return [_trim(item) for item in value]
    if not isinstance(value, dict):
        return value
    if isinstance(value.get("login"), str):
        return {k: value[k] for k in _ACCOUNT if k in value}
    if isinstance(value.get("full_name"), str):
        kept = {k: value[k] for k in _REPOSITORY if k in value}
        if isinstance(kept.get("owner"), dict):
            kept["owner"] = _trim(kept["owner"])
        return kept
    kept = {k: _trim(v) for k, v in value.items() if not _dropped(k)}
    # An object of URLs only (an issue's `pull_request` without `html_url`) stays whole: its
    # presence is what is read, and an empty one would read as absent.
    return kept if kept or not value else value


def trim_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload without what no decision reads (see the module docstring)."""
    trimmed: dict[str, Any] = {}
    for key, value in payload.items():
        if _dropped(key):
            continue
        if key in _TOP and isinstance(value, dict):
            trimmed[key] = {k: value[k] for k in _TOP[key] if k in value}
        else:
            trimmed[key] = _trim(value)
    return trimmed


def scrub(value: Any, *, key: str | None = None) -> Any:
    """`value` with every string masked where it looks like a secret; `id` values stay."""
    if isinstance(value, str):
        return value if key == "id" else mask_secret_looking(value)
    if isinstance(value, list):
        return [scrub(item) for item in value]
    if isinstance(value, dict):
        return {k: scrub(v, key=k) for k, v in value.items()}
    return value


def trim_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A journal entry as a bundle keeps it: an events-journal envelope of a GitHub event with
    its payload trimmed; then everything scrubbed."""
    envelope = entry.get("envelope")
    if (
        isinstance(envelope, dict)
        and envelope.get("source") == "github"
        and envelope.get("via") != "internal"
        and isinstance(envelope.get("payload"), dict)
    ):
        entry = {**entry, "envelope": {**envelope, "payload": trim_payload(envelope["payload"])}}
    scrubbed: dict[str, Any] = scrub(entry)
    return scrubbed


__all__ = ["scrub", "trim_entry", "trim_payload"]
