"""The GitHub fakes as pytest fixtures (loaded by tests/conftest.py for every test).

Each fixture fails the test at teardown if a request went to a route GitHub does not have or
that nothing answered, even when the code under test caught the error it got.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.github_fake.loopback import LoopbackGitHub
from tests.support.github_fake.mock import GitHubFake


@pytest.fixture
def github_fake() -> Iterator[GitHubFake]:
    with GitHubFake() as fake:
        yield fake
    fake.assert_clean()


@pytest.fixture
def github_server() -> Iterator[LoopbackGitHub]:
    with LoopbackGitHub(token="ghs_" + "f" * 36) as server:
        yield server
    server.assert_clean()
