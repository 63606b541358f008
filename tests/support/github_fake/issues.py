"""The loopback GitHub's issues, comments, labels and pull requests."""

from __future__ import annotations

from tests.support.github_fake.request import Reply, Request, handles
from tests.support.github_fake.state import Issue, Missing, Refused


def _issue(req: Request, pull: bool = False) -> Issue:
    number = req.params.get("issue_number") or req.params["pull_number"]
    return req.repo.issue(number, pull=pull)


@handles("issues/get", "issues/update", "issues/create")
def _issue_one(req: Request) -> Reply:
    if "issue_number" not in req.params:
        issue = req.repo.add_issue(req.field("title"), req.json.get("body") or "", req.login)
        return 201, req.render.issue(req.repo, issue)
    issue = _issue(req)
    if isinstance(req.json, dict):
        for key in ("title", "body", "state"):
            if key in req.json:
                setattr(issue, key, req.json[key])
        if "labels" in req.json:
            issue.labels = [str(x) for x in req.json["labels"]]
    return 200, req.render.issue(req.repo, issue)


@handles("issues/list-for-repo")
def _issues(req: Request) -> Reply:
    wanted = req.arg("state", "open")
    found = [i for i in req.repo.issues.values() if wanted in ("all", i.state)]
    return 200, [req.render.issue(req.repo, i) for i in found]


@handles("issues/list-comments", "issues/create-comment", "issues/list-comments-for-repo")
def _comments(req: Request) -> Reply:
    repo = req.repo
    if req.json is not None:
        comment = repo.add_comment(_issue(req).number, str(req.field("body")), req.login)
        return 201, req.render.comment(repo, comment)
    number = _issue(req).number if "issue_number" in req.params else None
    since = req.arg("since", "")
    found = [c for c in repo.comments.values() if number in (None, c.issue)]
    return 200, [req.render.comment(repo, c) for c in found if c.updated_at >= (since or "")]


@handles("issues/get-comment", "issues/update-comment", "issues/delete-comment")
def _comment(req: Request) -> Reply:
    comment = req.repo.comments.get(int(req.params["comment_id"]))
    if comment is None:
        raise Missing
    if req.operation == "issues/delete-comment":
        del req.repo.comments[comment.id]
        return 204, None
    if req.json is not None:
        comment.body = str(req.field("body"))
    return 200, req.render.comment(req.repo, comment)


@handles("issues/list-labels-on-issue", "issues/add-labels", "issues/remove-label")
def _labels(req: Request) -> Reply:
    issue = _issue(req)
    if "name" in req.params:
        if req.params["name"] not in issue.labels:
            raise Refused(404, "Label does not exist")
        issue.labels.remove(req.params["name"])
    elif req.json is not None:
        # GitHub takes {"labels": [...]} or the bare list, of names or {"name": ...} objects.
        added = req.json if isinstance(req.json, list) else req.field("labels")
        names = [x if isinstance(x, str) else x.get("name") for x in added]
        issue.labels += [str(n) for n in names if n not in issue.labels]
    return 200, [req.render.label(req.repo, name) for name in issue.labels]


@handles("pulls/get", "pulls/update")
def _pull(req: Request) -> Reply:
    issue = _issue(req, pull=True)
    if isinstance(req.json, dict):
        for key in ("title", "body", "state"):
            if key in req.json:
                setattr(issue, key, req.json[key])
    return 200, req.render.pull(req.repo, issue)


@handles("pulls/list", "pulls/create")
def _pulls(req: Request) -> Reply:
    repo = req.repo
    if req.json is not None:
        head, base = str(req.field("head")), str(req.field("base"))
        if f"heads/{head}" not in repo.refs:
            invalid = {"resource": "PullRequest", "field": "head", "code": "invalid"}
            raise Refused(422, "Validation Failed", [invalid])
        # GitHub keeps one open pull request per head and base: a second is refused.
        if any(
            i.pull
            and i.state == "open"
            and not i.pull.fork
            and (i.pull.head, i.pull.base) == (head, base)
            for i in repo.issues.values()
        ):
            exists = f"A pull request already exists for {repo.owner}:{head}."
            custom = {"resource": "PullRequest", "code": "custom", "message": exists}
            raise Refused(422, "Validation Failed", [custom])
        issue = repo.add_pull(
            str(req.field("title")), head, base, user=req.login, body=req.json.get("body") or ""
        )
        assert issue.pull is not None
        issue.pull.draft = bool(req.json.get("draft"))
        return 201, req.render.pull(repo, issue)
    wanted, listed = req.arg("state", "open"), req.arg("head")
    found = [i for i in repo.issues.values() if i.pull and wanted in ("all", i.state)]
    if listed:
        found = [i for i in found if i.pull and f"{repo.owner}:{i.pull.head}" == listed]
    return 200, [req.render.pull(repo, i) for i in found]


@handles("pulls/merge")
def _merge(req: Request) -> Reply:
    repo, issue = req.repo, _issue(req, pull=True)
    assert issue.pull is not None
    if issue.pull.merged or issue.state != "open":
        raise Refused(405, "Pull Request is not mergeable")
    expected = (req.json or {}).get("sha")
    if expected and expected != issue.pull.head_sha:
        raise Refused(409, "Head branch was modified. Review and try the merge again.")
    base = f"heads/{issue.pull.base}"
    tree = repo.get(issue.pull.head_sha, "commit")["tree"]
    sha = repo.commit(
        f"Merge pull request #{issue.number}", tree, [repo.refs[base], issue.pull.head_sha]
    )
    repo.refs[base] = sha
    issue.pull.merged, issue.pull.merge_commit_sha, issue.state = True, sha, "closed"
    return 200, {"sha": sha, "merged": True, "message": "Pull Request successfully merged"}


@handles("pulls/list-reviews", "pulls/create-review")
def _reviews(req: Request) -> Reply:
    issue = _issue(req, pull=True)
    assert issue.pull is not None
    if req.json is not None:
        event = req.json.get("event") or "PENDING"
        state = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED"}.get(
            event, "COMMENTED"
        )
        review = {
            "id": req.repo.next_id(),
            "user": req.login,
            "body": req.json.get("body") or "",
            "state": state if event != "PENDING" else "PENDING",
            "commit_id": issue.pull.head_sha,
        }
        issue.pull.reviews.append(review)
        return 200, req.render.review(req.repo, issue.number, review)
    return 200, [req.render.review(req.repo, issue.number, r) for r in issue.pull.reviews]


@handles("pulls/get-review")
def _review(req: Request) -> Reply:
    issue = _issue(req, pull=True)
    assert issue.pull is not None
    found = [r for r in issue.pull.reviews if str(r["id"]) == req.params["review_id"]]
    if not found:
        raise Missing
    return 200, req.render.review(req.repo, issue.number, found[0])


@handles("pulls/list-requested-reviewers", "pulls/request-reviewers")
def _reviewers(req: Request) -> Reply:
    issue = _issue(req, pull=True)
    assert issue.pull is not None
    if req.json is None:
        users = [req.render.user(login) for login in issue.pull.requested_reviewers]
        return 200, {"users": users, "teams": []}
    for login in req.json.get("reviewers") or []:
        if login not in issue.pull.requested_reviewers:
            issue.pull.requested_reviewers.append(str(login))
    return 201, req.render.pull(req.repo, issue)


@handles("pulls/list-commits")
def _pull_commits(req: Request) -> Reply:
    # The pull request's head commit alone: the fake keeps no per-PR commit range.
    issue = _issue(req, pull=True)
    assert issue.pull is not None
    body = req.render.template("pulls/list-commits", req.repo)
    return 200, [{**body, "sha": issue.pull.head_sha}]


@handles("pulls/list-files")
def _pull_files(req: Request) -> Reply:
    # The fake does not diff trees: a pull request lists no changed files here.
    _issue(req, pull=True)
    return 200, []
