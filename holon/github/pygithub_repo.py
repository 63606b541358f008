"""`Repo` over PyGithub's requester: one REST call per method, every one inside `map_errors`.

The requester (not PyGithub's lazy objects) is used so that each method is exactly the one
request it names: a lazy object reading an attribute its answer lacked would fetch itself again,
an uncounted call. The requester still brings Holon's retry policy and write spacing
(`client.make_client`). Paths are built here with every variable part encoded as one path
segment (a label `a/b` is `a%2Fb`; `.` and `..` are refused), so text from outside is data in
a URL, never structure.
"""

from __future__ import annotations

import contextlib
import re
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import github
from requests.utils import parse_header_links

from holon.github.errors import GitHubError, NotFound, map_errors
from holon.github.handle import (
    CheckFields,
    CheckRunView,
    CommentView,
    IssueView,
    PullView,
    Repo,
)
from holon.secrets import mask_secret_looking
from holon.terminal import line

PER_PAGE = 100  # GitHub's largest page: the fewest calls to find a comment in a long thread
# 10,000 items: a `Link` that never ends cannot hold an effect forever, and a listing cut short
# fails instead of ending quietly (a comment not found would be posted twice).
MAX_PAGES = 100
_FULL_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")


def _segment(value: object) -> str:
    """`value` as one path segment, every reserved character encoded. `.` and `..` are refused:
    they are dot segments, which resolving the URL removes with what is before them (the
    request would go to another route), and requests decodes a %2E back into a dot."""
    text = urllib.parse.quote(str(value), safe="")
    if text in (".", ".."):
        raise GitHubError(f"refused {text!r} as a part of a URL: a dot segment changes the route")
    return text


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    except ValueError:  # a port that is no number
        port = -1
    return parts.scheme.lower(), parts.hostname or "", port


def check_next_page(url: str, api_url: str, operation: str) -> None:
    """Refuse a `Link: next` URL whose scheme, host and port are not the API URL's: following
    it would send the token there. PyGithub refuses another host only with an `assert`, which
    `python -O` skips, and lets through any host of the API's domain, or https for http."""
    if _origin(url) != _origin(api_url):
        shown = line(mask_secret_looking(url), limit=200)
        raise GitHubError(
            f"GitHub's next page of {operation} is not on {api_url} ({shown}): not followed, "
            "the token goes to the configured API only",
            operation=operation,
        )


def _login(user: object) -> str | None:
    return user.get("login") if isinstance(user, dict) else None


def _comment(data: dict[str, Any]) -> CommentView:
    return CommentView(
        id=int(data["id"]),
        author=_login(data.get("user")),
        body=str(data.get("body") or ""),
        url=data.get("html_url"),
    )


def _check_run(data: dict[str, Any]) -> CheckRunView:
    output = data.get("output") or {}
    app = data.get("app") or {}
    return CheckRunView(
        id=int(data["id"]),
        name=str(data.get("name") or ""),
        app=app.get("slug") if isinstance(app, dict) else None,
        status=str(data.get("status") or ""),
        conclusion=data.get("conclusion"),
        title=output.get("title"),
        summary=output.get("summary"),
        url=data.get("html_url"),
    )


def _check_body(fields: CheckFields) -> dict[str, Any]:
    body: dict[str, Any] = {
        "status": fields.status,
        "output": {"title": fields.title, "summary": fields.summary},
    }
    if fields.conclusion is not None:
        body["conclusion"] = fields.conclusion
    if fields.details_url is not None:
        body["details_url"] = fields.details_url
    return body


class PyGithubRepo:
    """The `Repo` handle on `full_name` through a client from `client.make_client`."""

    def __init__(self, client: github.Github, full_name: str) -> None:
        if not _FULL_NAME.fullmatch(full_name):
            raise ValueError("a repository is named owner/name")
        self._requester = client.requester
        self._full_name = full_name
        self._root = f"/repos/{full_name}"

    @property
    def full_name(self) -> str:
        return self._full_name

    def _call(self, operation: str, verb: str, path: str, **kwargs: Any) -> Any:
        with map_errors(operation):
            return self._requester.requestJsonAndCheck(verb, path, **kwargs)

    def _pages(self, operation: str, path: str, params: dict[str, Any]) -> Iterator[Any]:
        """Each page's data, following GitHub's `Link: rel="next"` one call at a time."""
        url: str | None = path
        query: dict[str, Any] | None = {**params, "per_page": PER_PAGE}
        for _ in range(MAX_PAGES):
            if url is None:
                return
            headers, data = self._call(operation, "GET", url, parameters=query)
            yield data
            links = parse_header_links(str(headers.get("link") or ""))
            url = next((link["url"] for link in links if link.get("rel") == "next"), None)
            if url is not None:
                check_next_page(url, self._requester.base_url, operation)
            query = None  # the next link carries the query
        if url is not None:
            raise GitHubError(f"GitHub listed more than {MAX_PAGES} pages for {operation}: stopped")

    def comments(self, number: int) -> Iterator[CommentView]:
        path = f"{self._root}/issues/{int(number)}/comments"
        for page in self._pages("issues/list-comments", path, {}):
            yield from (_comment(item) for item in page)

    def create_comment(self, number: int, body: str) -> CommentView:
        path = f"{self._root}/issues/{int(number)}/comments"
        _, data = self._call("issues/create-comment", "POST", path, input={"body": body})
        return _comment(data)

    def edit_comment(self, number: int, comment_id: int, body: str) -> CommentView:
        del number  # GitHub addresses a comment by its id alone
        path = f"{self._root}/issues/comments/{int(comment_id)}"
        _, data = self._call("issues/update-comment", "PATCH", path, input={"body": body})
        return _comment(data)

    def delete_comment(self, comment_id: int) -> None:
        path = f"{self._root}/issues/comments/{int(comment_id)}"
        with contextlib.suppress(NotFound):
            self._call("issues/delete-comment", "DELETE", path)

    def issue(self, number: int) -> IssueView:
        _, data = self._call("issues/get", "GET", f"{self._root}/issues/{int(number)}")
        labels = tuple(str(x.get("name")) for x in data.get("labels") or [] if isinstance(x, dict))
        return IssueView(
            number=int(data["number"]),
            state=str(data.get("state")),
            is_pull=bool(data.get("pull_request")),
            labels=labels,
        )

    def add_labels(self, number: int, names: Sequence[str]) -> None:
        path = f"{self._root}/issues/{int(number)}/labels"
        self._call("issues/add-labels", "POST", path, input={"labels": list(names)})

    def remove_label(self, number: int, name: str) -> None:
        path = f"{self._root}/issues/{int(number)}/labels/{_segment(name)}"
        self._call("issues/remove-label", "DELETE", path)

    def close_issue(self, number: int, reason: str) -> None:
        path = f"{self._root}/issues/{int(number)}"
        body = {"state": "closed", "state_reason": reason}
        self._call("issues/update", "PATCH", path, input=body)

    def pull(self, number: int) -> PullView:
        _, data = self._call("pulls/get", "GET", f"{self._root}/pulls/{int(number)}")
        requested = tuple(
            login for login in map(_login, data.get("requested_reviewers") or []) if login
        )
        return PullView(
            number=int(data["number"]),
            state=str(data.get("state")),
            author=_login(data.get("user")),
            requested=requested,
            head_sha=(data.get("head") or {}).get("sha"),
        )

    def request_reviewers(self, number: int, logins: Sequence[str]) -> None:
        path = f"{self._root}/pulls/{int(number)}/requested_reviewers"
        self._call("pulls/request-reviewers", "POST", path, input={"reviewers": list(logins)})

    def workflow_dispatch(self, workflow: str, ref: str, inputs: Mapping[str, str]) -> None:
        path = f"{self._root}/actions/workflows/{_segment(workflow)}/dispatches"
        body = {"ref": ref, "inputs": dict(inputs)}
        self._call("actions/create-workflow-dispatch", "POST", path, input=body)

    def repository_dispatch(self, event_type: str, payload: Mapping[str, Any]) -> None:
        body = {"event_type": event_type, "client_payload": dict(payload)}
        self._call("repos/create-dispatch-event", "POST", f"{self._root}/dispatches", input=body)

    def check_runs(self, sha: str, name: str) -> Iterator[CheckRunView]:
        path = f"{self._root}/commits/{_segment(sha)}/check-runs"
        for page in self._pages("checks/list-for-ref", path, {"check_name": name}):
            yield from (_check_run(item) for item in page.get("check_runs") or [])

    def create_check_run(self, sha: str, name: str, fields: CheckFields) -> CheckRunView:
        body = {"name": name, "head_sha": sha, **_check_body(fields)}
        _, data = self._call("checks/create", "POST", f"{self._root}/check-runs", input=body)
        return _check_run(data)

    def update_check_run(self, check_run_id: int, fields: CheckFields) -> CheckRunView:
        path = f"{self._root}/check-runs/{int(check_run_id)}"
        _, data = self._call("checks/update", "PATCH", path, input=_check_body(fields))
        return _check_run(data)


def open_repo(client: github.Github, full_name: str) -> Repo:
    """The `Repo` handle on `full_name` (typed as the protocol, so the type checker holds
    `PyGithubRepo` to it)."""
    return PyGithubRepo(client, full_name)
