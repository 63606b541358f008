"""The loopback GitHub's checks, statuses, git data, contents, dispatches and permissions."""

from __future__ import annotations

import base64
import binascii

from tests.support.github_fake.request import Reply, Request, handles
from tests.support.github_fake.state import Missing, Refused


@handles("repos/get")
def _repo(req: Request) -> Reply:
    body = req.render.template("repos/get", req.repo)
    return 200, {**body, "url": req.render.repo_url(req.repo), "default_branch": "main"}


@handles("repos/get-branch-rules")
def _branch_rules(req: Request) -> Reply:
    return 200, list(req.repo.rules.get(req.params["branch"], []))


@handles("rate-limit/get")
def _rate_limit(req: Request) -> Reply:
    return 200, req.render.template("rate-limit/get")


@handles("checks/create", "checks/update", "checks/get")
def _check_run(req: Request) -> Reply:
    repo = req.repo
    if "check_run_id" not in req.params:
        run = {
            "id": repo.next_id(),
            "name": req.field("name"),
            "head_sha": req.field("head_sha"),
            "status": "queued",
            "conclusion": None,
        }
        if repo.check_app is not None:
            example = req.render.template("checks/get", repo).get("app") or {}
            run["app"] = {**example, "slug": repo.check_app}
        repo.check_runs[run["id"]] = run
    else:
        found = repo.check_runs.get(int(req.params["check_run_id"]))
        if found is None:
            raise Missing
        run = found
    if isinstance(req.json, dict):
        run.update({k: v for k, v in req.json.items() if k not in ("head_sha", "id")})
        if run.get("conclusion"):
            run["status"] = "completed"
    return (201 if "check_run_id" not in req.params else 200), req.render.check_run(repo, run)


@handles("checks/list-for-ref")
def _check_runs(req: Request) -> Reply:
    repo = req.repo
    sha = repo.resolve(req.params["ref"])
    name = req.arg("check_name")
    runs = [
        r for r in repo.check_runs.values() if r["head_sha"] == sha and name in (None, r["name"])
    ]
    return 200, {
        "total_count": len(runs),
        "check_runs": [req.render.check_run(repo, r) for r in runs],
    }


@handles(
    "repos/create-commit-status",
    "repos/list-commit-statuses-for-ref",
    "repos/get-combined-status-for-ref",
)
def _statuses(req: Request) -> Reply:
    repo = req.repo
    if req.json is not None:
        status = {
            "id": repo.next_id(),
            "sha": req.params["sha"],
            "state": req.field("state"),
            "context": req.json.get("context") or "default",
            "creator": req.login,
            "description": req.json.get("description"),
            "target_url": req.json.get("target_url"),
        }
        repo.statuses.append(status)
        return 201, req.render.status(repo, status)
    sha = repo.resolve(req.params["ref"])
    statuses = [req.render.status(repo, s) for s in reversed(repo.statuses) if s["sha"] == sha]
    if req.operation == "repos/list-commit-statuses-for-ref":
        return 200, statuses
    latest = list({s["context"]: s for s in reversed(statuses)}.values())
    states = {s["state"] for s in latest}
    state = next((s for s in ("failure", "error", "pending") if s in states), "success")
    body = req.render.template("repos/get-combined-status-for-ref", repo)
    body.update(
        state=state if latest else "pending", statuses=latest, sha=sha, total_count=len(latest)
    )
    return 200, body


@handles("repos/get-collaborator-permission-level")
def _permission(req: Request) -> Reply:
    login = req.params["username"]
    permission = req.repo.permissions.get(login, "none")
    body = req.render.template("repos/get-collaborator-permission-level", req.repo)
    return 200, {
        **body,
        "permission": permission,
        "role_name": permission,
        "user": req.render.user(login),
    }


@handles("git/get-ref", "git/create-ref", "git/update-ref")
def _ref(req: Request) -> Reply:
    repo = req.repo
    if req.operation == "git/create-ref":
        name = str(req.field("ref"))
        if not name.startswith("refs/") or name.count("/") < 2:
            raise Refused(422, "Reference name is not valid")
        if name.removeprefix("refs/") in repo.refs:
            raise Refused(422, "Reference already exists")
        sha = str(req.field("sha"))
        repo.get(sha, "commit")
        repo.refs[name.removeprefix("refs/")] = sha
        return 201, req.render.ref(repo, name.removeprefix("refs/"))
    name = req.params["ref"].removeprefix("refs/")
    if name not in repo.refs:
        raise Missing
    if req.operation == "git/update-ref":
        sha = str(req.field("sha"))
        repo.get(sha, "commit")
        if not req.json.get("force") and not repo.is_ancestor(repo.refs[name], sha):
            raise Refused(422, "Update is not a fast forward")
        if name.startswith("heads/"):
            repo.move_branch(name.removeprefix("heads/"), sha)  # a pull request's head moves
        else:
            repo.refs[name] = sha
    return 200, req.render.ref(repo, name)


@handles(
    "git/create-blob",
    "git/get-blob",
    "git/create-tree",
    "git/get-tree",
    "git/create-commit",
    "git/get-commit",
)
def _git_object(req: Request) -> Reply:
    repo = req.repo
    kind = req.operation.rsplit("-", 1)[1]
    if req.operation.startswith("git/get-"):
        sha = req.params.get("file_sha") or req.params.get("tree_sha") or req.params["commit_sha"]
        repo.get(sha, kind)
        return 200, req.render.git_object(repo, sha)
    if kind == "blob":
        content = str(req.field("content"))
        encoded = req.json.get("encoding") == "base64"
        try:
            data = base64.b64decode(content, validate=True) if encoded else content.encode()
        except binascii.Error:
            raise Refused(422, "Invalid base64") from None
        sha = repo.blob(data)
    elif kind == "tree":
        base = req.json.get("base_tree")
        entries = dict(repo.get(base, "tree")["entries"]) if base else {}
        for entry in req.field("tree"):
            if entry.get("sha", "") is None:
                entries.pop(entry["path"], None)
                continue
            sha = entry.get("sha") or repo.blob(str(entry.get("content", "")).encode())
            if (
                entry.get("type", "blob") == "blob"
                and repo.objects.get(sha, {}).get("type") != "blob"
            ):
                raise Refused(422, f"tree.sha {sha} is not a valid blob")
            entries[entry["path"]] = {
                "mode": entry.get("mode", "100644"),
                "type": entry.get("type", "blob"),
                "sha": sha,
            }
        sha = repo.tree(entries)
    else:
        sha = repo.commit(
            str(req.field("message")), str(req.field("tree")), list(req.json.get("parents") or [])
        )
    return 201, req.render.git_object(repo, sha)


@handles("repos/get-content", "repos/create-or-update-file-contents")
def _content(req: Request) -> Reply:
    repo, path = req.repo, req.params["path"]
    if req.json is None:
        entry = repo.files(req.arg("ref") or repo.default_branch).get(path)
        if entry is None:
            raise Missing
        return 200, req.render.content(repo, path, entry["sha"])
    branch = req.json.get("branch") or repo.default_branch
    current = repo.files(branch).get(path)
    if current is not None and req.json.get("sha") != current["sha"]:
        raise Refused(
            409 if req.json.get("sha") else 422, f"{path} does not match {req.json.get('sha')}"
        )
    try:
        data = base64.b64decode(str(req.field("content")), validate=True)
    except binascii.Error:
        raise Refused(422, "content is not valid Base64") from None
    commit = repo.put_file(path, data, branch, str(req.field("message")))
    sha = repo.files(commit)[path]["sha"]
    body = {
        "content": req.render.content(repo, path, sha),
        "commit": req.render.git_object(repo, commit),
    }
    return (200 if current else 201), body


@handles("actions/create-workflow-dispatch", "repos/create-dispatch-event")
def _dispatch(req: Request) -> Reply:
    if req.operation == "repos/create-dispatch-event":
        req.field("event_type")
    else:
        req.repo.resolve(str(req.field("ref")))
    req.repo.dispatches.append({"operation": req.operation, **req.params, **req.json})
    return 204, None
