"""`settings.publish` in a policy file: strict, each mistake one line naming its place, a branch
template refused (never repaired) unless every branch it renders is one Holon pushes to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from holon.cli.main import main
from holon.controller.policy import load_policy, parse_policy
from holon.controller.publish_settings import PublishSettings
from holon.errors import InvalidInput
from holon.github.publish import PublishPolicy


def _publish(body: str) -> str:
    """A policy whose settings.publish is `body` (lines indented under it): line 4 onward."""
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    return f"version: 1\nsettings:\n  publish:\n{lines}"


def _error(text: str) -> str:
    with pytest.raises(InvalidInput) as caught:
        parse_policy(text)
    message = str(caught.value)
    assert "\n" not in message
    assert "\r" not in message
    return message


def test_the_built_in_policy_spells_out_publishings_defaults() -> None:
    path = Path(__file__).resolve().parents[2] / "holon/controller/default_policy.yaml"
    written = yaml.safe_load(path.read_text())["settings"]["publish"]
    assert set(written) == set(PublishSettings.model_fields)  # in the file, not only a default
    assert load_policy(None).settings.publish == PublishSettings()


def test_the_settings_mirror_publish_policy_knob_for_knob() -> None:
    # `workflow` is the edge's (the marker's workflow name), not the policy file's; so are
    # `link_domains` (settings.link_domains with the repository's own hosts added).
    policy = PublishPolicy.model_fields
    assert set(PublishSettings.model_fields) == set(policy) - {"workflow", "link_domains"}
    for name, field in PublishSettings.model_fields.items():
        assert (field.default, field.metadata) == (policy[name].default, policy[name].metadata)
        assert field.annotation == policy[name].annotation


def test_every_knob_is_read() -> None:
    text = _publish(
        'branch_template: "bots/holon/{number}-{kind}"\n'
        "allow_workflow_changes: true\n"
        "co_author: none\n"
        "link: refs\n"
        "draft: false\n"
        "max_files: 12\n"
        "max_patch_bytes: 1m\n"
        "max_bytes: 2048"
    )
    publish = parse_policy(text).settings.publish
    assert publish == PublishSettings(
        branch_template="bots/holon/{number}-{kind}",
        allow_workflow_changes=True,
        co_author="none",
        link="refs",
        draft=False,
        max_files=12,
        max_patch_bytes=1024 * 1024,
        max_bytes=2048,
    )


@pytest.mark.parametrize(
    "template",
    ["{number}", "holon/{kind}-{number}", "Holon_fix/{kind}/n{number}.x", "a.b/{number}"],
)
def test_a_plain_template_is_taken(template: str) -> None:
    text = _publish(f"branch_template: {json.dumps(template)}")
    assert parse_policy(text).settings.publish.branch_template == template


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("holon/$(id)-{number}", "renders 'holon/$(id)-1'"),
        ("holon/`id`-{number}", "may hold only letters"),
        ("holon/{kind};rm -rf ~-{number}", "may hold only letters"),
        ("holon/{kind}|sh-{number}", "may hold only letters"),
        ("holon/{kind}\n-{number}", "renders 'holon/issue\\n-1'"),
        ("holon/{kind}\r{number}", "may hold only letters"),
        ("holon/{kind} {number}", "may hold only letters"),
        ("holon/{kind}..{number}", "may not hold `..`"),
        ("../{number}", "may not hold `..`"),
        ("-rf/{number}", "may not start with `-`"),
        ("/holon/{number}", "may not start or end with `/`"),
        ("holon//{number}", "hold `//`"),
        ("holon/{number}/", "may not start or end with `/`"),
        ("holon/{number}.", "may not end with `.`"),
        ("holon/x.lock/{number}", "end with `.lock`"),
        ("holon/{number}.lock", "end with `.lock`"),
        ("holon/.{number}", "may start with `.`"),
        ("holon/@{number}", "may hold only letters"),
        ("héllo/{number}", "may hold only letters"),
        ("holon/{kind}-{number}" + "x" * 200, "at most 200 characters"),
        ("holon/" + "x" * 175 + "{kind}-{number}", "it must have 1 to 200 characters"),
        ("holon/{kind.__class__}-{number}", "unknown placeholder '{kind.__class__}'"),
        ("holon/{number!r}", "unknown placeholder '{number!r}'"),
        ("holon/{0}-{number}", "unknown placeholder '{0}'"),
        ("holon/{a\nb}-{number}", "unknown placeholder '{a\\nb}'"),
        ("holon/{{number}}", "no placeholder"),
        ("holon/{number", "no placeholder"),
        ("holon/{kind}", "must hold {number}"),
        ("", "must hold {number}"),
    ],
)
def test_a_hostile_branch_template_is_refused_in_one_line(template: str, message: str) -> None:
    error = _error(_publish(f"branch_template: {json.dumps(template)}"))
    assert error.startswith("policy.yaml line 4: settings.publish.branch_template: ")
    assert message in error


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        ("draft: yes", "draft", "a valid boolean"),  # YAML 1.1's yes is a string here
        ("draft: 1", "draft", "a valid boolean"),
        ('allow_workflow_changes: "true"', "allow_workflow_changes", "a valid boolean"),
        ("co_author: bob", "co_author", "'none' or 'actor'"),
        ("link: closes", "link", "'fixes' or 'refs'"),
        ('max_files: "300"', "max_files", "a valid integer"),
        ("max_files: 0", "max_files", "greater than or equal to 1"),
        ("max_files: 3001", "max_files", "less than or equal to 3000"),
        ("max_files: 1.5", "max_files", "a valid integer"),
        ("max_patch_bytes: 101m", "max_patch_bytes", "less than or equal to 104857600"),
        ("max_patch_bytes: lots", "max_patch_bytes", "invalid size 'lots'"),
        ("max_patch_bytes: true", "max_patch_bytes", "expected a size"),
        ("max_bytes: 0", "max_bytes", "greater than or equal to 1"),
        ("max_bytes: 1g", "max_bytes", "less than or equal to 524288000"),
        ("branch_template: 7", "branch_template", "a valid string"),
        ("workflow: other", "workflow", "Extra inputs are not permitted"),
        ("max_file: 3", "max_file", "Extra inputs are not permitted"),
    ],
)
def test_a_bad_value_is_one_line_naming_its_place(body: str, where: str, message: str) -> None:
    error = _error(_publish(body))
    assert error.startswith(f"policy.yaml line 4: settings.publish.{where}: ")
    assert message in error


def test_publish_must_be_a_mapping() -> None:
    error = _error("version: 1\nsettings:\n  publish: [draft]\n")
    assert error.startswith("policy.yaml line 3: settings.publish: ")


def test_serve_refuses_a_hostile_template_with_exit_64_before_touching_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(_publish('branch_template: "holon/$(touch pwned)-{number}\\nmain"'))
    state = tmp_path / "s"
    code = main(["serve", "--state-dir", str(state), "--policy", str(policy), "--once"])
    assert code == 64
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"holon: error: {policy} line 4: settings.publish.branch_template: ")
    assert not state.exists()
    assert not (tmp_path / "pwned").exists()
