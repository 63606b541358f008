"""Hostile corpus: what an agent's diff.patch, a pull request's branch name or a policy can try
against publishing (holon/github/publish*.py).

The patch is the agent's own (it may write diff.patch itself), so it is read as hostile: a path
escaping the repository (`../`, absolute, `.git` in any spelling, a backslash, a control
character), a symbolic link or a submodule, a file put below a link or where a directory is,
a second patch smuggled after a hunk, names that disagree, a path changed twice. Each is
refused before any write (most before any call), with the reason. Branch names from a pull
request or a template are refused, never repaired. Git runs without a shell, and the token
never reaches its argv or environment.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import github
import pytest
from pydantic import ValidationError

from holon.github.client import GitHubConfig, make_client
from holon.github.errors import PublishError
from holon.github.publish import PublishPolicy, publish_change
from holon.github.publish_apply import Entry, apply_patch
from holon.github.publish_patch import FileChange, parse_patch
from holon.github.publish_request import PublishRequest
from tests.github.publish_support import local_base, runner_patch, seed, write
from tests.support.github_fake import LoopbackGitHub
from tests.support.github_fake.state import git_sha

TOKEN = "ghs_" + "f" * 36
REPO = "octocat/Hello-World"
LOGIN = "github-actions[bot]"
BASE = {"f.txt": b"a\n", "docs/readme.md": b"docs\n"}
WRITES = ("POST", "PATCH", "PUT", "DELETE")
F_SHA = git_sha("blob", b"a\n")


def _new(path: str, mode: str = "100644", body: bytes = b"+x\n") -> bytes:
    return (
        f"diff --git a/{path} b/{path}\nnew file mode {mode}\n--- /dev/null\n+++ b/{path}\n"
        "@@ -0,0 +1 @@\n"
    ).encode() + body


def _quoted_new(quoted: str) -> bytes:
    return (
        f'diff --git "a/{quoted}" "b/{quoted}"\nnew file mode 100644\n--- /dev/null\n'
        f'+++ "b/{quoted}"\n@@ -0,0 +1 @@\n+x\n'
    ).encode()


_EDIT = f"diff --git a/f.txt b/f.txt\nindex {F_SHA}..{'1' * 40} 100644\n--- a/f.txt\n+++ b/f.txt\n"
_EDIT += "@@ -1 +1 @@\n-a\n+b\n"

PATCHES: list[tuple[str, bytes, str]] = [
    ("parent directory", _new("../outside.txt"), "unsafe-path"),
    ("parent inside", _new("docs/../../outside.txt"), "unsafe-path"),
    ("absolute", _new("/etc/cron.d/x"), "unsafe-path"),
    ("git dir", _new(".git/hooks/post-checkout"), "unsafe-path"),
    ("git dir upper case", _new(".GIT/config"), "unsafe-path"),
    ("git dir trailing dot", _new(".git./config"), "unsafe-path"),
    ("git dir short name", _new("GIT~1/config"), "unsafe-path"),
    ("nested git dir", _new("vendor/.git/config"), "unsafe-path"),
    ("backslash", _new("..\\..\\outside.txt"), "unsafe-path"),
    ("newline in a name", _quoted_new("a\\nb.txt"), "unsafe-path"),
    ("escape in a name", _quoted_new("a\\033[31mb.txt"), "unsafe-path"),
    ("not UTF-8", _quoted_new("a\\377.txt"), "unsafe-path"),
    ("empty component", _new("docs//x.txt"), "unsafe-path"),
    (
        "symlink",
        _new("link", "120000", b"+/etc/passwd\n\\ No newline at end of file\n"),
        "unsafe-path",
    ),
    (
        "submodule",
        b"diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..1234567\n"
        b"--- /dev/null\n+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit " + b"1" * 40 + b"\n",
        "unsafe-path",
    ),
    (
        "file made a link",
        b"diff --git a/f.txt b/f.txt\nold mode 100644\nnew mode 120000\n",
        "unsafe-path",
    ),
    ("workflow", _new(".github/workflows/x.yml"), "workflow"),
    (
        "workflow by rename",
        b"diff --git a/f.txt b/.github/workflows/f.yml\nsimilarity index 100%\n"
        b"rename from f.txt\nrename to .github/workflows/f.yml\n",
        "workflow",
    ),
    (
        "smuggled after a hunk",
        _EDIT.encode() + b"--- a/g.txt\n+++ b/g.txt\n@@ -0,0 +1 @@\n+x\n",
        "unreadable",
    ),
    ("preamble", b"--- a/g.txt\n+++ b/g.txt\n@@ -0,0 +1 @@\n+x\n" + _EDIT.encode(), "unreadable"),
    ("hunk longer than said", _EDIT.encode() + b"+c\n", "unreadable"),
    (
        "hunk shorter than said",
        _EDIT.encode().replace(b"@@ -1 +1 @@", b"@@ -1,3 +1,3 @@"),
        "unreadable",
    ),
    ("names disagree", _EDIT.encode().replace(b"+++ b/f.txt", b"+++ b/g.txt"), "unreadable"),
    (
        "two names without a rename",
        b"diff --git a/f.txt b/g.txt\nold mode 100644\nnew mode 100755\n",
        "unreadable",
    ),
    ("same path twice", _EDIT.encode() + _EDIT.encode(), "unreadable"),
    (
        "binary junk",
        b"diff --git a/f.txt b/f.txt\nGIT binary patch\nliteral 3\nnot base85 !\n",
        "unreadable",
    ),
    (
        "binary without data",
        b"diff --git a/f.bin b/f.bin\nindex 1234567..89abcde 100644\n"
        b"Binary files a/f.bin and b/f.bin differ\n",
        "unreadable",
    ),
]


@pytest.fixture
def gh(github_server: LoopbackGitHub) -> Iterator[github.Github]:
    client = make_client(
        GitHubConfig(api_url=github_server.url, token=TOKEN, write_spacing=0.0)  # type: ignore[arg-type]
    )
    yield client
    client.close()


def _request(base: str, **kw: Any) -> PublishRequest:
    values: dict[str, Any] = {
        "repo": REPO,
        "kind": "issue",
        "number": 1,
        "skill": "github-issue-solve",
        "run_id": "r1",
        "base_sha": base,
        "base_branch": "main",
        **kw,
    }
    return PublishRequest.model_validate(values)


@pytest.mark.parametrize(("patch", "reason"), [p[1:] for p in PATCHES], ids=[p[0] for p in PATCHES])
def test_a_hostile_patch_is_refused_before_any_call(
    patch: bytes, reason: str, gh: github.Github, github_server: LoopbackGitHub
) -> None:
    base = seed(github_server.state.repos[REPO], BASE)
    with pytest.raises(PublishError) as caught:
        publish_change(gh, LOGIN, _request(base), patch)
    assert caught.value.reason == reason, caught.value
    assert github_server.calls == []


def test_a_real_symlink_from_the_agents_workspace_is_refused(
    tmp_path: Path, gh: github.Github, github_server: LoopbackGitHub
) -> None:
    def link(ws: Path) -> None:
        (ws / "inside").symlink_to("f.txt")  # even one pointing inside the repository

    patch = runner_patch(tmp_path, BASE, link)
    base = seed(github_server.state.repos[REPO], BASE)
    with pytest.raises(PublishError, match="a symbolic link; Holon publishes regular files only"):
        publish_change(gh, LOGIN, _request(base), patch)
    assert github_server.calls == []


@pytest.mark.parametrize(
    ("base_entries", "path"),
    [
        ({"docs": Entry("120000", git_sha("blob", b"/etc"))}, "docs/x.txt"),
        ({"f.txt": Entry("100644", F_SHA)}, "f.txt/x.txt"),
        ({"dir/a.txt": Entry("100644", F_SHA)}, "dir"),
        ({"sub": Entry("160000", "1" * 40)}, "sub/x.txt"),
    ],
)
def test_a_file_below_a_link_or_in_place_of_a_directory_is_refused(
    base_entries: dict[str, Entry], path: str
) -> None:
    """Git refuses these itself (`beyond a symbolic link`, `both a file and a directory`);
    Holon's own comparison of the result would refuse them too (`_check_nesting`)."""
    patch = _new(path)
    with pytest.raises(PublishError, match=path) as caught:
        apply_patch(patch, parse_patch(patch, 10), base_entries, lambda sha: b"", 10_000)
    assert caught.value.reason in ("does-not-apply", "unsafe-path")


def test_holons_own_nesting_check_refuses_what_git_would_let_through() -> None:
    from holon.github.publish_apply import _check_nesting

    after = {"f.txt": Entry("100644", F_SHA), "f.txt/x": Entry("100644", F_SHA)}
    with pytest.raises(PublishError, match="below a file"):
        _check_nesting(after, {"f.txt/x": after["f.txt/x"]})
    with pytest.raises(PublishError, match="where a directory is"):
        _check_nesting(after, {"f.txt": after["f.txt"]})


def test_if_holons_reading_and_gits_ever_disagree_nothing_is_published(tmp_path: Path) -> None:
    files = {"a.txt": b"a\n", "b.txt": b"b\n"}

    def change(ws: Path) -> None:
        write(ws / "a.txt", "A\n")
        write(ws / "b.txt", "B\n")

    patch = runner_patch(tmp_path, files, change)
    base, blobs = local_base(files)
    # As if Holon had read b.txt's change as a copy to c.txt: git changes b.txt, not c.txt.
    told = [c for c in parse_patch(patch, 10) if c.new_path == "a.txt"]
    told.append(FileChange("b.txt", "c.txt", copy=True))
    with pytest.raises(PublishError, match="differently from how Holon read it") as caught:
        apply_patch(patch, told, base, blobs.__getitem__, 10_000)
    assert caught.value.evidence == ("b.txt", "c.txt")


@pytest.mark.parametrize(
    "template",
    [
        "holon/$(id)-{number}",
        "holon/{kind}\n-{number}",
        "holon/{kind} {number}",
        "../{number}",
        "holon/{kind}..{number}",
        "-rf/{number}",
        "holon/{kind};rm-{number}",
        "holon/x.lock/{number}",
    ],
)
def test_a_branch_template_making_a_bad_name_is_refused_not_repaired(
    template: str, gh: github.Github, github_server: LoopbackGitHub
) -> None:
    base = seed(github_server.state.repos[REPO], BASE)
    policy = PublishPolicy(branch_template=template)
    with pytest.raises(PublishError, match="is refused") as caught:
        publish_change(gh, LOGIN, _request(base), _EDIT.encode(), policy=policy)
    assert caught.value.reason == "bad-input"
    assert github_server.calls == []


@pytest.mark.parametrize("branch", ["fix;rm -rf ~", "fix\nmain", "fix$(id)", "fix`id`", "-f"])
def test_a_pull_requests_branch_with_shell_metacharacters_is_not_pushed_to(
    branch: str, gh: github.Github, github_server: LoopbackGitHub
) -> None:
    repo = github_server.state.repos[REPO]
    head = seed(repo, BASE)
    repo.refs[f"heads/{branch}"] = head
    repo.add_pull("Fix", head=branch)
    fix = _request(head, kind="pull_request", skill="github-pr-fix", base_branch=None)
    with pytest.raises(PublishError, match="is refused") as caught:
        publish_change(gh, LOGIN, fix, _EDIT.encode())
    assert caught.value.reason == "bad-input"
    assert github_server.operations() == ["pulls/get"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("base_branch", "main\nx"),
        ("base_branch", "ma in"),
        ("repo", "octo/../x"),
        ("run_id", "r1; rm"),
        ("base_sha", "HEAD"),
        ("skill", "../x"),
    ],
)
def test_a_request_with_a_bad_name_is_refused(field: str, value: str) -> None:
    with pytest.raises(ValidationError, match=field):
        _request("a" * 40, **{field: value})


def test_git_runs_without_a_shell_and_never_sees_the_token(
    tmp_path: Path,
    gh: github.Github,
    github_server: LoopbackGitHub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[Any, dict[str, Any]]] = []
    real = subprocess.run

    def spy(args: Any, **kw: Any) -> Any:
        seen.append((args, kw))
        return real(args, **kw)

    patch = runner_patch(tmp_path, BASE, lambda ws: write(ws / "f.txt", "b\n"))
    base = seed(github_server.state.repos[REPO], BASE)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)  # even when the environment holds it
    monkeypatch.setattr(subprocess, "run", spy)
    publish_change(gh, LOGIN, _request(base), patch)
    assert seen
    for args, kw in seen:
        assert isinstance(args, list)
        assert not kw.get("shell")
        assert TOKEN not in " ".join(args)
        assert TOKEN not in " ".join(f"{k}={v}" for k, v in (kw.get("env") or {}).items())
