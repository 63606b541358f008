"""`holon context collect --event NAME --payload FILE --out DIR [--repo OWNER/NAME] [--json]`:
the `github-context` skill by hand. Collects the context of the issue or pull request an event
payload is about into the empty directory DIR: through GitHub's REST API when `GITHUB_TOKEN` is
set (docs/github.md, "Context"), else from the payload alone. Prints what is present and
missing (`--json`: the context manifest). A bad payload, an event that names no issue or pull
request, or a non-empty DIR is one line and exit 64."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    collect = sub.add_parser("collect", help="collect a run's context from an event payload")
    collect.add_argument("--event", required=True, help="the event name (X-GitHub-Event)")
    collect.add_argument("--payload", required=True, metavar="FILE", help="payload JSON, or -")
    collect.add_argument("--out", required=True, metavar="DIR", help="an empty or new directory")
    collect.add_argument(
        "--repo", metavar="OWNER/NAME", help="the repository, when the payload names none"
    )
    collect.add_argument("--json", action="store_true", help="print the context manifest")


def main(args: argparse.Namespace) -> int:
    from holon.cli._io import print_json, read_bytes
    from holon.errors import InvalidInput
    from holon.gateway.payload import decode_payload
    from holon.github.context import collect_event
    from holon.github.context_payload import PayloadReader, repo_of
    from holon.github.context_source import ContextReader
    from holon.github.errors import GitHubError
    from holon.github.rest import repo_path
    from holon.terminal import line

    payload = decode_payload(read_bytes(args.payload), source=args.payload)
    named = repo_of(payload)
    if args.repo:
        try:
            repo_path(args.repo)
        except GitHubError:
            shown = line(repr(args.repo), limit=120)
            raise InvalidInput(
                f"--repo must name a repository as OWNER/NAME, not {shown}"
            ) from None
        if named is not None and named.casefold() != args.repo.casefold():
            raise InvalidInput(f"--repo {args.repo}: the payload is of {line(named, limit=120)}")
    repo = args.repo or named
    reader: ContextReader = PayloadReader(args.event, payload)
    if os.environ.get("GITHUB_TOKEN"):
        from holon.github.client import GitHubConfig, make_client
        from holon.github.context_api import ApiReader

        if repo is None:
            raise InvalidInput("reading GitHub needs the repository: pass --repo OWNER/NAME")
        config = GitHubConfig.from_env(os.environ)
        try:
            reader = ApiReader(
                make_client(config), repo, timeout=config.timeout, read_permissions=True
            )
        except GitHubError:
            shown = line(repr(repo), limit=120)
            raise InvalidInput(f"the repository must be OWNER/NAME, not {shown}") from None
    manifest = collect_event(args.event, payload, Path(args.out), reader=reader, repo=repo)
    if args.json:
        print_json(manifest.model_dump_json(indent=2))
        return 0
    subject = f"{manifest.subject.kind.replace('_', ' ')} #{manifest.subject.number}"
    where = f" of {manifest.repo}" if manifest.repo else ""
    print(f"context of {subject}{where} in {line(args.out)} (from the {reader.source})")
    for part in manifest.present:
        print(f"  present: {part.path} ({part.bytes} bytes)")
    for gap in manifest.missing:
        print(f"  missing: {line(gap.name)}: {line(gap.reason)}")
    return 0
