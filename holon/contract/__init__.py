"""The Agent Contract (RFC-0002): spec, manifest, filesystem layout and exit codes."""

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
