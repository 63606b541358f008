"""`spec.yaml`: the user-written description of one run (RFC-0002 section 3.1).

User-written, so unknown keys are errors. Versions `v1` and the legacy `v0.1`/`v0.2` are
accepted; in the legacy shape an output artifact may be a bare path, which means "required".
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
    field_validator,
    model_validator,
)

from holon import jsonio, yamlio
from holon.duration import format_duration, parse_duration
from holon.errors import InvalidInput
from holon.price import MAX_PRICES, Price
from holon.secrets import secret_kind
from holon.validation import describe_validation_error, empty_dict, empty_list

# A spec is a page of YAML; far more is not a spec (it is copied to the agent and kept).
MAX_SPEC_BYTES = 1024 * 1024
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _duration(value: Any) -> float:
    if isinstance(value, str | int | float):
        return parse_duration(value)
    raise ValueError("a duration must be a number of seconds or a string like 90s, 5m, 1h30m")


Duration = Annotated[
    float,
    BeforeValidator(_duration, json_schema_input_type=str | float),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
]


def _relative_path(value: str, what: str) -> str:
    path = PurePosixPath(value)
    if not value or path.is_absolute() or ".." in path.parts:
        raise ValueError(f"{what} must be a relative path inside the directory, got {value!r}")
    return value


def _scalar_text(value: Any) -> Any:
    # YAML turns `PORT: 8080` into an int; an env value is text, so scalars are accepted as text.
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    return value


EnvValue = Annotated[
    str, BeforeValidator(_scalar_text, json_schema_input_type=str | int | float | bool)
]
IssueId = Annotated[
    str | None, BeforeValidator(_scalar_text, json_schema_input_type=str | int | None)
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)


class Metadata(_Strict):
    name: str | None = None
    id: str | None = None
    skills: list[str] = Field(default_factory=empty_list)


class Context(_Strict):
    workspace: str | None = Field(
        default=None,
        description="Workspace directory, relative to the spec file when not absolute.",
    )
    files: list[str] = Field(
        default_factory=empty_list,
        description="Workspace-relative files the agent should read first.",
    )
    env: dict[str, EnvValue] = Field(
        default_factory=empty_dict, description="Non-secret environment for the agent."
    )

    @field_validator("files")
    @classmethod
    def _files_relative(cls, files: list[str]) -> list[str]:
        return [_relative_path(f, "context.files entry") for f in files]

    @field_validator("env")
    @classmethod
    def _env_not_secret(cls, env: dict[str, str]) -> dict[str, str]:
        for name, value in env.items():
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(f"{name!r} is not a valid environment variable name")
            if "\x00" in value:  # no process environment can hold it
                raise ValueError(f"{name}: an environment value cannot hold a NUL character")
            kind = secret_kind(value)
            if kind is not None:
                # Never echo the value: naming the variable and what gave it away is enough.
                raise ValueError(
                    f"{name} looks like a secret ({kind}); secrets must reach the "
                    "agent as environment variables (--secret-env), never inside the spec"
                )
        return env


class Goal(_Strict):
    description: str = Field(min_length=1)
    issue_id: IssueId = None


class ArtifactSpec(_Strict):
    path: str
    required: bool = False

    @field_validator("path")
    @classmethod
    def _path_relative(cls, value: str) -> str:
        return _relative_path(value, "output.artifacts path")


def _legacy_artifact(value: Any) -> Any:
    # v0.1 listed artifacts as bare paths, all of them required.
    return {"path": value, "required": True} if isinstance(value, str) else value


class Output(_Strict):
    artifacts: list[
        Annotated[
            ArtifactSpec,
            BeforeValidator(_legacy_artifact, json_schema_input_type=str | ArtifactSpec),
        ]
    ] = Field(default_factory=empty_list)


class Constraints(_Strict):
    timeout: Duration | None = None
    max_steps: int | None = Field(default=None, gt=0)
    # The run's model budget (docs/budgets.md): input + output tokens, and their cost in USD at
    # `prices` (the policy's table; a model it does not price has no cost to limit).
    max_tokens: int | None = Field(default=None, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0)
    prices: dict[str, Price] = Field(default_factory=empty_dict, max_length=MAX_PRICES)


class Spec(_Strict):
    """One run's spec, exactly as the agent receives it at `/holon/input/spec.yaml`."""

    version: Literal["v1", "v0.1", "v0.2"]
    kind: Literal["Holon"]
    metadata: Metadata = Field(default_factory=Metadata)
    context: Context = Field(default_factory=Context)
    goal: Goal
    output: Output = Field(default_factory=Output)
    constraints: Constraints = Field(default_factory=Constraints)

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, value: Any) -> Any:
        # `version: 1` in YAML is the number 1; say what is accepted instead of a type error.
        if not isinstance(value, str) or value not in ("v1", "v0.1", "v0.2"):
            raise ValueError(f"unsupported version {value!r}: use v1 (v0.1 and v0.2 are accepted)")
        return value

    @field_validator("kind", mode="before")
    @classmethod
    def _kind_text(cls, value: Any) -> Any:
        if value != "Holon":
            raise ValueError(f"unknown kind {value!r}: expected Holon")
        return value

    @model_validator(mode="after")
    def _text_not_secret(self) -> Spec:
        # The spec is copied to the agent and kept with the run: a credential pasted into its
        # free text (a clone URL, an Authorization header) travels with it.
        fields = {
            "goal.description": self.goal.description,
            "metadata.name": self.metadata.name,
            "metadata.id": self.metadata.id,
            "context.workspace": self.context.workspace,
        }
        for where, text in fields.items():
            kind = secret_kind(text) if text else None
            if kind is not None:
                raise ValueError(
                    f"{where} looks like it holds a secret ({kind}); pass secrets to the agent "
                    "as environment variables (--secret-env), never inside the spec"
                )
        return self

    def to_yaml(self) -> str:
        data = self.model_dump(mode="json", exclude_none=True)
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def parse_spec(text: str, source: str = "spec.yaml") -> Spec:
    """Parse and validate spec text; every problem becomes one InvalidInput line."""
    try:
        data = yamlio.load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise InvalidInput(f"{source}: invalid YAML{where}: {problem}") from None
    except RecursionError:  # nesting deeper than Python's stack: hostile, not a bug
        raise InvalidInput(f"{source}: invalid YAML: nested too deeply") from None
    if not isinstance(data, dict):
        raise InvalidInput(f"{source}: expected a mapping at the top level")
    try:
        return Spec.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(describe_validation_error(source, exc)) from None


def load_spec(path: Path) -> Spec:
    """The spec file at `path`, read bounded (MAX_SPEC_BYTES): `/dev/zero` is one line."""
    return parse_spec(jsonio.read_text(str(path), MAX_SPEC_BYTES, "spec"), source=str(path))
