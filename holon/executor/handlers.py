"""Effect handlers, one per kind of effect, behind one small protocol.

GitHub effects (comment, label, merge, ...) get their handler with the GitHub edge; until then a
non-dry-run intent of those types fails honestly instead of pretending.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import SecretStr

from holon.executor.result import ActionResult
from holon.intent import ActionIntent

if TYPE_CHECKING:
    from holon.contract.spec import Spec
    from holon.executor.usage import Pricer
    from holon.skills.catalog import SkillCatalog


GITHUB = "https://github.com"


def _env_token() -> str | None:
    return os.environ.get("GITHUB_TOKEN") or None


class Handler(Protocol):
    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult: ...


def result_of(
    intent: ActionIntent, attempt: int, now: datetime, status: str, **fields: Any
) -> ActionResult:
    return ActionResult(
        id=f"{intent.id}:{attempt}",
        intent_id=intent.id,
        type=intent.type,
        subject=intent.target.subject(),
        attempt=attempt,
        status=status,
        at=now,
        **fields,
    )


def describe_effect(intent: ActionIntent) -> dict[str, Any]:
    """The exact effect an intent asks for, as data (what dry-run journals)."""
    return {
        "effect": intent.type,
        "repo": intent.target.repo,
        "target": intent.target.subject(),
        **intent.args,
    }


class DryRunHandler:
    """Journals the effect it would perform; performs nothing."""

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self.clock = clock

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        return result_of(
            intent, attempt, self.clock(), "succeeded", dry_run=True, effect=describe_effect(intent)
        )


class InternalHandler:
    """Effects on Holon's own state (wait, noop): the controller records them; nothing external."""

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self.clock = clock

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        return result_of(intent, attempt, self.clock(), "succeeded", effect=describe_effect(intent))


class NotConfiguredHandler:
    def __init__(self, clock: Callable[[], datetime], why: str) -> None:
        self.clock = clock
        self.why = why

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        return result_of(intent, attempt, self.clock(), "failed", error=self.why)


class LazyHandler:
    """A handler made on its first call by `make`: what most passes never reach (publishing and
    its preview, with the runner and the GitHub data API behind them) is imported and built only
    when an intent is routed to it, not by every process that builds an executor."""

    def __init__(self, make: Callable[[], Handler]) -> None:
        self._make = make
        self._made: Handler | None = None

    @property
    def handler(self) -> Handler:
        if self._made is None:
            self._made = self._make()
        return self._made

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        return self.handler(intent, attempt)


class ContextSource(Protocol):
    """Fills `dest` (an empty directory) with the run's context: what the intent's event is
    about (`github-context`). Implemented outside the executor (serve builds one over the
    GitHub edge or the payload); a part it cannot read is recorded there, not raised. A
    `HolonError` means no context could be collected at all."""

    def collect(self, intent: ActionIntent, dest: Path) -> None: ...


def skill_spec(
    intent: ActionIntent,
    env: Mapping[str, str],
    describe: Callable[[str], str],
    constraints: Mapping[str, Any] | None = None,
) -> Spec:
    """The spec of a run of `intent`'s skill: what the runner runs here and what fan-out's
    decide job bundles for a run job (one construction, so the two cannot drift).
    `constraints`: the run's limits from the policy (controller/budget.run_constraints)."""
    from holon.contract.spec import Spec

    skill = str(intent.args["skill"])
    inputs: dict[str, str] = dict(intent.args.get("inputs") or {})
    return Spec.model_validate(
        {
            "version": "v1",
            "kind": "Holon",
            "metadata": {"name": skill, "id": intent.id, "skills": [skill]},
            "context": {"env": dict(env)},
            "goal": {
                "description": describe(skill),
                "issue_id": inputs.get("issue") or inputs.get("pull_request"),
            },
            "constraints": dict(constraints or {}),
        }
    )


def user_prompt_of(intent: ActionIntent) -> str | None:
    """The run's user prompt: the intent's inputs, one `name: value` line each (None: none)."""
    inputs: dict[str, str] = dict(intent.args.get("inputs") or {})
    return "\n".join(f"{k}: {v}" for k, v in sorted(inputs.items())) or None


class RunSkillHandler:
    """Runs the skill through the Agent Contract runner, with the context `context` collects
    (when given) as the run's context directory. A run on a pull request works on the pull
    request's head (`executor/workspace.py`: a worktree at `head_sha`, fetched from `origin`
    with `token()` when the workspace lacks it), any other in the serve's workspace."""

    def __init__(
        self,
        *,
        workspace: Path,
        output_root: Path,
        clock: Callable[[], datetime],
        runtime: str,
        agent: list[str] | None,
        image: str | None,
        describe: Callable[[str], str],
        host: frozenset[str] = frozenset(),
        context: ContextSource | None = None,
        env: Mapping[str, str] | None = None,
        secrets: Mapping[str, SecretStr] | None = None,
        catalog: SkillCatalog | None = None,
        token: Callable[[], str | None] | None = None,
        server_url: str | None = None,
        constraints: Mapping[str, Any] | None = None,
        price: Pricer | None = None,
    ) -> None:
        self.workspace = workspace
        # The policy's run limits (spec constraints) and prices (what the run's usage cost).
        self.constraints = dict(constraints or {})
        self.price = price
        self.output_root = output_root
        self.clock = clock
        self.runtime = runtime
        self.agent = agent
        self.image = image
        self.describe = describe
        # Host skills (publishing) run in Holon's own process with its token: never in an agent.
        self.host = host
        self.context = context
        # What every agent run gets: non-secret settings (the spec's env: the engine, its
        # model) and secrets (a model key) forwarded as the runner forwards them, redacted.
        self.env = dict(env or {})
        self.secrets = dict(secrets or {})
        # Where the skill's folder and declaration come from: the runner copies it to the agent
        # and checks its artifacts. Without a catalog the run is the spec's name alone.
        self.catalog = catalog
        # What fetches a pull request's head the workspace lacks: the serve's own token (never
        # the agent's), read when needed; and the GitHub server it may be sent to.
        self.token = token or _env_token
        self.server_url = server_url or os.environ.get("GITHUB_SERVER_URL") or GITHUB
        # What killed runs left (their head worktree, their context) is reclaimed as a serve
        # starts, and before each run makes its own (executor/scratch.py).
        from holon.executor.scratch import HEAD, reclaim

        if any(name.startswith(HEAD) for name in reclaim()):
            from holon.executor.workspace import prune_worktrees  # git: only then

            prune_worktrees(workspace)

    def output_for(self, intent: ActionIntent, attempt: int) -> Path:
        return self.output_root / f"{intent.id}-{attempt}"

    def __call__(self, intent: ActionIntent, attempt: int) -> ActionResult:
        from holon.errors import HolonError, Interrupted
        from holon.fsutil import remove_tree

        skill = str(intent.args["skill"])
        if skill in self.host:
            why = f"{skill} is a host skill: it is performed by Holon itself, never by an agent"
            return result_of(intent, attempt, self.clock(), "failed", error=why)
        spec = skill_spec(intent, self.env, self.describe, self.constraints)
        output = self.output_for(intent, attempt)
        if output.exists():
            # This attempt already started in an earlier process: read what it left, never
            # run it twice.
            return self._recovered(intent, attempt, output)
        user = user_prompt_of(intent)
        # The context lives only until the runner has copied it into the run's input.
        scratch = self._context_scratch() if self.context else None
        try:
            with self._workspace(intent) as workspace:
                result = self._run(intent, attempt, spec, output, user, workspace, scratch)
        except Interrupted:
            # The user (or a cancelled job) interrupted the run: its record says so, and the
            # interruption goes on up, never retried as if the run had failed.
            raise KeyboardInterrupt from None
        except HolonError as exc:
            return result_of(intent, attempt, self.clock(), "failed", error=str(exc))
        finally:
            if scratch is not None:
                remove_tree(scratch)
        if isinstance(result, ActionResult):
            return result
        return self._from_record(intent, attempt, result)

    @staticmethod
    def _context_scratch() -> Path:
        from holon.executor.scratch import CONTEXT, make_scratch, reclaim

        reclaim()  # a killed run's scratch goes before another is made
        return make_scratch(CONTEXT)

    def _workspace(self, intent: ActionIntent) -> AbstractContextManager[Path]:
        """The tree the run starts from: the pull request's head, else the serve's workspace."""
        from holon.executor.workspace import head_of, head_workspace

        head = head_of(intent)
        if head is None:
            return nullcontext(self.workspace)
        return head_workspace(
            self.workspace, head, token=self.token() if head.same_repo else None,
            server_url=self.server_url,
        )  # fmt: skip

    def _run(
        self,
        intent: ActionIntent,
        attempt: int,
        spec: Spec,
        output: Path,
        user: str | None,
        workspace: Path,
        scratch: Path | None,
    ) -> Any:
        """The runner's record of the run, or the failed result when no context was had."""
        from holon.errors import HolonError
        from holon.runner import RunRequest, run

        skill = str(intent.args["skill"])
        context = None
        if self.context is not None and scratch is not None:
            context = scratch / "context"
            try:
                self.context.collect(intent, context)
            except HolonError as exc:
                error = f"context: {exc}"
                return result_of(intent, attempt, self.clock(), "failed", error=error)
        return run(
            RunRequest(
                spec=spec,
                workspace=workspace,
                output=output,
                runtime=self.runtime,
                agent=self.agent,
                image=self.image,
                context=context,
                secrets=self.secrets,
                user_prompt=user,
                run_id=f"{intent.id}-{attempt}",
                skills=self._skills(skill),
                # The key proxy holds the run to its token limit from the host: the agent's
                # own budget is enforced inside the container, which the model's commands share.
                model_tokens=self.constraints.get("max_tokens"),
            )
        )

    def _skills(self, name: str) -> list[Any]:
        found = self.catalog.get(name) if self.catalog is not None else None
        return [found] if found is not None else []

    def _recovered(self, intent: ActionIntent, attempt: int, output: Path) -> ActionResult:
        from pydantic import ValidationError

        from holon.runner.record import RunResult

        record = output / "run.json"
        try:
            result = RunResult.model_validate_json(record.read_bytes())
        except (OSError, ValidationError):
            return result_of(
                intent,
                attempt,
                self.clock(),
                "failed",
                run_output_path=str(output),
                run_status="interrupted",
                error="interrupted: the run was cut off before it recorded a result",
            )
        return self._from_record(intent, attempt, result)

    def _from_record(self, intent: ActionIntent, attempt: int, result: Any) -> ActionResult:
        return from_run_record(intent, attempt, self.clock(), result, price=self.price)


def from_run_record(
    intent: ActionIntent,
    attempt: int,
    now: datetime,
    result: Any,
    output: Path | None = None,
    price: Pricer | None = None,
) -> ActionResult:
    """The attempt's result from the runner's record of the run (`RunResult`). `output`: where
    the run's output is on this side, when the record's own paths were written elsewhere (a
    run job's container) and must not be trusted. `price`: the policy's prices applied to the
    run's usage (None: its tokens are reported unpriced)."""
    from holon.closure.evidence import Question
    from holon.contract.layout import MANIFEST_FILE
    from holon.executor.usage import run_usage, spend_of_run

    status = "failed" if result.outcome == "failure" else "succeeded"
    # The agent's question is the operator's required input: it travels with the result
    # into the subject's closure evidence (askuserQuestion, not a bare "blocked").
    asked = result.manifest.question if result.manifest is not None else None
    question = None
    if result.outcome == "needs_human" and asked is not None:
        question = Question(id=asked.id, text=asked.text)
    output_path, manifest_path = result.output_path, result.manifest_path
    if output is not None:
        output_path = str(output)
        manifest_path = str(output / MANIFEST_FILE) if manifest_path is not None else None
    here = output if output is not None else (Path(output_path) if output_path else None)
    usage = run_usage(result, here)
    return result_of(
        intent,
        attempt,
        now,
        status,
        usage=spend_of_run(usage, price),
        usage_source=usage.source if usage is not None else None,
        run_id=result.run_id,
        run_output_path=output_path,
        manifest_path=manifest_path,
        run_status=result.status,
        run_outcome=result.outcome,
        question=question,
        error=None if status == "succeeded" else result.reason,
    )
