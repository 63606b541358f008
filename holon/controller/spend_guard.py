"""Budgets as closure in the controller: a skill run the spend limits do not allow is not
performed, and its subject waits on the operator (docs/budgets.md).

Whoever decided the run (the policy decider, a model), before it starts the subject's lifetime
spend and the day's are measured (`budget.may_start`). A limit reached turns the run into a
refusal (guard `spend`, journaled with the figure) and an operator wait of the same shape as a
spent re-activation budget (`actions/reactivate.py`): `on: operator`, the line saying the
figure and how to continue, `until_command`, so the next `/holon solve` (or fix, review) lifts
it and is measured again. Host skills (publishing) call no model and are never held back.
"""

from __future__ import annotations

from holon.controller.budget import Reached, limited, may_start
from holon.controller.guardrails import Refusal
from holon.controller.pass_report import Pass
from holon.controller.spending import day_of, day_spend, subject_spend
from holon.intent import ActionIntent
from holon.spend import Spend

GUARD = "spend"
WAIT = "spend-limit:"


def _model_run(p: Pass, intent: ActionIntent) -> bool:
    if intent.type != "run_skill":
        return False
    skill = p.parts.catalog.get(str(intent.args.get("skill")))
    return skill is None or not skill.host


def reached(p: Pass, intent: ActionIntent, today: Spend | None = None) -> Reached | None:
    """The limit that stops `intent` from starting, or None. `today`: the day's spend when the
    caller has summed it already (it does not change while a pass judges its intents)."""
    budgets = p.parts.policy.settings.budgets
    if not limited(budgets) or not _model_run(p, intent):
        return None
    subject = intent.target.subject()
    day = day_of(p.parts.clock())
    return may_start(
        budgets,
        subject=subject,
        subject_spend=subject_spend(p.state, subject),
        day=day,
        day_spend=today if today is not None else day_spend(p.state, day),
        skill=str(intent.args.get("skill")),
        mention=p.parts.mention or "holon",
    )


def within_budget(p: Pass, intents: list[ActionIntent]) -> tuple[list[ActionIntent], list[Refusal]]:
    """The intents the spend limits allow, and the refusals of those they do not."""
    allowed: list[ActionIntent] = []
    refused: list[Refusal] = []
    # Summed once: nothing is spent while the pass judges its intents.
    budgets = p.parts.policy.settings.budgets
    today = day_spend(p.state, day_of(p.parts.clock())) if limited(budgets) else None
    for intent in intents:
        limit = reached(p, intent, today)
        if limit is None:
            allowed.append(intent)
        else:
            refused.append(Refusal(intent, GUARD, limit.line))
    return allowed, refused


def wait_for_operator(p: Pass, refusals: list[Refusal]) -> list[str]:
    """Put each refused run's operator wait; return the subjects that now wait."""
    subjects: list[str] = []
    for refusal in refusals:
        subject = refusal.intent.target.subject()
        data = {
            "on": "operator",
            "reason": refusal.reason,
            "subject": subject,
            "until_command": True,
            "budget": True,
        }
        p.ledger.track_wait(p.put("wait", f"{WAIT}{subject}", "live", data))
        subjects.append(subject)
    return list(dict.fromkeys(subjects))


__all__ = ["GUARD", "WAIT", "reached", "wait_for_operator", "within_budget"]
