"""Fakes of GitHub's REST API, in one place, answering only routes GitHub has.

- `GitHubFake` (`github_fake` fixture): `responses` in-process, GitHub's documented example
  bodies, per-test replies; for unit tests of one effect.
- `LoopbackGitHub` (`github_server` fixture): a real HTTP server on 127.0.0.1 with in-memory
  issues, pulls, checks and git data; for tests with real HTTP or a `holon` subprocess.

Both record every call (`calls`, `count(operation)`, `operations()`), and both turn a request
to a route GitHub's REST description does not have into a violation that fails the test.
"""

from tests.support.github_fake.calls import Call, CallLog
from tests.support.github_fake.loopback import LoopbackGitHub
from tests.support.github_fake.mock import GitHubFake
from tests.support.github_fake.routes import UnknownRoute, example, route_of, routes

__all__ = [
    "Call",
    "CallLog",
    "GitHubFake",
    "LoopbackGitHub",
    "UnknownRoute",
    "example",
    "route_of",
    "routes",
]
