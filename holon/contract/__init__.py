"""The Agent Contract (RFC-0002): spec, manifest, filesystem layout and exit codes.

The names load on first use (PEP 562): importing one part (`holon.contract.spec`, before an agent
runs) does not build the models of the others (the manifest's, read after it).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from holon.contract.layout import (
        CONTAINER_LAYOUT,
        ENV_INPUT_DIR,
        ENV_OUTPUT_DIR,
        ENV_WORKSPACE_DIR,
        AgentExit,
        Layout,
    )
    from holon.contract.manifest import Manifest, load_manifest
    from holon.contract.spec import Spec, load_spec, parse_spec

_WHERE = {
    "CONTAINER_LAYOUT": "layout",
    "ENV_INPUT_DIR": "layout",
    "ENV_OUTPUT_DIR": "layout",
    "ENV_WORKSPACE_DIR": "layout",
    "AgentExit": "layout",
    "Layout": "layout",
    "Manifest": "manifest",
    "load_manifest": "manifest",
    "Spec": "spec",
    "load_spec": "spec",
    "parse_spec": "spec",
}

__all__ = [
    "CONTAINER_LAYOUT",
    "ENV_INPUT_DIR",
    "ENV_OUTPUT_DIR",
    "ENV_WORKSPACE_DIR",
    "AgentExit",
    "Layout",
    "Manifest",
    "Spec",
    "load_manifest",
    "load_spec",
    "parse_spec",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
