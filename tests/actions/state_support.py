"""Shared parts of the state-sync tests: bundles as zips, records, a client of the loopback fake."""

from __future__ import annotations

import io
import json
import stat
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import github
from pydantic import SecretStr

from holon.actions.state_sync import StateSyncSettings
from holon.github.client import GitHubConfig, make_client
from holon.state.model import Record, ServeState
from tests.support.github_fake import LoopbackGitHub

REPO = "octocat/Hello-World"
NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)


def record(key: str, status: str = "live", *, at: datetime = NOW, writer: str = "run-1",
           kind: str = "dedupe", **data: Any) -> Record:  # fmt: skip
    return Record.model_validate(
        {"kind": kind, "key": key, "status": status, "updated_at": at, "writer": writer,
         "data": data}
    )  # fmt: skip


def state_json(*records: Record) -> bytes:
    state = ServeState()
    for r in records:
        state.put(r)
    return state.model_dump_json(exclude_defaults=True).encode()


def ndjson(*entries: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(e, sort_keys=True).encode() + b"\n" for e in entries)


def entry(ident: str, at: str = "2026-01-10T12:00:00+00:00", **more: Any) -> dict[str, Any]:
    return {"id": ident, "at": at, **more}


def zip_of(files: dict[str, bytes], *, symlinks: dict[str, str] | None = None) -> bytes:
    """A zip as actions/upload-artifact makes one; `symlinks` adds entries with a link's mode."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return buffer.getvalue()


def bundle_zip(*records: Record, **journals: list[dict[str, Any]]) -> bytes:
    files = {"state.json": state_json(*records)}
    files.update({f"{name}.ndjson": ndjson(*entries) for name, entries in journals.items()})
    return zip_of(files)


def client_of(server: LoopbackGitHub) -> github.Github:
    assert server.token is not None
    config = GitHubConfig(api_url=server.url, token=SecretStr(server.token), retries=0)
    return make_client(config)


@dataclass
class Settings:
    """The attributes `restore_state` and `export_state` read, as the action's config has them."""

    state_dir: Path
    upload_dir: Path | None
    cache_dir: Path | None
    repo: str
    repo_id: int | None
    default_branch_run: bool
    run_id: str = "900"
    run_attempt: str = "1"


def settings(tmp_path: Path, repo_id: int | None, *, default_branch: bool = True) -> Settings:
    return Settings(
        state_dir=tmp_path / "holon" / "state",
        upload_dir=tmp_path / "holon" / "upload",
        cache_dir=tmp_path / "holon" / "cache",
        repo=REPO,
        repo_id=repo_id,
        default_branch_run=default_branch,
    )


def sync_settings(s: Settings) -> StateSyncSettings:
    return StateSyncSettings.of(s)


def journal_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
