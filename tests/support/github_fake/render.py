"""Response bodies of the loopback GitHub: GitHub's documented example for the operation
(`examples.json`), its URLs pointed at the fake, with the fields of the fake's own object."""

from __future__ import annotations

import base64
import json
from typing import Any

from tests.support.github_fake.routes import example, routes
from tests.support.github_fake.state import Comment, Issue, Repo


class Renderer:
    def __init__(self, base_url: str) -> None:
        self.base = base_url

    def template(self, operation: str, repo: Repo | None = None) -> Any:
        _, body = example(routes().find(operation), self.base)
        if repo is not None:
            text = json.dumps(body).replace("octocat/Hello-World", repo.full_name)
            body = json.loads(text)
        return body[0] if isinstance(body, list) and body else body

    def user(self, login: str) -> dict[str, Any]:
        text = json.dumps(self.template("users/get-by-username")).replace("octocat", login)
        body: dict[str, Any] = json.loads(text)
        return {**body, "login": login, "type": "Bot" if login.endswith("[bot]") else "User"}

    def repo_url(self, repo: Repo) -> str:
        return f"{self.base}/repos/{repo.full_name}"

    def label(self, repo: Repo, name: str) -> dict[str, Any]:
        body = self.template("issues/get-label", repo)
        return {**body, "name": name, "url": f"{self.repo_url(repo)}/labels/{name}"}

    def comment(self, repo: Repo, comment: Comment) -> dict[str, Any]:
        body = self.template("issues/get-comment", repo)
        url = self.repo_url(repo)
        return {
            **body,
            "id": comment.id,
            "body": comment.body,
            "user": self.user(comment.user),
            "url": f"{url}/issues/comments/{comment.id}",
            "issue_url": f"{url}/issues/{comment.issue}",
            "html_url": f"https://github.com/{repo.full_name}/issues/{comment.issue}#issuecomment-{comment.id}",
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
        }

    def issue(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        body: dict[str, Any] = self.template("issues/get", repo)
        url = f"{self.repo_url(repo)}/issues/{issue.number}"
        body.update(
            id=issue.number,
            number=issue.number,
            title=issue.title,
            body=issue.body,
            state=issue.state,
            user=self.user(issue.user),
            url=url,
            comments_url=f"{url}/comments",
            labels_url=f"{url}/labels{{/name}}",
            html_url=f"https://github.com/{repo.full_name}/issues/{issue.number}",
            labels=[self.label(repo, name) for name in issue.labels],
            comments=sum(1 for c in repo.comments.values() if c.issue == issue.number),
            updated_at=issue.updated_at,
        )
        if issue.pull is None:
            body.pop("pull_request", None)
        else:
            body["pull_request"] = {"url": f"{self.repo_url(repo)}/pulls/{issue.number}"}
        return body

    def pull(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        assert issue.pull is not None
        pull = issue.pull
        body: dict[str, Any] = self.template("pulls/get", repo)
        url = f"{self.repo_url(repo)}/pulls/{issue.number}"
        issue_url = f"{self.repo_url(repo)}/issues/{issue.number}"
        body.update(
            id=issue.number,
            number=issue.number,
            title=issue.title,
            body=issue.body,
            state=issue.state,
            user=self.user(issue.user),
            url=url,
            issue_url=issue_url,
            comments_url=f"{issue_url}/comments",
            html_url=f"https://github.com/{repo.full_name}/pull/{issue.number}",
            labels=[self.label(repo, name) for name in issue.labels],
            draft=pull.draft,
            merged=pull.merged,
            # The example's own times would say every pull request ended in 2011.
            merged_at=issue.updated_at if pull.merged else None,
            closed_at=issue.updated_at if issue.state == "closed" else None,
            merge_commit_sha=pull.merge_commit_sha,
            requested_reviewers=[self.user(login) for login in pull.requested_reviewers],
            mergeable=pull.mergeable,
        )
        head_name = pull.fork or repo.full_name
        head_repo = None
        if not pull.fork_deleted:
            head_repo = {
                **body["head"]["repo"],
                "full_name": head_name,
                "name": head_name.split("/")[1],
                "default_branch": repo.default_branch,
            }
        body["head"] = {
            **body["head"],
            "ref": pull.head,
            "sha": pull.head_sha,
            "label": f"{head_name.split('/')[0]}:{pull.head}",
            "repo": head_repo,
        }
        body["base"] = {
            **body["base"],
            "ref": pull.base,
            "sha": repo.resolve(pull.base),
            "label": f"{repo.owner}:{pull.base}",
            "repo": {**body["base"]["repo"], "default_branch": repo.default_branch},
        }
        return body

    def review(self, repo: Repo, number: int, review: dict[str, Any]) -> dict[str, Any]:
        body = self.template("pulls/get-review", repo)
        return {
            **body,
            **review,
            "user": self.user(review["user"]),
            "pull_request_url": f"{self.repo_url(repo)}/pulls/{number}",
        }

    def check_run(self, repo: Repo, run: dict[str, Any]) -> dict[str, Any]:
        body: dict[str, Any] = self.template("checks/get", repo)
        body.update({k: v for k, v in run.items() if k != "output"})
        body["url"] = f"{self.repo_url(repo)}/check-runs/{run['id']}"
        body["output"] = {**body.get("output", {}), **run.get("output", {})}
        return body

    def status(self, repo: Repo, status: dict[str, Any]) -> dict[str, Any]:
        body = self.template("repos/create-commit-status", repo)
        return {**body, **status, "creator": self.user(status["creator"])}

    def ref(self, repo: Repo, name: str) -> dict[str, Any]:
        sha = repo.refs[name]
        return {
            "ref": f"refs/{name}",
            "node_id": "MDM6UmVm",
            "url": f"{self.repo_url(repo)}/git/refs/{name}",
            "object": {
                "type": "commit",
                "sha": sha,
                "url": f"{self.repo_url(repo)}/git/commits/{sha}",
            },
        }

    def git_object(self, repo: Repo, sha: str) -> dict[str, Any]:
        found = repo.objects[sha]
        url = f"{self.repo_url(repo)}/git/{found['type']}s/{sha}"
        if found["type"] == "blob":
            data = base64.b64encode(found["data"]).decode()
            return {
                "sha": sha,
                "node_id": "MDQ6QmxvYg==",
                "size": len(found["data"]),
                "url": url,
                "content": data,
                "encoding": "base64",
            }
        if found["type"] == "tree":
            entries = [
                {
                    "path": path,
                    **entry,
                    "url": f"{self.repo_url(repo)}/git/{entry['type']}s/{entry['sha']}",
                }
                for path, entry in sorted(found["entries"].items())
            ]
            return {"sha": sha, "url": url, "tree": entries, "truncated": False}
        body = self.template("git/get-commit", repo)
        tree = {"sha": found["tree"], "url": f"{self.repo_url(repo)}/git/trees/{found['tree']}"}
        parents = [
            {
                "sha": p,
                "url": f"{self.repo_url(repo)}/git/commits/{p}",
                "html_url": f"https://github.com/{repo.full_name}/commit/{p}",
            }
            for p in found["parents"]
        ]
        return {
            **body,
            "sha": sha,
            "url": url,
            "message": found["message"],
            "tree": tree,
            "parents": parents,
        }

    def content(self, repo: Repo, path: str, sha: str) -> dict[str, Any]:
        data = repo.objects[sha]["data"]
        url = f"{self.repo_url(repo)}/contents/{path}"
        return {
            "type": "file",
            "encoding": "base64",
            "size": len(data),
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "content": base64.b64encode(data).decode(),
            "sha": sha,
            "url": url,
            "git_url": f"{self.repo_url(repo)}/git/blobs/{sha}",
            "html_url": f"https://github.com/{repo.full_name}/blob/main/{path}",
            "download_url": None,
            "_links": {"self": url, "git": None, "html": None},
        }
