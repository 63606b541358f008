"""A request as the loopback GitHub's handlers see it, and the table of handlers.

A handler gets the request (`Request`) and returns (status, body); `Missing` becomes GitHub's
404 and `Refused` its error for the status. Only what the edge's effects need is here; any other
route of GitHub's is refused by the server as a violation, so a test cannot rely on it by chance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.support.github_fake.render import Renderer
from tests.support.github_fake.state import GitHubState, Refused, Repo


@dataclass
class Request:
    state: GitHubState
    render: Renderer
    operation: str
    login: str  # who the token belongs to: the author of what is written
    params: dict[str, str]
    query: dict[str, list[str]]
    json: Any

    @property
    def repo(self) -> Repo:
        return self.state.repo(self.params["owner"], self.params["repo"])

    def arg(self, name: str, default: str | None = None) -> str | None:
        return self.query.get(name, [default])[0]

    def field(self, name: str) -> Any:
        if not isinstance(self.json, dict) or name not in self.json:
            raise Refused(422, f"Invalid request: {name} wasn't supplied.")
        return self.json[name]


Reply = tuple[int, Any]
HANDLERS: dict[str, Callable[[Request], Reply]] = {}


def handles(*operations: str) -> Callable[[Callable[[Request], Reply]], Callable[[Request], Reply]]:
    def register(function: Callable[[Request], Reply]) -> Callable[[Request], Reply]:
        for operation in operations:
            HANDLERS[operation] = function
        return function

    return register
