"""Issue 18: "not a gap: a refusal for policy reasons the team chose (a censor blocked it:
link the censor instead)".

In the layer's prepare step (no lock), each refusal is checked against the workspace's
active censors with the matcher the API's censor check uses
(memory.services.censors_matching): the request it answers (what was asked for), and for
a refusal that names a rule ("I'm not allowed to share passwords") the agent's own words
too. A refusal a censor covers becomes a CensoredRefusal linked to the best-matching
censor, written in the layer's write step, and is not counted as a gap. Matching counts no
activation: the agent did not ask the censor, it declined on its own (and a batch
prepared twice must not count twice).

A gap found before a censor that covers it existed is left as it is: it was a real need
when it was seen, and people resolve or dismiss it (README, "Capability gaps")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.core.exceptions import ObjectDoesNotExist
from django.utils import timezone

from core.errors import NotFound
from core.models import Workspace
from core.services import SYSTEM, audit_record
from gaps.models import CensoredRefusal
from memory import selectors as memory_selectors
from memory import services as memory_services

REFUSALS = ("gap.refusal", "gap.policy", "gap.llm")


@dataclass(frozen=True)
class CensorLink:
    occurrence: object  # gaps.services.Occurrence
    censor_id: int
    score: float


def _texts(occurrence) -> list[str]:
    """What a censor is matched against: the request, and a policy refusal's own words."""
    texts = [occurrence.description]
    if occurrence.rule == "gap.policy" and occurrence.quote:
        texts.append(occurrence.quote)
    return [t for t in texts if t.strip()]


def action_texts(occurrences: Sequence) -> list[str]:
    """The texts to embed for the censor check (with the rest of the batch's)."""
    return list(dict.fromkeys(t for o in occurrences if o.rule in REFUSALS for t in _texts(o)))


def split(occurrences: Sequence, vectors: dict) -> tuple[list[CensorLink], list]:
    """(links to censors, occurrences no censor covers)."""
    links, kept = [], []
    for occurrence in occurrences:
        best = None
        if occurrence.rule in REFUSALS:
            for text in _texts(occurrence):
                matches = memory_services.censors_matching(workspace_id=occurrence.workspace_id, action=text,
                                                           vector=vectors[text])
                if matches and (best is None or matches[0]["score"] > best["score"]):
                    best = matches[0]
        if best is None:
            kept.append(occurrence)
        else:
            links.append(CensorLink(occurrence, best["censor"].pk, best["score"]))
    return links, kept


def links_write(links: Sequence[CensorLink]) -> int:
    """Store the links (once per censor and refusal), each audited as `gap.censored` by ids
    only: the quoted words live in the row, which an erasure removes. A censor deleted since
    prepare is skipped. Returns how many were new."""
    written = 0
    for link in links:
        o = link.occurrence
        workspace = Workspace.objects.get(pk=o.workspace_id)
        try:
            memory_selectors.censor_get(workspace=workspace, memory_id=link.censor_id)
        except (NotFound, ObjectDoesNotExist):
            continue
        start, end = o.span if o.span else (None, None)
        row, created = CensoredRefusal.objects.get_or_create(censor_id=link.censor_id, interaction_id=o.primary_id,
                                                             defaults={
            "workspace": workspace, "request_id": o.supporting_ids[0] if o.supporting_ids else None,
            "entity_id": o.entity_id, "description": o.description[:300], "quote": o.quote, "start": start,
            "end": end, "rule": o.rule, "score": link.score, "occurred_at": o.occurred_at or timezone.now()})
        if created:
            written += 1
            audit_record(workspace=workspace, actor=SYSTEM, verb="gap.censored", target=row,
                         data={"censor": link.censor_id, "interaction": o.primary_id, "rule": o.rule,
                               "score": link.score})
    return written
