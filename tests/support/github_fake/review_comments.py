"""The loopback GitHub's review comments (line comments on a pull request) and replies."""

from __future__ import annotations

from typing import Any

from tests.support.github_fake.request import Reply, Request, handles
from tests.support.github_fake.state import Missing, Refused


def render(req: Request, number: int, comment: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = req.render.template("pulls/list-review-comments", req.repo)
    url = req.render.repo_url(req.repo)
    body.pop("in_reply_to_id", None)  # GitHub leaves it out of a thread's first comment
    return {
        **body,
        **comment,
        "user": req.render.user(comment["user"]),
        "url": f"{url}/pulls/comments/{comment['id']}",
        "pull_request_url": f"{url}/pulls/{number}",
    }


@handles("pulls/list-review-comments", "pulls/create-reply-for-review-comment")
def _review_comments(req: Request) -> Reply:
    issue = req.repo.issue(req.params["pull_number"], pull=True)
    assert issue.pull is not None
    comments = issue.pull.review_comments
    if req.json is None:
        return 200, [render(req, issue.number, c) for c in comments]
    target = next((c for c in comments if str(c["id"]) == req.params["comment_id"]), None)
    if target is None:
        raise Missing
    if target.get("in_reply_to_id"):
        raise Refused(422, "Replies to replies are not supported")
    reply = {
        "id": req.repo.next_id(),
        "body": str(req.field("body")),
        "user": req.login,
        "in_reply_to_id": target["id"],
        "path": target["path"],
        "line": target.get("line"),
        "commit_id": issue.pull.head_sha,
    }
    comments.append(reply)
    return 201, render(req, issue.number, reply)


@handles("pulls/get-review-comment", "pulls/delete-review-comment")
def _review_comment(req: Request) -> Reply:
    for issue in req.repo.issues.values():
        comments = issue.pull.review_comments if issue.pull is not None else []
        for comment in comments:
            if str(comment["id"]) == req.params["comment_id"]:
                if req.operation == "pulls/delete-review-comment":
                    comments.remove(comment)  # GitHub: 204, no body; a second delete is a 404
                    return 204, None
                return 200, render(req, issue.number, comment)
    raise Missing
