"""Learning from failures (issue 19 part 4; seed 003: "CE → failures → censors, procedures
→ ineffective → censors"). What failed proposes a censor, as a candidate a person reviews
like any other, whose provenance says what taught it:

- a decision whose outcome was reviewed as a failure (`learned_from_decision`): found by
  the periodic job in the audit log past a cursor (the entities app, below this one, cannot
  call up into it), so a failure is learned from once whatever retries the job makes;
- a procedure retired for low effectiveness (`learned_from_procedure`): when a reviewer
  approves the `low_effectiveness` item (memory.review);
- an episode whose outcome is a failure (`learned_from_episode`): an episode an agent
  remembered with `outcome` (metadata), once it is active and embedded.

An episode with an outcome is also a use of the procedure it matches best (seed 003:
"Procedures used → update activation counts"): one activation, and one success or failure,
through procedure_outcome (which flags a procedure that keeps failing). An episode without
an outcome counts nothing: effectiveness is successes over activations, so an activation
whose outcome nobody knows would count as a failure.

Provenance is stored on the censor's memory: `source` = learned_from_<kind>, rule
`censor.learned_from_<kind>`, metadata {"learned_from": {"kind", "id"}} (the review card and
the memory page link to it). Censors learned are `inferred`: the default trust policy keeps
them for a person."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.db import transaction
from django.utils import timezone

from core import selectors as core_selectors
from core.errors import ApiError, NotFound
from core.services import SYSTEM, Actor
from entities import decisions
from memory.models import Memory, MemoryStatus, MemoryType, Procedure, ScanCursor
from memory.services.memories import Draft, Stored
from memory.services.procedures import censor_create, procedure_outcome, procedures_match

logger = logging.getLogger("mnemo.memory")

CURSOR = "failures"
LEARNED_FROM = ("decision", "procedure", "episode")
EPISODE_OUTCOMES = ("success", "partial", "failure")
CONFIDENCE = 0.6
MAX_TRIGGER_CHARS = 300
MAX_REASON_CHARS = 500


def learned_censor_exists(*, workspace_id: int, kind: str, source_id: int) -> bool:
    return Memory.objects.filter(workspace_id=workspace_id, type=MemoryType.CENSOR,
                                 metadata__learned_from={"kind": kind, "id": source_id}).exists()


def censor_learn(*, workspace_id: int, kind: str, source_id: int, trigger: str, text: str, reason: str,
                 actor: Actor = SYSTEM) -> Stored | None:
    """A censor candidate taught by a failure; None when this failure already taught one.
    Its texts pass the privacy filter like any memory's (a secret refuses the whole censor)."""
    if kind not in LEARNED_FROM:
        raise ValueError(f"unknown provenance {kind!r}")
    if learned_censor_exists(workspace_id=workspace_id, kind=kind, source_id=source_id):
        return None
    draft = Draft(type=MemoryType.CENSOR, text=text, certainty="inferred", confidence=CONFIDENCE, importance=0.8,
                  source=f"learned_from_{kind}", rule=f"censor.learned_from_{kind}",
                  metadata={"learned_from": {"kind": kind, "id": source_id}})
    return censor_create(workspace_id=workspace_id, trigger=" ".join(trigger.split())[:MAX_TRIGGER_CHARS],
                         reason=reason[:MAX_REASON_CHARS], actor=actor, draft=draft)


def _quoted(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


# --- a procedure retired ------------------------------------------------------------------------

def censor_from_procedure(*, procedure: Procedure, actor: Actor = SYSTEM) -> Stored | None:
    """Called as a reviewer retires a procedure for low effectiveness (in that transaction)."""
    effectiveness = procedure.effectiveness or 0.0
    reason = (f"the procedure was retired: it worked {procedure.success_count} of {procedure.activation_count} "
              f"times ({effectiveness:.0%})")
    return censor_learn(workspace_id=procedure.memory.workspace_id, kind="procedure", source_id=procedure.pk,
                        trigger=procedure.name, reason=reason, actor=actor,
                        text=f"Learned from a retired procedure: don't rely on “{_quoted(procedure.name)}” — {reason}.")


# --- failed decisions (the audit log past a cursor) -----------------------------------------------

def _from_decision(event) -> Stored | None:
    if (event.data or {}).get("outcome") != "failure":
        return None
    try:
        decision = decisions.decision_get(workspace=event.workspace, decision_id=int(event.target_id))
    except (ObjectDoesNotExist, NotFound, ValueError):
        return None  # erased since: nothing to learn
    what = decision.chosen or decision.description
    result = f": {_quoted(decision.outcome_result)}" if decision.outcome_result else ""
    return censor_learn(workspace_id=event.workspace_id, kind="decision", source_id=decision.pk, trigger=what,
                        reason=f"decision #{decision.pk} failed{result}",
                        text=f"Learned from a failed decision: avoid “{_quoted(what)}”{result}.")


def censors_learn_from_decisions(*, limit: int = 200) -> dict:
    """One pass over the audit log past the cursor. The first pass ever starts the cursor
    at the log's end: a deployment learns from failures from then on, not from its history.
    Each censor commits on its own and the cursor moves after each event, so a killed run
    repeats at most one event, which proposes nothing twice (learned_censor_exists)."""
    counts = {"events": 0, "censors": 0, "refused": 0}
    cursor = ScanCursor.objects.filter(name=CURSOR).first()
    if cursor is None:
        ScanCursor.objects.get_or_create(name=CURSOR, defaults={"position": core_selectors.audit_last_id()})
        return counts
    # A workspace being imported is left alone: the failures in its imported audit log are
    # history its source learned from already (its learned censors came with the archive).
    importing = set(core_selectors.workspaces_importing().values_list("workspace_id", flat=True))
    for event in core_selectors.audit_events_after(after_id=cursor.position, verbs=["decision.outcome"], limit=limit):
        try:
            if event.workspace_id not in importing:
                counts["censors"] += _from_decision(event) is not None  # memory_store's own transaction
        except (ApiError, ValidationError) as exc:  # the privacy filter refused its text
            counts["refused"] += 1
            logger.info("no censor learned from audit event %s: %s", event.pk, type(exc).__name__)
        ScanCursor.objects.filter(name=CURSOR).update(position=event.pk, updated_at=timezone.now())
        counts["events"] += 1
    return counts


# --- episodes with an outcome ---------------------------------------------------------------------

def _episodes_waiting(limit: int):
    return (Memory.objects.filter(type=MemoryType.EPISODIC, status=MemoryStatus.ACTIVE, embedding__isnull=False,
                                  metadata__outcome__in=list(EPISODE_OUTCOMES))
            .exclude(metadata__has_key="learned").exclude(workspace_id__in=core_selectors.workspaces_importing())
            .order_by("pk")[:limit])


@transaction.atomic
def episode_learn(*, memory: Memory) -> dict:
    """What one episode with an outcome teaches: a use of the procedure it matches best,
    and for a failure a censor candidate. Marked `learned` in its metadata, so once."""
    episode = Memory.objects.select_for_update(no_key=True).filter(pk=memory.pk).first()
    if episode is None or "learned" in episode.metadata or episode.status != MemoryStatus.ACTIVE:
        return {}
    outcome = episode.metadata.get("outcome")
    learned: dict = {"at": timezone.now().isoformat(), "procedure": None, "censor": None}
    matches = procedures_match(workspace_id=episode.workspace_id, task=episode.text, limit=1,
                               vector=episode.embedding)
    if matches and matches[0]["score"] >= settings.MNEMO_EPISODE_PROCEDURE_MATCH_MIN and outcome != "partial":
        procedure = procedure_outcome(procedure=matches[0]["procedure"], outcome=outcome, actor=SYSTEM,
                                      note=f"episode #{episode.pk}")
        learned["procedure"] = procedure.pk
    if outcome == "failure":
        stored = censor_learn(workspace_id=episode.workspace_id, kind="episode", source_id=episode.pk,
                              trigger=episode.text, reason=f"episode #{episode.pk} failed",
                              text=f"Learned from a failed episode: avoid repeating “{_quoted(episode.text)}”.")
        learned["censor"] = stored.memory.pk if stored else None
    Memory.objects.filter(pk=episode.pk).update(metadata={**episode.metadata, "learned": learned})
    return learned


def episodes_learn(*, limit: int = 200) -> dict:
    counts = {"episodes": 0, "procedure_uses": 0, "censors": 0, "refused": 0}
    for memory in list(_episodes_waiting(limit).only("id")):
        try:
            learned = episode_learn(memory=memory)
        except (ApiError, ValidationError) as exc:
            # The censor's text was refused (a secret): the episode still counts as read.
            Memory.objects.filter(pk=memory.pk).update(metadata={**Memory.objects.get(pk=memory.pk).metadata,
                                                                 "learned": {"refused": type(exc).__name__}})
            counts["refused"] += 1
            continue
        counts["episodes"] += 1
        counts["procedure_uses"] += learned.get("procedure") is not None
        counts["censors"] += learned.get("censor") is not None
    return counts
