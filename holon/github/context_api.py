"""`ContextReader` over GitHub's REST API, through the edge's client (`client.make_client`):
its requester brings Holon's retry policy, transport and write spacing, and every call runs
inside `map_errors`, so a refusal is one line naming the permission it needs.

Lists follow GitHub's `Link: rel="next"` (never to another host: `check_next_page`) for at most
`pages` pages of 100; a longer list is read in part and says so. The diff is asked for as
`application/vnd.github.diff` and cut to a bound. A job's log is a 302 to a short-lived
pre-signed URL on a storage host (`pipelines.actions.githubusercontent.com`, a blob store):
the redirect is read, not followed by PyGithub (which follows only to GitHub's own domains),
and the log is streamed from there without the token, keeping only its tail.

Review threads' resolution is GraphQL-only: the collector says so; nothing here asks.
"""

from __future__ import annotations

import collections
import json
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import github
import requests
from requests.utils import parse_header_links

from holon.contract.context import PartSource
from holon.github import context_records as rec
from holon.github.context_records import Item
from holon.github.context_source import LogTail, Part, PartMissing
from holon.github.errors import GitHubError, map_errors, translate
from holon.github.pygithub_repo import check_next_page
from holon.github.rest import repo_path
from holon.secrets import mask_secret_looking
from holon.terminal import line

PER_PAGE = 100
PAGES = 10  # at most 1,000 items of a list (GitHub lists at most 250 commits, 3,000 files)
LOG_READ_BYTES = 32 * 1024 * 1024  # a log longer than this is not read to its end
_CHUNK = 64 * 1024
_DIFF = "application/vnd.github.diff"


def _gone(exc: GitHubError) -> PartMissing:
    return PartMissing(line(str(exc), limit=300))


class ApiReader:
    """`ContextReader` of `repo` through `client` (the edge's, shared with its effects)."""

    source: PartSource = "api"

    def __init__(
        self,
        client: github.Github,
        repo: str,
        *,
        pages: int = PAGES,
        timeout: float = 30.0,
        session: requests.Session | None = None,
        permission_of: Callable[[str], str | None] | None = None,
        read_permissions: bool = False,
    ) -> None:
        self._requester = client.requester
        self._root = repo_path(repo)  # a name GitHub could not have is refused here
        self.pages = pages
        self.timeout = timeout
        self._session = session or requests.Session()
        # The edge's facts read permissions too, cached per pass: asked there, not twice.
        self._permission_of = permission_of
        self._read_permissions = read_permissions  # else a member's write access is unconfirmed

    # -- requests ---------------------------------------------------------------------------
    def _get(self, operation: str, path: str, **params: Any) -> tuple[dict[str, Any], Any]:
        try:
            with map_errors(operation):
                headers, data = self._requester.requestJsonAndCheck(
                    "GET", path, parameters=params or None
                )
        except GitHubError as exc:
            raise _gone(exc) from None
        return headers, data

    def _pages(self, operation: str, path: str, key: str | None = None) -> Part:
        """Up to `pages` pages of a list (`key` names it inside an object answer)."""
        found: list[dict[str, Any]] = []
        url: str | None = path
        params: dict[str, Any] = {"per_page": PER_PAGE}
        for _ in range(self.pages):
            if url is None:
                return Part(found)
            headers, data = self._get(operation, url, **params)
            chunk = rec.obj(data).get(key) if key else data
            if not isinstance(chunk, list):
                raise PartMissing(f"GitHub answered {operation} with something not a list")
            found.extend(rec.items(chunk))
            links = parse_header_links(str(headers.get("link") or ""))
            url = next((link["url"] for link in links if link.get("rel") == "next"), None)
            if url is not None:
                try:
                    check_next_page(url, self._requester.base_url, operation)
                except GitHubError as exc:
                    raise _gone(exc) from None
            params = {}  # the next link carries the query
        if url is None:
            return Part(found)
        return Part(found, gap=f"more than {self.pages * PER_PAGE} items: the rest not read")

    def _raw(self, operation: str, path: str, accept: str) -> tuple[int, dict[str, Any], str]:
        """A GET whose answer is not JSON (a diff, a redirect): status, headers, body; a
        refusal raised as `PartMissing`, mapped as any other call's."""
        try:
            with map_errors(operation):
                status, headers, body = self._requester.requestJson(
                    "GET", path, headers={"Accept": accept}
                )
                if status >= 400:
                    said = _json_or_none(body)
                    refused = self._requester.createException(status, headers, said)  # type: ignore[arg-type]
                    raise translate(refused, operation)
        except GitHubError as exc:
            raise _gone(exc) from None
        return status, headers, body

    # -- parts ------------------------------------------------------------------------------
    def item(self, kind: str, number: int) -> Item:
        if kind == "pull_request":
            _, data = self._get("pulls/get", f"{self._root}/pulls/{int(number)}")
        else:
            _, data = self._get("issues/get", f"{self._root}/issues/{int(number)}")
        return rec.item(rec.obj(data), number)

    def comments(self, number: int) -> Part:
        part = self._pages("issues/list-comments", f"{self._root}/issues/{int(number)}/comments")
        return Part([rec.comment(c) for c in part.records], part.gap)

    def reviews(self, number: int) -> Part:
        part = self._pages("pulls/list-reviews", f"{self._root}/pulls/{int(number)}/reviews")
        return Part([rec.review(r) for r in part.records], part.gap)

    def review_comments(self, number: int) -> Part:
        path = f"{self._root}/pulls/{int(number)}/comments"
        part = self._pages("pulls/list-review-comments", path)
        return Part([rec.review_comment(c) for c in part.records], part.gap)

    def permission(self, login: str) -> str | None:
        """`login`'s permission on the repository (`admin`, `write`, `read`...); None when
        GitHub does not say (a 404 for an account that is no collaborator, a refusal)."""
        if self._permission_of is not None:
            return self._permission_of(login)
        if not self._read_permissions:
            return None
        path = f"{self._root}/collaborators/{urllib.parse.quote(login, safe='')}/permission"
        try:
            _, data = self._get("repos/get-collaborator-permission-level", path)
        except PartMissing:
            return None
        value = rec.obj(data).get("permission")
        return value if isinstance(value, str) else None

    def files(self, number: int) -> Part:
        part = self._pages("pulls/list-files", f"{self._root}/pulls/{int(number)}/files")
        return Part([rec.changed_file(f) for f in part.records], part.gap)

    def commits(self, number: int) -> Part:
        part = self._pages("pulls/list-commits", f"{self._root}/pulls/{int(number)}/commits")
        return Part([rec.commit(c) for c in part.records], part.gap)

    def diff(self, number: int, limit: int) -> tuple[bytes, int]:
        # GitHub refuses a diff it finds too large itself (406): that is a missing part.
        _, _, body = self._raw("pulls/get", f"{self._root}/pulls/{int(number)}", _DIFF)
        data = body.encode("utf-8", "replace")
        return data[:limit], len(data)

    def check_runs(self, sha: str) -> Part:
        if not (len(sha) in (40, 64) and all(c in "0123456789abcdef" for c in sha)):
            raise PartMissing("the head commit's sha is not 40 hex digits: checks not read")
        path = f"{self._root}/commits/{sha}/check-runs"
        part = self._pages("checks/list-for-ref", path, key="check_runs")
        return Part([rec.check_run(c) for c in part.records], part.gap)

    def log_tail(self, job_id: int, limit: int) -> LogTail:
        operation = "actions/download-job-logs-for-workflow-run"
        path = f"{self._root}/actions/jobs/{int(job_id)}/logs"
        status, headers, _ = self._raw(operation, path, "application/vnd.github+json")
        location = str(headers.get("location") or "")
        if status != 302 or not location:
            raise PartMissing(f"GitHub answered {operation} with {status}, not a redirect")
        if urllib.parse.urlsplit(location).scheme != "https" and not _same_origin(
            location, self._requester.base_url
        ):
            raise PartMissing(f"{operation}: the log's address is not https: not read")
        return self._download_tail(location, limit)

    def _download_tail(self, url: str, limit: int) -> LogTail:
        """The last `limit` bytes of the log at the pre-signed `url`, streamed (no token: the
        URL carries its own short-lived signature, which is never recorded)."""
        tail: collections.deque[bytes] = collections.deque()
        kept = read = 0
        try:
            with self._session.get(
                url, stream=True, timeout=self.timeout, allow_redirects=False
            ) as response:
                if response.status_code != 200:
                    raise PartMissing(f"the job's log answered {response.status_code}: not read")
                for chunk in _chunks(response):
                    read += len(chunk)
                    if read > LOG_READ_BYTES:
                        raise PartMissing(
                            f"the job's log is longer than {LOG_READ_BYTES} bytes: not read"
                        )
                    tail.append(chunk)
                    kept += len(chunk)
                    while tail and kept - len(tail[0]) >= limit:
                        kept -= len(tail.popleft())
        except requests.RequestException as exc:
            said = line(mask_secret_looking(type(exc).__name__), limit=80)
            raise PartMissing(f"the job's log could not be downloaded ({said})") from None
        data = b"".join(tail)
        return LogTail(data[-limit:], cut=read > limit)


def _chunks(response: requests.Response) -> Iterator[bytes]:
    yield from (c for c in response.iter_content(_CHUNK) if c)


def _same_origin(url: str, base: str) -> bool:
    a, b = urllib.parse.urlsplit(url), urllib.parse.urlsplit(base)
    return (a.scheme, a.netloc) == (b.scheme, b.netloc)


def _json_or_none(body: str) -> dict[str, Any] | None:
    """An error body as PyGithub's exceptions take it: an object, else nothing."""
    try:
        data = json.loads(body) if body else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
