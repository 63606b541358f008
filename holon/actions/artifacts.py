"""State artifacts through GitHub's REST API: list the repository's artifacts, choose the ones to
merge (pure), download one.

Listing and the download request go through Holon's PyGithub client (its retry policy, its
error mapping: `actions/list-artifacts-for-repo` refused is a `PermissionDenied` naming
`actions: read`). GitHub answers the download with a 302 to a short-lived signed blob URL on a
storage host; that one request is made here, not by PyGithub, because PyGithub follows a
redirect only to GitHub's own domains (a storage host fails its check) and keeps the token on a
redirect to the API's own host. The blob request carries no Authorization header and no
credentials from the environment (`trust_env` off: no .netrc), follows no further redirect, and
stops reading past the size bound.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
import urllib.parse
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import github
import requests
import requests.utils

import holon
from holon.errors import OperationalError
from holon.github.errors import GitHubError, map_errors
from holon.github.rest import repo_path

PREFIX = "holon-state-"
PER_PAGE = 100
# Newest first: a state artifact is one of the last few hundred unless the repository uploads
# hundreds of other artifacts between two Holon runs.
MAX_PAGES = 3
MAX_ZIP_BYTES = 64 * 1024 * 1024
BLOB_TIMEOUT = 60.0
LIST = "actions/list-artifacts-for-repo"
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
DOWNLOAD = "actions/download-artifact"


class DownloadFailed(OperationalError):
    """The blob behind a download redirect could not be fetched within the bounds."""


@dataclass(frozen=True)
class Artifact:
    id: int
    name: str
    created_at: datetime | None
    expired: bool
    expires_at: datetime | None
    size: int | None
    run_id: int | None
    repository_id: int | None
    head_repository_id: int | None
    digest: str | None = None  # `sha256:<hex>` of the zip, as GitHub lists it (None: not listed)

    def label(self) -> str:
        run = f" (run {self.run_id})" if self.run_id is not None else ""
        return f"artifact {self.name}{run}"


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def parse_artifact(item: Any) -> Artifact | None:
    """One listed artifact, or None when GitHub's answer is not shaped like one."""
    if not isinstance(item, dict):
        return None
    ident, name = _int(item.get("id")), item.get("name")
    if ident is None or not isinstance(name, str):
        return None
    found = item.get("workflow_run")
    run: dict[str, Any] = found if isinstance(found, dict) else {}
    return Artifact(
        id=ident,
        name=name,
        created_at=_time(item.get("created_at")),
        expired=item.get("expired") is not False,  # unknown counts as expired
        expires_at=_time(item.get("expires_at")),
        size=_int(item.get("size_in_bytes")),
        run_id=_int(run.get("id")),
        repository_id=_int(run.get("repository_id")),
        head_repository_id=_int(run.get("head_repository_id")),
        digest=_digest(item.get("digest")),
    )


def _digest(value: Any) -> str | None:
    """GitHub's `digest` of the artifact's zip, `sha256:<64 hex>`; None when absent (artifacts
    older than upload-artifact v4 have none) or in any other form."""
    if isinstance(value, str) and _DIGEST.fullmatch(value.lower()):
        return value.lower()
    return None


def check_digest(artifact: Artifact, data: bytes) -> None:
    """The downloaded zip is the one GitHub lists: its sha256 equals the listed digest (when
    GitHub lists one). A blob changed on its way or in storage is refused."""
    if artifact.digest is None:
        return
    if f"sha256:{hashlib.sha256(data).hexdigest()}" != artifact.digest:
        raise DownloadFailed("its zip does not match the digest GitHub lists for it")


def list_artifacts(client: github.Github, repo: str) -> list[Artifact]:
    """The repository's artifacts named `holon-state-...`, as GitHub lists them (newest first)."""
    found: list[Artifact] = []
    path = f"{repo_path(repo)}/actions/artifacts"
    for page in range(1, MAX_PAGES + 1):
        with map_errors(LIST):
            _, data = client.requester.requestJsonAndCheck(
                "GET", path, parameters={"per_page": PER_PAGE, "page": page}
            )
        items = data.get("artifacts") if isinstance(data, dict) else None
        if not isinstance(items, list):
            raise GitHubError(f"GitHub answered {LIST} with something not a list", operation=LIST)
        for item in items:
            artifact = parse_artifact(item)
            if artifact is not None and artifact.name.startswith(PREFIX):
                found.append(artifact)
        if len(items) < PER_PAGE:
            break
    return found


def untrusted_reason(artifact: Artifact, repo_id: int | None) -> str | None:
    """Why a run a fork could influence may have made this artifact, or None when it cannot."""
    head, base = artifact.head_repository_id, artifact.repository_id
    if head is None or base is None:
        return "GitHub did not say which repository its run came from"
    if head != base:
        return f"its run came from another repository (id {head}, a fork)"
    if repo_id is not None and base != repo_id:
        return f"its run belongs to another repository (id {base})"
    return None


def choose(
    artifacts: list[Artifact], *, repo_id: int | None, now: datetime, limit: int = 3
) -> tuple[list[Artifact], list[str]]:
    """The newest `limit` trusted, unexpired artifacts; and one line per untrusted one seen
    before the last chosen (the ones that would have been merged had they been trusted)."""
    newest = sorted(
        artifacts,
        key=lambda a: (a.created_at is not None, a.created_at or now, a.id),
        reverse=True,
    )
    chosen: list[Artifact] = []
    refused: list[str] = []
    for artifact in newest:
        if len(chosen) >= limit:
            break
        if artifact.expired or (artifact.expires_at is not None and artifact.expires_at <= now):
            continue
        why = untrusted_reason(artifact, repo_id)
        if why is not None:
            refused.append(f"{artifact.label()} refused: {why}; a fork's state is never merged")
            continue
        chosen.append(artifact)
    return chosen, refused


def download_url(client: github.Github, repo: str, artifact: Artifact) -> str:
    """The signed blob URL GitHub redirects the artifact's zip download to."""
    path = f"{repo_path(repo)}/actions/artifacts/{int(artifact.id)}/zip"
    with map_errors(DOWNLOAD):
        headers, _ = client.requester.requestJsonAndCheck("GET", path)
    location = headers.get("location") if isinstance(headers, dict) else None
    if not isinstance(location, str) or not location:
        raise GitHubError(f"GitHub answered {DOWNLOAD} without a redirect", operation=DOWNLOAD)
    return location


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def fetch_blob(url: str, *, limit: int = MAX_ZIP_BYTES, timeout: float = BLOB_TIMEOUT) -> bytes:
    """The bytes at a download redirect's URL: no credentials sent, at most `limit` read."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme != "https" and not (parts.scheme == "http" and _loopback(host)):
        raise DownloadFailed("the download redirect is not https; not followed")
    if parts.username or parts.password:
        raise DownloadFailed("the download redirect carries credentials; not followed")
    session = requests.Session()
    session.trust_env = False  # no .netrc credentials, no CA or proxy lookups per request
    session.proxies = requests.utils.get_environ_proxies(url)
    headers = {"User-Agent": f"holon/{holon.__version__}", "Accept": "application/zip"}
    try:
        with (
            session,
            session.get(
                url, headers=headers, stream=True, allow_redirects=False, timeout=timeout
            ) as response,
        ):
            if response.status_code != 200:
                raise DownloadFailed(f"the artifact's blob answered {response.status_code}")
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:
                raise DownloadFailed(f"the artifact is over {limit // (1024 * 1024)} MiB")
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_content(64 * 1024):
                size += len(chunk)
                if size > limit:
                    raise DownloadFailed(f"the artifact is over {limit // (1024 * 1024)} MiB")
                chunks.append(chunk)
    except requests.RequestException as exc:
        kind = "timed out" if isinstance(exc, requests.Timeout) else "could not be reached"
        raise DownloadFailed(f"the artifact's blob {kind}") from None
    return b"".join(chunks)


__all__ = [
    "MAX_ZIP_BYTES",
    "PREFIX",
    "Artifact",
    "DownloadFailed",
    "check_digest",
    "choose",
    "download_url",
    "fetch_blob",
    "list_artifacts",
    "parse_artifact",
    "untrusted_reason",
]
