"""The numbers docs/serve.md and docs/policy.md state are the ones the code uses.

Each phrase is built from the constant itself, so changing a constant without its docs (or the
docs without the constant) fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from holon.cli.main import build_parser
from holon.cli.run_cmd import MAX_PROMPT_BYTES
from holon.contract.spec import MAX_SPEC_BYTES
from holon.controller.policy import MAX_POLICY_BYTES
from holon.duration import MAX_SECONDS
from holon.gateway.payload import MAX_PAYLOAD_BYTES
from holon.gateway.replay import MAX_LINE_BYTES
from holon.serve import connections, inbox, listener
from holon.serve.serve import ServeOptions
from holon.size import MAX_BYTES
from holon.state.journal import DEFAULT_MAX_BYTES, DROPPED, Journal
from holon.state.model import (
    DEFAULT_MAX_CLOSURES,
    DEFAULT_MAX_DEDUPE,
    DEFAULT_MAX_MEMORIES,
    DEFAULT_MAX_SETTLED,
    DEFAULT_RETENTION,
    EARLIEST,
    LATEST,
)
from holon.yamlio import MAX_NODES

DOCS = Path(__file__).resolve().parents[2] / "docs"
MIB = 1024 * 1024


def _text(name: str) -> str:
    # Whitespace normalized: a phrase may wrap across lines.
    return " ".join((DOCS / name).read_text(encoding="utf-8").split())


def _checkpoint_every_default() -> int:
    args = build_parser("serve").parse_args(["serve", "--state-dir", "d"])
    value = args.checkpoint_every
    assert isinstance(value, int)
    return value


@pytest.mark.parametrize(
    ("doc", "phrase"),
    [
        ("serve.md", f"forgotten after {DEFAULT_RETENTION.days} days"),
        ("serve.md", f"beyond the newest {DEFAULT_MAX_DEDUPE:,}"),
        ("serve.md", f"settled intents beyond the newest {DEFAULT_MAX_SETTLED:,}"),
        ("serve.md", f"closures of all but the {DEFAULT_MAX_CLOSURES:,} most recently active"),
        ("serve.md", f"memories of all but the {DEFAULT_MAX_MEMORIES:,} most recently active"),
        ("policy.md", f"forgotten after {DEFAULT_RETENTION.days} days"),
        ("policy.md", f"the oldest beyond {DEFAULT_MAX_DEDUPE:,}"),
        ("serve.md", f"rotated at {DEFAULT_MAX_BYTES // MIB} MiB"),
        # What the default keep (None) means.
        ("serve.md", "every segment is kept: nothing is ever deleted"),
        ("serve.md", f"leaves a `{DROPPED}` line"),
        ("serve.md", f"every {_checkpoint_every_default()} events (`--checkpoint-every`)"),
        ("serve.md", f"every {ServeOptions.checkpoint_seconds:g} seconds"),
        (
            "serve.md",
            f"a line over {MAX_PAYLOAD_BYTES // MIB} MiB + "
            f"{(MAX_LINE_BYTES - MAX_PAYLOAD_BYTES) // 1024} KiB",
        ),
        ("serve.md", f"`413` over {MAX_PAYLOAD_BYTES // MIB} MiB"),
        ("serve.md", f"longer than {connections.REQUEST_DEADLINE_SECONDS:g} seconds"),
        ("serve.md", f"`Retry-After: {connections.RETRY_AFTER_SECONDS}`"),
        ("serve.md", f"{inbox.DEFAULT_MAX_PENDING:,} deliveries waiting"),
        ("serve.md", f"or {inbox.DEFAULT_MAX_BYTES // MIB} MiB"),
        ("serve.md", f"all {connections.DEFAULT_MAX_HANDLERS} request handlers"),
        ("serve.md", f"{connections.LISTEN_BACKLOG:,}-deep listen backlog"),
        ("serve.md", f"at most {listener._SPOOL_MEMORY // MIB} MiB of a body not yet verified"),
        ("serve.md", f"outside {EARLIEST.year}\u2013{LATEST.year}"),
        (
            "cli.md",
            f"a spec (`--spec`) or a policy (`--policy`) of at most {MAX_SPEC_BYTES // MIB} MiB",
        ),
        ("cli.md", f"of at most {MAX_SPEC_BYTES // MIB} MiB"),
        ("policy.md", f"The file is at most {MAX_POLICY_BYTES // MIB} MiB"),
        (
            "cli.md",
            f"(`--system-prompt`, `--user-prompt`) of at most {MAX_PROMPT_BYTES // MIB} MiB",
        ),
        ("cli.md", f"above zero and at most `{MAX_SECONDS / 86400:g}d`"),
        (
            "cli.md",
            f"`constraints.timeout` is finite, above zero and at most `{MAX_SECONDS / 86400:g}d`",
        ),
        ("policy.md", f"above zero and at most `{MAX_SECONDS / 86400:g}d`"),
        ("cli.md", f"at most `{MAX_BYTES // 1024**3}g`"),
        (
            "cli.md",
            f"aliases expanding past a {'million' if MAX_NODES == 10**6 else MAX_NODES} nodes",
        ),
        (
            "policy.md",
            f"aliases expanding past a {'million' if MAX_NODES == 10**6 else MAX_NODES} nodes",
        ),
    ],
)
def test_docs_state_the_code_constants(doc: str, phrase: str) -> None:
    assert phrase in _text(doc), f"docs/{doc} should say {phrase!r}"


def test_journals_keep_everything_by_default_as_the_docs_say() -> None:
    assert Journal(Path("events.ndjson")).keep is None
    assert ServeOptions(state_dir=Path("s")).journal_keep is None
