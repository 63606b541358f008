"""GitHub's REST routes and documented responses, from `tests/fixtures/github-rest/`.

Both fakes answer only what this table holds, so a test fails on a request GitHub would not
understand (a route PyGithub spells from an older description, a typo in a path), instead of
passing against a fake more lenient than GitHub.
"""

from __future__ import annotations

import copy
import csv
import functools
import json
import re
import urllib.parse
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "github-rest"
# Parameters GitHub takes unencoded with slashes in them (`git/ref/heads/main`, a file path);
# every other parameter is one path segment, so a label name with a slash must be encoded.
_SLASHED = frozenset({"ref", "path", "basehead", "branch"})
_PARAM = re.compile(r"\{(\w+)\}")


class UnknownRoute(AssertionError):
    """A test named a route or operation GitHub's REST description does not have."""


@dataclass(frozen=True)
class Route:
    method: str
    template: str
    operation: str
    codes: tuple[int, ...]
    pattern: re.Pattern[str]

    @property
    def key(self) -> str:
        return f"{self.method} {self.template}"

    @property
    def specificity(self) -> int:
        """Literal characters: among routes matching one path, the most literal one is meant
        (`commits/{ref}/check-runs` over `commits/{ref}`, whose ref may hold slashes)."""
        return len(_PARAM.sub("", self.template))


def _compile(template: str) -> re.Pattern[str]:
    parts, last = [], 0
    for match in _PARAM.finditer(template):
        parts.append(re.escape(template[last : match.start()]))
        name = match.group(1)
        parts.append(f"(?P<{name}>.+)" if name in _SLASHED else f"(?P<{name}>[^/]+)")
        last = match.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts) + r"\Z")


class RouteTable:
    def __init__(self, rows: list[dict[str, str]]) -> None:
        self.routes = [
            Route(
                row["method"],
                row["path"],
                row["operation_id"],
                tuple(int(code) for code in row["response_codes"].split(",") if code),
                _compile(row["path"]),
            )
            for row in rows
        ]
        self.by_key = {route.key: route for route in self.routes}
        self.by_operation = {route.operation: route for route in self.routes}
        self._by_method: dict[str, list[Route]] = defaultdict(list)
        for route in sorted(self.routes, key=lambda r: -r.specificity):
            self._by_method[route.method].append(route)

    def find(self, name: str) -> Route:
        """The route named by `"METHOD /path/{template}"` or by its operation id."""
        route = self.by_key.get(name) or self.by_operation.get(name)
        if route is None:
            raise UnknownRoute(f"GitHub's REST API has no route {name!r}")
        return route

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        """The route a request for `path` (no query, no API prefix) reaches, with its
        parameters decoded; None when GitHub has no such route."""
        for route in self._by_method.get(method.upper(), ()):
            found = route.pattern.match(path)
            if found:
                params = {k: urllib.parse.unquote(v) for k, v in found.groupdict().items()}
                return route, params
        return None


@functools.cache
def routes() -> RouteTable:
    with (FIXTURES / "routes.tsv").open(newline="") as handle:
        return RouteTable(list(csv.DictReader(handle, delimiter="\t")))


@functools.cache
def _examples() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / "examples.json").read_text())
    return data


def route_of(method: str, url_path: str) -> str | None:
    """The operation id of a request, or None when GitHub has no such route."""
    found = routes().match(method, url_path)
    return found[0].operation if found else None


# A few documented bodies only point at an example kept elsewhere in the description
# (`{"$ref": "#/components/examples/issue"}`); these borrow one of the same schema.
_SAME_BODY = {
    "GET /repos/{owner}/{repo}/issues/{issue_number}": (
        "PATCH /repos/{owner}/{repo}/issues/{issue_number}"
    ),
}


def example(route: Route, base_url: str = "https://api.github.com") -> tuple[int, Any]:
    """GitHub's documented success status and body for `route` (a deep copy), its API URLs
    pointed at `base_url`."""
    documented = _examples().get(route.key)
    if documented is None:
        return (route.codes[0] if route.codes else 200), None
    body = documented["body"]
    if isinstance(body, dict) and "$ref" in body and route.key in _SAME_BODY:
        body = _examples()[_SAME_BODY[route.key]]["body"]
    if body is not None and base_url != "https://api.github.com":
        text = json.dumps(body).replace("https://api.github.com", base_url.rstrip("/"))
        body = json.loads(text)
    return int(documented["status"]), copy.deepcopy(body)
