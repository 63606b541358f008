"""Finding planted secrets: the forms that give a value away (plain, base64 at any alignment,
standard and URL-safe, percent-encoded) and the places a `holon action` step leaves text (its
files, what GitHub received and holds, its log)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from urllib.parse import quote

from tests.support.actions_env import TOKEN, ActionsEnv
from tests.support.github_fake.loopback import LoopbackGitHub

# Recognizable fake secrets, one per input channel (tests/secrets/test_secret_hygiene.py).
ENV_SECRETS = {
    "GITHUB_TOKEN": TOKEN,  # the fake's token: GitHub would not answer another
    "ANTHROPIC_API_KEY": "sk-ant-api03-PLANTEDenvANTHROPICk3yQ7x2mZ9vB4nL8pR1tW6",
    "OPENAI_API_KEY": "sk-proj-PLANTEDenvOPENAIk3yH5jK8mN2bV7cX4zA9sD1",
    "HOLON_AGENT_SECRET": "planted/agent+secret=CUSTOMenvV4lue9Q==",
}
INPUT_SECRETS = {
    "INPUT_GITHUB_TOKEN": "ghp_PLANTEDinputGITHUBt0kenR7u3Wq9Zx2Lm",
    "INPUT_ANTHROPIC_API_KEY": "sk-ant-api03-PLANTEDinputANTHROPICk3yP4o8Ii2",
}
ISSUE_SECRET = "ghp_PLANTEDissueTEXTpastedT0kenX8c6Vb3Nm1"
EVERY = {**ENV_SECRETS, **INPUT_SECRETS}
FORWARDED = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


def forms(value: str) -> dict[str, bytes]:
    """The byte strings whose presence means `value` is there."""
    raw = value.encode()
    forms = {"plain": raw}
    for pad in range(3):
        for name, encode in (("base64", base64.b64encode), ("base64url", base64.urlsafe_b64encode)):
            encoded = encode(b"\0" * pad + raw).rstrip(b"=")
            # The characters touched by the padding or the end depend on the neighbours.
            start = {0: 0, 1: 2, 2: 3}[pad]
            forms[f"{name}+{pad}"] = encoded[start : len(encoded) - 2]
    quoted = quote(value, safe="").encode()
    if quoted != raw:
        forms["percent-encoded"] = quoted
        forms["percent-encoded lower"] = quote(value, safe="").lower().encode()
    return forms


def leaks(secrets: dict[str, str], where: str, data: bytes) -> list[str]:
    found = []
    for name, value in secrets.items():
        for form, needle in forms(value).items():
            if needle and needle in data:
                found.append(f"{name} ({form}) in {where}")
    return found


def files(*roots: Path) -> Iterator[tuple[str, bytes]]:
    for root in roots:
        if not root.exists():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                yield str(path), path.read_bytes()


def github_texts(server: LoopbackGitHub, step: ActionsEnv) -> Iterable[tuple[str, bytes]]:
    for number, call in enumerate(server.calls):
        yield f"request {number} {call.method} {call.path}", call.body
    repo = step.repo
    for comment in repo.comments.values():
        if comment.user == server.login:
            yield f"comment {comment.id}", comment.body.encode()
    for issue in repo.issues.values():
        if issue.pull is not None:
            yield f"pull {issue.number} title/body", f"{issue.title}\n{issue.body}".encode()
            for review in issue.pull.reviews:
                yield f"pull {issue.number} review", json.dumps(review).encode()
    for run in repo.check_runs.values():
        yield f"check run {run.get('id')}", json.dumps(run).encode()
    for sha, obj in repo.objects.items():
        data = obj.get("data")
        text = data if isinstance(data, bytes) else json.dumps(obj, default=str).encode()
        yield f"object {sha}", text


def step_log(stdout: str) -> bytes:
    """What the runner shows of stdout: `::add-mask::` lines are consumed, never displayed."""
    kept = [line for line in stdout.splitlines() if not line.startswith("::add-mask::")]
    return "\n".join(kept).encode()
