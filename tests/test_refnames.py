"""holon.refnames against a table of names, each checked with a real `git check-ref-format
--branch` too, so the table cannot drift from git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from holon.refnames import branch_problem, refname_problem

GIT_ACCEPTS = [
    "main",
    "holon/issue-1",
    "a/b/c",
    "x-",
    "a.b",
    "a/-b",
    "a.lo",
    "lock",
    "refs/heads/x",
    "HEAD/x",
    "FETCH_HEAD",
    "a@b",
    "@a",
    "a{b}",
    "é",
    "fix;rm",
    "a$b",
    "a`b",
    "a|b",
    "a./b",
]
GIT_REFUSES = [
    "",
    "HEAD",
    "-x",
    "a..b",
    "a/..",
    "a/./b",
    ".a",
    "a/.b",
    "a.lock",
    "a.lock/b",
    "a/b.lock",
    ".lock",
    "a.",
    "a/",
    "/a",
    "a//b",
    "a b",
    "a\tb",
    "a\nb",
    "a\x7fb",
    "a\x00b",
    "a~b",
    "a^b",
    "a:b",
    "a?b",
    "a*b",
    "a[b",
    "a\\b",
    "a@{b",
    "@{u}",
]
# Holon is stricter than git here: `@` alone names HEAD in revisions.
HOLON_ONLY_REFUSES = ["@"]


def _git_accepts(name: str, cwd: Path) -> bool:
    # Outside any repository, so `--branch` expands nothing (`@{-1}`) from this checkout.
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(cwd.parent)}
    done = subprocess.run(
        ["git", "check-ref-format", "--branch", name], cwd=cwd, env=env, capture_output=True
    )
    return done.returncode == 0


def test_the_table_agrees_with_git(tmp_path: Path) -> None:
    # argv cannot carry NUL: git is asked about the others only.
    disagree = [n for n in GIT_ACCEPTS if not _git_accepts(n, tmp_path)]
    disagree += [n for n in GIT_REFUSES if "\x00" not in n and _git_accepts(n, tmp_path)]
    disagree += [n for n in HOLON_ONLY_REFUSES if not _git_accepts(n, tmp_path)]
    assert disagree == []


@pytest.mark.parametrize("name", GIT_ACCEPTS)
def test_a_name_git_accepts_is_accepted(name: str) -> None:
    assert refname_problem(name) is None


@pytest.mark.parametrize("name", GIT_REFUSES + HOLON_ONLY_REFUSES)
def test_a_name_git_refuses_is_refused_in_one_line(name: str) -> None:
    problem = refname_problem(name)
    assert problem is not None
    assert "\n" not in problem


@pytest.mark.parametrize(
    ("name", "fine"),
    [
        ("holon/issue-12", True),
        ("Holon_x/fix.1", True),
        ("fix;rm", False),  # git takes it; Holon pushes only plain names
        ("a$b", False),
        ("é", False),
        ("a" * 201, False),
        ("a" * 200, True),
        ("a..b", False),  # within the alphabet, refused by git's rules
        ("x.lock", False),
    ],
)
def test_a_branch_holon_pushes_to_is_plain_and_git_valid(name: str, fine: bool) -> None:
    assert (branch_problem(name) is None) == fine
