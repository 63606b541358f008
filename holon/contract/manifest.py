"""`manifest.json`: the agent's own record of its run (RFC-0002 section 3.2.1).

Agent-written, so unknown fields are kept rather than rejected: newer agents may say more than we
know how to read.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from holon import jsonio
from holon.duration import parse_duration
from holon.errors import InvalidInput
from holon.validation import describe_validation_error

ManifestStatus = Literal["completed", "failed", "running"]
ManifestOutcome = Literal["success", "failure", "needs_human"]


def _seconds(value: Any) -> Any:
    if isinstance(value, str):
        return parse_duration(value, allow_zero=True, maximum=None)  # measured, not a limit
    return value


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, hide_input_in_errors=True)


class Engine(_Open):
    model: str | None = None
    version: str | None = None


class ManifestMetadata(_Open):
    agent: str | None = None
    version: str | None = None
    mode: str | None = None
    engine: Engine | None = None


class ArtifactRef(_Open):
    name: str
    path: str


def _artifact(value: Any) -> Any:
    # Agents may list artifacts as bare paths; readers always get {name, path}.
    if isinstance(value, str):
        return {"name": PurePosixPath(value).name or value, "path": value}
    return value


class Question(_Open):
    id: str = Field(min_length=1)
    text: str = Field(min_length=1)


class Manifest(_Open):
    status: ManifestStatus
    outcome: ManifestOutcome
    duration: (
        Annotated[float, BeforeValidator(_seconds, json_schema_input_type=str | float), Field(ge=0)]
        | None
    ) = None
    artifacts: list[
        Annotated[ArtifactRef, BeforeValidator(_artifact, json_schema_input_type=str | ArtifactRef)]
    ] = Field(default_factory=list)
    metadata: ManifestMetadata = Field(default_factory=ManifestMetadata)
    error: str | None = None
    question: Question | None = None


class ManifestError(ValueError):
    """The manifest is missing or does not follow the contract; the message says why."""


def parse_manifest(raw: bytes, source: str = "manifest.json") -> Manifest:
    try:
        data = jsonio.loads(raw, source)
    except InvalidInput as exc:
        raise ManifestError(str(exc)) from None
    if not isinstance(data, dict):
        raise ManifestError(f"{source}: expected a JSON object")
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise ManifestError(describe_validation_error(source, exc)) from None


def load_manifest(path: Path) -> Manifest:
    if path.is_symlink() or not path.is_file():
        raise ManifestError(f"{path.name}: missing (the agent wrote no manifest)")
    return parse_manifest(path.read_bytes(), source=path.name)
