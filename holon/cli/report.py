"""Human-readable summaries of results for the terminal; outside text is made safe to print."""

from __future__ import annotations

from holon.runner.record import RunResult
from holon.terminal import own_line


def describe_run(result: RunResult) -> str:
    lines = [
        f"run {result.run_id}: {result.status} ({result.outcome}), exit {int(result.exit_code)}",
        f"reason: {result.reason}",
        f"output: {result.output_path}",
    ]
    if result.patch is not None:
        if result.patch.error:
            lines.append(f"patch: not produced ({result.patch.error})")
        else:
            lines.append(
                f"patch: {result.patch.path} ({result.patch.bytes} bytes, {result.patch.source})"
            )
    if result.missing_artifacts:
        lines.append("missing: " + ", ".join(result.missing_artifacts))
    lines.extend(f"violation: {violation}" for violation in result.violations)
    if result.log is not None and result.log.cut_at is not None:
        lines.append(
            f"log: run.log keeps {result.log.kept_bytes} of {result.log.bytes} bytes "
            f"(limit {result.log.limit}); {result.log.cut_bytes} cut at offset {result.log.cut_at}"
        )
    if result.model_usage is not None:
        usage = result.model_usage
        lines.append(
            f"model: {usage.requests} request(s) through the key proxy, "
            f"{usage.input_tokens} input and {usage.output_tokens} output tokens"
            + (f" ({usage.model})" if usage.model else "")
        )
    if result.closure is not None:
        closure = result.closure
        reason = f"/{closure.waiting_reason}" if closure.waiting_reason else ""
        lines.append(
            f"closure: {closure.closure_outcome}{reason}, "
            f"lifecycle {closure.lifecycle_outcome or 'none (continuing)'}"
        )
    lines.extend(f"note: {note}" for note in result.notes)
    # The reason may quote the agent (its question, its error), violations and notes name its
    # files: each line is made one terminal line, nothing in it acted on.
    return "\n".join(own_line(text) for text in lines)
