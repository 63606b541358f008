"""The e2e stories' step factory (`steps`), shared with tests/e2e_actions."""

from tests.e2e_actions.conftest import steps

__all__ = ["steps"]
