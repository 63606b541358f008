"""The artifacts a run's skills declare, checked after the agent ran (docs/skills.md).

- required and missing: named in `missing` (the run fails if it claims success);
- present but not a regular file reached without a link: a violation;
- JSON (a `.json` path, or any artifact with a schema): read bounded under the output's fd,
  parsed strictly (`jsonio.loads`) and validated against the skill's schema with `jsonschema`;
  invalid JSON or the first schema error (with its path in the document) is a violation.

`unmet_requirements` is the other half: what a skill's `requires` asks beyond the artifacts
(a change: a non-empty patch), for `judge` to weigh when the agent claims success.
"""

from __future__ import annotations

from typing import Any

from holon import jsonio
from holon.errors import InvalidInput
from holon.fsutil import NotRegular, read_regular_at
from holon.runner.outputs import Findings, OutputDir
from holon.runner.record import PatchInfo
from holon.runner.skills import SkillBundle

ARTIFACT_LIMIT = 8 * 1024 * 1024
_SHOWN = 200  # characters of a schema error kept: it may quote what the agent wrote


def check_skill_artifacts(out: OutputDir, bundles: list[SkillBundle], found: Findings) -> None:
    for item in bundles:
        for artifact in item.skill.artifacts:
            schema = item.schemas.get(artifact.path)
            problem = _problem(out, artifact.path, schema, artifact.path.endswith(".json"))
            if problem == "missing":
                if artifact.required and artifact.path not in found.missing:
                    found.missing.append(artifact.path)
            elif problem is not None:
                found.violations.append(f"{item.skill.name} artifact {artifact.path}: {problem}")


def _problem(out: OutputDir, path: str, schema: dict[str, Any] | None, is_json: bool) -> str | None:
    try:
        raw = read_regular_at(out.fd, path, ARTIFACT_LIMIT)
    except FileNotFoundError:
        return "missing"
    except NotRegular as exc:
        return f"{exc}; only a regular file in the output counts"
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if schema is None and not is_json:
        return None
    try:
        document = jsonio.loads(raw, path)
    except InvalidInput as exc:
        return f"invalid JSON ({str(exc).removeprefix(path + ': ')})"
    if schema is None:
        return None
    return schema_error(document, schema)


def schema_error(document: Any, schema: dict[str, Any]) -> str | None:
    """The most relevant error of `document` against `schema` (jsonschema's best_match), as
    `at /0/line: 0 is less than the minimum of 1`; None when it is valid."""
    from jsonschema.exceptions import best_match
    from jsonschema.validators import validator_for
    from referencing.exceptions import Unresolvable

    validator = validator_for(schema)(schema)
    try:
        error = best_match(validator.iter_errors(document))
    except Unresolvable as exc:  # a $ref Holon does not fetch
        return f"its schema refers to what cannot be resolved here ({exc})"
    if error is None:
        return None
    where = "/" + "/".join(str(part) for part in error.absolute_path)
    message = error.message if len(error.message) <= _SHOWN else error.message[:_SHOWN] + "..."
    return f"does not match its schema at {where}: {message}"


def unmet_requirements(bundles: list[SkillBundle], patch: PatchInfo | None) -> list[str]:
    """What the skills require that the run does not show, one line each."""
    unmet = []
    empty = patch is None or patch.path is None or patch.bytes == 0
    for item in bundles:
        if item.skill.requires.change and empty:
            unmet.append(f"{item.skill.name} requires a change, but the patch is empty")
    return unmet
