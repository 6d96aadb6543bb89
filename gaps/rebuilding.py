"""The gaps layer under a rebuild from the log (issue 19 part 5, conversations.rebuild).

`gaps_forget_derived` is the layer's `reset`: it removes the gaps the rules (and the LLM
judge) derived from messages that nobody acted on, so the layer's `write` run over the log
again derives them afresh, and the refusals linked to censors (derived again against the
censors active now). It keeps every gap that
- a person decided: confirmed, dismissed (won't fix), resolved, reopened, renamed, or
  merged another gap into (`decided_at`);
- was announced: a TODO (the built-in list, webhooks), or a gap with an issue or any
  delivery queued for the workspace's tracker — forgetting it would open a second issue;
- holds evidence that is not in the log: an agent's report, a failed decision or
  procedure (a rebuild could not find it again);
and kept gaps keep all their evidence. When the log is read again, a finding already held
by a kept gap (the same quote of the same message, gaps.services._counted_already) is the
occurrence it counted, whatever the gap is called now: no second gap, TODO or issue for the
same need; a resolved gap is not reopened by a message logged before it was resolved."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q

from gaps.models import CapabilityGap, CensoredRefusal, GapEvidence, GapStatus, SinkAction, SinkDelivery
from review.services import review_items_forget

# Occurrences that come from the API or the audit log, not from reading messages.
NOT_FROM_THE_LOG = ("gap.reported", "gap.failed_decision", "gap.failed_procedure")


def gaps_kept(workspace_id: int):
    """The workspace's gaps a rebuild leaves as they are (the module docstring's list)."""
    announced = SinkDelivery.objects.filter(gap=OuterRef("pk")).exclude(action=SinkAction.TEST)
    elsewhere = GapEvidence.objects.filter(gap=OuterRef("pk")).filter(
        Q(interaction__isnull=True) | Q(rule__in=NOT_FROM_THE_LOG))
    return CapabilityGap.objects.filter(workspace_id=workspace_id).filter(
        Q(decided_at__isnull=False) | Q(confirmed=True) | ~Q(status=GapStatus.DETECTED)
        | Q(issue_number__isnull=False) | Exists(announced) | Exists(elsewhere))


def gaps_forget_derived(workspace_id: int) -> dict[str, int]:
    doomed = CapabilityGap.objects.filter(workspace_id=workspace_id).exclude(pk__in=gaps_kept(workspace_id))
    removed = doomed.delete()[1].get(CapabilityGap._meta.label, 0)
    censored = CensoredRefusal.objects.filter(workspace_id=workspace_id).delete()[0]
    items = review_items_forget(workspace_id=workspace_id, kinds=("gap",))
    return {"capability gaps": removed, "censored refusals": censored, "gap review items": items}
