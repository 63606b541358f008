"""The five skills Holon ships: valid declarations, valid JSON Schemas whose examples hold, and
instructions that render in the sandbox."""

from __future__ import annotations

import json

import pytest
from jsonschema.validators import validator_for

from holon.runner.artifacts import schema_error
from holon.skills.catalog import PROMPT_FILE, Skill, default_catalog
from holon.skills.prompt import render_prompt

SHIPPED = {
    "github-context",
    "github-issue-solve",
    "github-review",
    "github-pr-fix",
    "github-publish",
}
AGENT = ["github-issue-solve", "github-review", "github-pr-fix"]


def _skill(name: str) -> Skill:
    skill = default_catalog().get(name)
    assert skill is not None
    assert skill.directory is not None
    return skill


def _schema(name: str, artifact: str) -> dict[str, object]:
    skill = _skill(name)
    [declared] = [a for a in skill.artifacts if a.path == artifact]
    assert declared.schema_ is not None
    assert skill.directory is not None
    data: dict[str, object] = json.loads((skill.directory / declared.schema_).read_text())
    return data


def test_the_five_skills_are_shipped_with_where_they_run() -> None:
    catalog = default_catalog()
    assert catalog.names() == SHIPPED
    runs = {name: _skill(name).runs for name in SHIPPED}
    assert runs == {
        "github-context": "host",
        "github-publish": "host",
        "github-issue-solve": "agent",
        "github-review": "agent",
        "github-pr-fix": "agent",
    }
    solve = _skill("github-issue-solve")
    assert (solve.requires.change, solve.requires.verification) == (True, True)
    fix = _skill("github-pr-fix")
    assert (fix.requires.change, fix.requires.verification) == (False, True)
    assert _skill("github-publish").permissions["contents"] == "write"
    assert set(_skill("github-context").permissions.values()) == {"read"}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_every_schema_is_a_valid_json_schema(name: str) -> None:
    skill = _skill(name)
    assert skill.directory is not None
    for artifact in skill.artifacts:
        if artifact.schema_ is not None:
            schema = json.loads((skill.directory / artifact.schema_).read_text())
            validator_for(schema).check_schema(schema)  # raises SchemaError when invalid
            assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("name", AGENT)
def test_agent_skills_have_instructions_that_render_in_the_sandbox(name: str) -> None:
    skill = _skill(name)
    assert skill.directory is not None
    template = (skill.directory / PROMPT_FILE).read_text()
    inputs = {"issue": "42", "pull_request": "7", "head_sha": "a" * 40}
    text = render_prompt(
        template, inputs=inputs, goal="Fix the login loop", skill=name, source=PROMPT_FILE
    )
    assert f"# Skill: {name}" in text
    assert "Fix the login loop" in text
    assert "{{" not in text
    assert "{%" not in text
    assert "needs_human" in text  # every skill says when to ask
    for artifact in skill.artifacts:
        assert artifact.path in text  # and names every artifact it must write
    # Without the optional inputs the template still renders (StrictUndefined would say not).
    bare = render_prompt(template, inputs={}, goal="g", skill=name, source=PROMPT_FILE)
    assert "described in the context" in bare


def test_host_skills_have_no_instructions() -> None:
    for name in ("github-context", "github-publish"):
        directory = _skill(name).directory
        assert directory is not None
        assert not (directory / PROMPT_FILE).exists()


def test_the_review_schema_holds_the_issues_shape() -> None:
    schema = _schema("github-review", "review.json")
    finding = {"path": "a.py", "line": 3, "severity": "warn", "message": "m", "suggestion": ""}
    assert schema_error([finding], schema) is None
    assert schema_error([], schema) is None
    assert "/0/line" in (schema_error([{**finding, "line": 0}], schema) or "")
    assert "/0/severity" in (schema_error([{**finding, "severity": "warning"}], schema) or "")
    assert schema_error([finding] * 51, schema) is not None
    assert schema_error({"comments": []}, schema) is not None


def test_the_pr_fix_schema_holds_the_issues_shape() -> None:
    schema = _schema("github-pr-fix", "pr-fix.json")
    doc = {
        "review_replies": [{"comment_id": 5, "status": "need-info", "message": "Which one?"}],
        "checks": [{"name": "test", "status": "flaky", "message": "network timeout"}],
        "verification": [{"command": "pytest -q", "exit_code": 0}],
    }
    assert schema_error(doc, schema) is None
    bad_status = {**doc, "review_replies": [{**doc["review_replies"][0], "status": "done"}]}
    assert "/review_replies/0/status" in (schema_error(bad_status, schema) or "")
    bad_id = {**doc, "review_replies": [{**doc["review_replies"][0], "comment_id": "5"}]}
    assert schema_error(bad_id, schema) is not None
    assert schema_error({"review_replies": []}, schema) is not None  # checks, verification


def test_the_publisher_reads_what_the_schemas_accept() -> None:
    # The skill's schema and the publisher's reader agree on the same documents.
    from holon.github.publish_replies import read_replies
    from holon.github.publish_review import read_review

    finding = {"path": "a.py", "line": 3, "severity": "error", "message": "m", "suggestion": "s"}
    assert schema_error([finding], _schema("github-review", "review.json")) is None
    assert read_review(json.dumps([finding]).encode()).event == "REQUEST_CHANGES"
    doc = {
        "review_replies": [{"comment_id": 5, "status": "fixed", "message": "done"}],
        "checks": [],
        "verification": [{"command": "make test", "exit_code": 0}],
    }
    assert schema_error(doc, _schema("github-pr-fix", "pr-fix.json")) is None
    assert read_replies(json.dumps(doc).encode()).review_replies[0].status == "fixed"


def test_the_context_manifest_schema_holds_its_fields() -> None:
    schema = _schema("github-context", "manifest.json")
    manifest = {
        "subject": {"kind": "pull_request", "number": 12},
        "repo": "octo/app",
        "trigger": {"kind": "comment", "id": 1234, "author": "alice"},
        "present": [{"name": "diff", "path": "diff.patch", "bytes": 10, "source": "payload"}],
        "missing": [{"name": "logs", "reason": "no token"}],
    }
    assert schema_error(manifest, schema) is None
    bad = {**manifest, "present": [{**manifest["present"][0], "source": "cache"}]}  # type: ignore[dict-item]
    assert "/present/0/source" in (schema_error(bad, schema) or "")


@pytest.mark.parametrize(
    "template",
    [
        "{{ ''.__class__.__mro__ }}",
        "{{ inputs.__class__.__base__.__subclasses__() }}",
        "{{ goal.__init__.__globals__ }}",
        "{{ cycler.__init__.__globals__.os }}",
        "{% set _ = inputs.update({'x': 1}) %}",
        "{{ '{0.__class__}'.format(goal) }}",
    ],
)
def test_a_template_escaping_the_sandbox_is_refused(template: str) -> None:
    from holon.errors import InvalidInput

    with pytest.raises(InvalidInput, match=r"^x/prompt\.md\.j2: refused by the template sandbox"):
        render_prompt(template, inputs={"a": "1"}, goal="g", skill="s", source="x/prompt.md.j2")


@pytest.mark.parametrize(
    ("template", "says"),
    [
        ("{{ missing }}", "'missing' is undefined"),
        ("{% if %}", "syntax error at line 1"),
        ("{% for i in range(1000000) %}{% endfor %}", "cannot render"),
        ("{{ 1 / 0 }}", "ZeroDivisionError"),
        ("{% for i in range(99999) %}{{ 'x' * 9 }}{% endfor %}", "more than"),
    ],
)
def test_a_broken_template_is_one_line(template: str, says: str) -> None:
    from holon.errors import InvalidInput

    with pytest.raises(InvalidInput, match=r"^t: ") as caught:
        render_prompt(template, inputs={}, goal="g", skill="s", source="t")
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_skill_docs_name_every_artifact() -> None:
    for name in SHIPPED:
        skill = _skill(name)
        assert skill.directory is not None
        body = (skill.directory / "SKILL.md").read_text()
        for artifact in skill.artifacts:
            assert artifact.path in body.split("---", 2)[2]
