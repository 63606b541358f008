"""Secret hygiene over the whole `holon action` story: recognizable fake secrets planted in every
input channel, then every place the step leaves text scanned for them, in plain, base64 (at
any alignment, standard and URL-safe) and percent-encoded form.

Channels (each secret carries a tag naming its channel, so a failure says where it came from):

- environment: `GITHUB_TOKEN` (the loopback GitHub's token), the model keys
  `ANTHROPIC_API_KEY` and `OPENAI_API_KEY` (forwarded to the agent as secrets), and a custom
  `HOLON_AGENT_SECRET` in the step's environment that nothing forwards;
- action inputs: `INPUT_GITHUB_TOKEN`, `INPUT_ANTHROPIC_API_KEY` (what a runner sets for a
  JavaScript or Docker action's inputs; a composite action's step only sees them if mapped);
- model responses: the replayed session's turns say every secret's value (as a model that
  learned them would), its finish summary too;
- command output: the agent's shell prints them (`echo`, `base64`, percent-encoded, and `env`,
  which lists whatever the agent was given);
- issue text: the triggering comment and the issue's body hold a pasted `ghp_` token.

Scanned: every file under the state, runs, upload, cache and bundle directories, GITHUB_OUTPUT,
GITHUB_STEP_SUMMARY, the step's stdout and stderr (less the `::add-mask::` lines the runner
consumes and never shows), every request body the loopback GitHub received (comments, pull
request title and body, reviews, check runs, blobs, trees, commits) and what it holds after.

The issue-text channel: a token a user pasted into an issue is public already, and the agent
must read the issue to work on it, so the live state directory (the event as GitHub sent it;
never uploaded or cached) may hold it. What is asserted: Holon never re-publishes it: not in
anything written to GitHub, the step summary, the outputs, the step's log, the run records
(the runs artifact: plain form; a base64 the agent computed of a public string is beyond
recognition) or the uploaded and cached state bundle (token-shaped words are masked at
each of those edges: `holon.secrets.mask_secret_looking`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.secrets import scan
from tests.secrets.scan import ENV_SECRETS, EVERY, FORWARDED, INPUT_SECRETS, ISSUE_SECRET
from tests.support.actions_env import TOKEN, ActionsEnv
from tests.support.github_fake.loopback import LoopbackGitHub

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "holon" / "examples" / "sessions" / "solve-calc.ndjson"


def _session(directory: Path) -> Path:
    """The solve-calc session, its turns and shell commands saying every secret."""
    # What the agent could have learnt: its forwarded keys, and token-shaped words (the issue's);
    # the step's other secrets never reach it (its `env` shows that), so it cannot say them.
    known = [*(ENV_SECRETS[n] for n in FORWARDED), ISSUE_SECRET]
    said = " ".join([*known, TOKEN, *(v for k, v in INPUT_SECRETS.items())])
    printed = "; ".join(
        f"echo {value!r}; printf %s {value!r} | base64; "
        f"python3 -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1], safe=\"\"))' "
        f"{value!r}"
        for value in known
    )
    turns = [json.loads(line) for line in SESSION.read_text().splitlines() if line.strip()]
    leak = {
        "model": "recorded-session",
        "stop_reason": "tool_use",
        "text": f"Let me check the credentials I was given: {said}",
        "tool_calls": [
            {"arguments": {"command": f"{printed}; env"}, "id": "call_0", "name": "shell"}
        ],
        "usage": {"input_tokens": 2000, "output_tokens": 50},
    }
    for turn in turns:
        turn["text"] = f"{turn['text']} (the key is {said})"
        for call in turn["tool_calls"]:
            if call["name"] == "finish":
                call["arguments"]["summary"] += f" Credentials used: {said}."
                call["arguments"]["verification"] = [3]  # the leaking command is command 1
    path = directory / "session.ndjson"
    path.write_text("".join(json.dumps(t) + "\n" for t in [leak, *turns]))
    return path


@pytest.fixture
def story(github_server: LoopbackGitHub, tmp_path: Path) -> tuple[ActionsEnv, list[str]]:
    step = ActionsEnv(tmp_path, github_server)
    issue = step.add_issue(body=f"`add(2, 3)` returns -1. My token is {ISSUE_SECRET} if needed.")
    step.comment_event(issue.number, f"/holon solve\n\nuse {ISSUE_SECRET} to push")
    step.extra.update({k: v for k, v in EVERY.items() if k != "GITHUB_TOKEN"})
    step.extra["HOLON_REPLAY_SESSION"] = str(_session(tmp_path))
    step.extra["HOLON_CACHE_DIR"] = str(step.runner_temp / "holon" / "cache")
    step.extra["HOLON_BUNDLE_DIR"] = str(step.runner_temp / "holon" / "bundles")
    done = step.run(timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    # The story happened: a pull request with the fix and Holon's handoff on the issue.
    assert any(i.pull is not None for i in step.repo.issues.values()), done.stdout + done.stderr
    assert step.holon_comments(issue.number)
    return step, [done.stdout, done.stderr]


def test_no_planted_secret_leaves_the_step_in_any_form(
    story: tuple[ActionsEnv, list[str]], github_server: LoopbackGitHub
) -> None:
    step, (stdout, stderr) = story
    holon = step.runner_temp / "holon"
    places: list[tuple[str, bytes]] = [
        ("stdout", scan.step_log(stdout)),
        ("stderr", stderr.encode()),
        ("GITHUB_OUTPUT", step.output_file.read_bytes()),
        ("GITHUB_STEP_SUMMARY", step.summary_file.read_bytes()),
        *scan.files(holon),
        *scan.github_texts(github_server, step),
    ]
    leaks = [leak for where, data in places for leak in scan.leaks(EVERY, where, data)]
    assert not leaks, "\n".join(leaks)


def test_the_forwarded_model_keys_are_masked_before_anything_else_is_printed(
    story: tuple[ActionsEnv, list[str]],
) -> None:
    _, (stdout, _) = story
    lines = stdout.splitlines()
    for name in ("GITHUB_TOKEN", *FORWARDED):
        mask = f"::add-mask::{ENV_SECRETS[name]}"
        assert mask in lines, f"{name} is never masked"
        assert all(line.startswith("::add-mask::") for line in lines[: lines.index(mask)])


def test_a_token_pasted_into_the_issue_is_never_published_again(
    story: tuple[ActionsEnv, list[str]], github_server: LoopbackGitHub
) -> None:
    step, (stdout, stderr) = story
    holon = step.runner_temp / "holon"
    # Holon's own writes only: the triggering comment and the issue are the user's.
    writes = [
        (f"request {n} {c.method} {c.path}", c.body)
        for n, c in enumerate(github_server.calls)
        if c.method in ("POST", "PATCH", "PUT")
    ]
    published: list[tuple[str, bytes]] = [
        ("stdout", scan.step_log(stdout)),
        ("stderr", stderr.encode()),
        ("GITHUB_OUTPUT", step.output_file.read_bytes()),
        ("GITHUB_STEP_SUMMARY", step.summary_file.read_bytes()),
        # The live state directory keeps the event as GitHub sent it and never leaves the
        # runner; what is uploaded or cached is the scrubbed bundle.
        *scan.files(holon / "upload", holon / "cache", holon / "bundles"),
        *writes,
    ]
    secret = {"issue text": ISSUE_SECRET}
    leaks = [leak for where, data in published for leak in scan.leaks(secret, where, data)]
    # The run records: token-shaped words are masked where they are written; an encoding the
    # agent computed of a public string is not recognizable as a secret (plain form only).
    runs = [(w, d) for w, d in scan.files(holon / "runs") if ISSUE_SECRET.encode() in d]
    leaks += [f"issue text (plain) in {where}" for where, _ in runs]
    assert not leaks, "\n".join(leaks)
    # The check is not vacuous: the event Holon kept does hold it.
    assert any(scan.leaks(secret, w, d) for w, d in scan.files(holon / "state"))
