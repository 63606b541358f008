"""The loopback GitHub's Actions artifacts: list, get, and download as GitHub does it, a 302 to a
signed blob URL. The blob is served by the same server outside the API (`/_blobs/<token>`),
without any authorization, as a storage host would; `loopback.py` records each blob request
(operation `BLOB`), so a test can check what reached it (no Authorization header)."""

from __future__ import annotations

import hashlib
import secrets
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tests.support.github_fake.request import Reply, Request, handles
from tests.support.github_fake.state import Artifact, Missing, Refused, Repo

BLOBS = "/_blobs/"
BLOB = "blob"  # the operation a blob request is recorded under


@dataclass(frozen=True)
class Redirect:
    """A handler's answer that is a redirect: `loopback.py` sends it as a Location header."""

    location: str


def _render(req: Request, repo: Repo, artifact: Artifact) -> dict[str, Any]:
    body: dict[str, Any] = req.render.template("actions/get-artifact", repo)
    url = f"{req.render.repo_url(repo)}/actions/artifacts/{artifact.id}"
    body.update(
        id=artifact.id,
        name=artifact.name,
        size_in_bytes=len(artifact.data),
        digest=artifact.digest or f"sha256:{hashlib.sha256(artifact.data).hexdigest()}",
        url=url,
        archive_download_url=f"{url}/zip",
        expired=artifact.expired,
        created_at=artifact.created_at,
        updated_at=artifact.created_at,
        expires_at=_expiry(artifact.created_at),
        workflow_run={
            **body["workflow_run"],
            "id": artifact.run_id,
            "repository_id": artifact.repository_id,
            "head_repository_id": artifact.head_repository_id,
        },
    )
    return body


def _expiry(created_at: str) -> str:
    # Holon's state artifacts are kept 14 days (`retention-days` in action.yml).
    created = datetime.fromisoformat(created_at)
    return (created + timedelta(days=14)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _artifact(req: Request) -> Artifact:
    found = req.repo.artifacts.get(int(req.params["artifact_id"]))
    if found is None:
        raise Missing
    return found


@handles("actions/list-artifacts-for-repo")
def _list(req: Request) -> Reply:
    repo = req.repo
    name = req.arg("name")
    found = [a for a in repo.artifacts.values() if name in (None, a.name)]
    # GitHub lists the newest first.
    found.sort(key=lambda a: (a.created_at, a.id), reverse=True)
    per_page = int(req.arg("per_page", "30") or 30)
    page = int(req.arg("page", "1") or 1)
    chunk = found[(page - 1) * per_page : page * per_page]
    return 200, {"total_count": len(found), "artifacts": [_render(req, repo, a) for a in chunk]}


@handles("actions/get-artifact")
def _get(req: Request) -> Reply:
    return 200, _render(req, req.repo, _artifact(req))


@handles("actions/download-artifact")
def _download(req: Request) -> Reply:
    artifact = _artifact(req)
    if req.params["archive_format"] != "zip":
        raise Refused(422, "Invalid archive format")
    if artifact.expired:
        raise Refused(410, "Artifact has expired")
    token = secrets.token_hex(16)
    req.state.blobs[token] = artifact.data
    root = urllib.parse.urlsplit(req.render.base)
    return 302, Redirect(f"{root.scheme}://{root.netloc}{BLOBS}{token}?sig=signed")
