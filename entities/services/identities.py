"""Channel identities: resolving senders, linking, unlinking and verifying handles, and
the conservative suggestion job (seed 002: suggest, don't assume; never auto-merge)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core.errors import Conflict
from core.models import Workspace
from core.safe_text import refuse_secrets
from core.services import SYSTEM, Actor, audit_record
from entities.kinds import is_who_kind
from entities.models import Entity, Identity, IdentityConfidence, LinkSuggestion, SuggestionStatus
from review.services import review_open_many


def identities_resolve(
    *, workspace: Workspace, handles: dict[tuple[str, str], tuple[str, str]]
) -> dict[tuple[str, str], Identity]:
    """The identity for each (channel, channel_id); an unknown handle becomes a new entity
    of the given kind with a confirmed identity for that one channel (DESIGN.md: links to
    other entities are only ever suggested, never made here).

    `handles` maps (channel, channel_id) -> (display name, kind). The caller holds the
    workspace's ingest lock, so two requests cannot create the same handle twice."""
    found = {
        (identity.channel, identity.channel_id): identity
        for identity in Identity.objects.filter(workspace=workspace).filter(
            channel__in={c for c, _ in handles}, channel_id__in={h for _, h in handles}
        ).select_related("entity")
        if (identity.channel, identity.channel_id) in handles
    }
    missing = [key for key in handles if key not in found]
    if not missing:
        return found
    now = timezone.now()
    entities = Entity.objects.bulk_create([
        Entity(workspace=workspace, kind=handles[key][1], name=handles[key][0] or key[1], created_at=now, updated_at=now)
        for key in missing
    ])
    identities = Identity.objects.bulk_create([
        Identity(
            workspace=workspace, entity=entity, channel=key[0], channel_id=key[1],
            display_name=handles[key][0], confidence=IdentityConfidence.CONFIRMED, created_at=now,
        )
        for key, entity in zip(missing, entities)
    ])
    for key, identity in zip(missing, identities):
        found[key] = identity
    return found


@transaction.atomic
def identity_link(*, entity: Entity, channel: str, channel_id: str, actor: Actor = SYSTEM, display_name: str = "",
                  confidence: str = IdentityConfidence.CONFIRMED) -> Identity:
    """Give `entity` the handle (channel, channel_id). A handle belongs to one entity: if
    another owns it, that is a 409 naming the owner (relinking is unlink, then link)."""
    refuse_secrets(channel=channel, channel_id=channel_id, display_name=display_name)
    channel, channel_id = channel.strip().lower(), channel_id.strip()
    if not channel or not channel_id:
        raise ValidationError({"channel_id": "A channel and a handle are required."})
    if not is_who_kind(entity.kind):
        raise ValidationError({"entity": f"A {entity.kind} cannot hold a channel identity."})
    if confidence not in IdentityConfidence.values:
        raise ValidationError({"confidence": f"Unknown confidence {confidence!r}."})
    existing = Identity.objects.select_for_update().filter(
        workspace_id=entity.workspace_id, channel=channel, channel_id=channel_id
    ).select_related("entity").first()
    if existing is not None:
        if existing.entity_id != entity.pk:
            raise Conflict(
                f"{channel}:{channel_id} already belongs to {existing.entity.name} (entity {existing.entity_id}); unlink it first.",
                details={"owner_entity_id": existing.entity_id, "owner_name": existing.entity.name},
            )
        return existing
    now = timezone.now()
    identity = Identity.objects.create(
        workspace_id=entity.workspace_id, entity=entity, channel=channel, channel_id=channel_id,
        display_name=display_name[:300], confidence=confidence,
        verified_by=actor.user if confidence == IdentityConfidence.CONFIRMED else None,
        verified_at=now if confidence == IdentityConfidence.CONFIRMED and actor.user else None,
    )
    audit_record(workspace=entity.workspace, actor=actor, verb="identity.link", target=identity,
                 data={"entity": entity.pk, "channel": channel, "confidence": confidence})
    return identity


@transaction.atomic
def identity_unlink(*, identity: Identity, actor: Actor = SYSTEM) -> None:
    """Remove a handle from its entity. Its past interactions stay with the entity; the
    handle's next message creates a new entity (or it can be linked elsewhere)."""
    audit_record(workspace=identity.workspace, actor=actor, verb="identity.unlink", target=identity,
                 data={"entity": identity.entity_id, "channel": identity.channel})
    identity.delete()


@transaction.atomic
def identity_verify(*, identity: Identity, actor: Actor) -> Identity:
    identity.confidence = IdentityConfidence.CONFIRMED
    identity.verified_by = actor.user
    identity.verified_at = timezone.now()
    identity.save(update_fields=["confidence", "verified_by", "verified_at"])
    audit_record(workspace=identity.workspace, actor=actor, verb="identity.verify", target=identity)
    return identity


def link_suggestions_scan(*, workspace: Workspace,
                          conversation_keys: Callable[[set[int]], Mapping[int, set[str]]],
                          max_pairs: int = 200_000) -> int:
    """Propose links between identities of different entities that look like the same
    person. Writes LinkSuggestion rows only (for a person to accept or reject): it never
    links or merges. A pair proposed before — accepted or rejected — is not proposed again.
    `conversation_keys(entity_ids)`: entity id -> the conversation keys it took part in
    (threads and handles), from the log's owner (conversations.services.identity_links_suggest),
    asked only for the entities of the candidate pairs: the scan reads their messages, not
    the whole log (at 1M interactions, all of it took 4.85 s).
    Returns how many suggestions were added."""
    from entities.similarity import SUGGEST_THRESHOLD, Handle, handle_tokens, normalise_name, score_link

    identities = list(
        Identity.objects.filter(workspace=workspace, entity__merged_into__isnull=True)
        .select_related("entity").order_by("id")
    )
    # Block on shared name tokens or email so the scan is not quadratic in the log's size.
    blocks: dict[str, list[Identity]] = {}
    for identity in identities:
        keys = set(normalise_name(identity.display_name or identity.entity.name).split())
        keys |= handle_tokens(identity.channel, identity.channel_id)
        for key in keys:
            if len(key) >= 2:
                blocks.setdefault(key, []).append(identity)
    pairs: set[tuple[int, int]] = set()
    for members in blocks.values():
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                if a.entity_id != b.entity_id:
                    pairs.add((a.pk, b.pk) if a.pk < b.pk else (b.pk, a.pk))
                if len(pairs) >= max_pairs:
                    break
    by_id = {identity.pk: identity for identity in identities}
    threads = conversation_keys({by_id[pk].entity_id for pair in pairs for pk in pair}) if pairs else {}
    proposals = []
    for a_id, b_id in sorted(pairs):
        a, b = by_id[a_id], by_id[b_id]
        shared = threads.get(a.entity_id, set()) & threads.get(b.entity_id, set())
        union = threads.get(a.entity_id, set()) | threads.get(b.entity_id, set())
        result = score_link(
            Handle(a.channel, a.channel_id, a.display_name, a.entity.name),
            Handle(b.channel, b.channel_id, b.display_name, b.entity.name),
            co_occurrence=len(shared) / len(union) if union else 0.0,
        )
        if result.score >= SUGGEST_THRESHOLD:
            # Propose moving the newer entity's handle to the older entity.
            newer, older = (b, a) if b.entity_id > a.entity_id else (a, b)
            proposals.append(LinkSuggestion(workspace=workspace, identity=newer, entity=older.entity,
                                            score=round(result.score, 4), reasons=result.reasons))
    last = LinkSuggestion.objects.filter(workspace=workspace).order_by("-pk").values_list("pk", flat=True).first() or 0
    LinkSuggestion.objects.bulk_create(proposals, ignore_conflicts=True)
    fresh = list(LinkSuggestion.objects.filter(workspace=workspace, pk__gt=last, status=SuggestionStatus.PENDING)
                 .select_related("identity", "entity"))
    if fresh:
        audit_record(workspace=workspace, actor=SYSTEM, verb="identity.suggest", data={"proposed": len(fresh)})
        review_open_many(kind="identity_link", targets=fresh, workspace_id=workspace.pk)
    return len(fresh)


@transaction.atomic
def link_suggestion_accept(*, suggestion: LinkSuggestion, actor: Actor):
    """Accepting a suggestion merges the handle's entity into the suggested one (undoable
    by a split), so the person's whole history comes together."""
    from entities.services.merging import entity_merge

    suggestion = LinkSuggestion.objects.select_for_update().select_related("identity__entity", "entity").get(pk=suggestion.pk)
    if suggestion.status != SuggestionStatus.PENDING:
        raise Conflict(f"This suggestion was already {suggestion.status}.")
    suggestion.status = SuggestionStatus.ACCEPTED
    suggestion.decided_by = actor.user
    suggestion.decided_at = timezone.now()
    suggestion.save(update_fields=["status", "decided_by", "decided_at"])
    merge = None
    if suggestion.identity.entity_id != suggestion.entity_id:
        merge = entity_merge(source=suggestion.identity.entity, target=suggestion.entity, actor=actor)
    audit_record(workspace=suggestion.workspace, actor=actor, verb="identity.suggestion.accept", target=suggestion)
    return merge


@transaction.atomic
def link_suggestion_reject(*, suggestion: LinkSuggestion, actor: Actor) -> LinkSuggestion:
    suggestion = LinkSuggestion.objects.select_for_update().get(pk=suggestion.pk)
    if suggestion.status != SuggestionStatus.PENDING:
        raise Conflict(f"This suggestion was already {suggestion.status}.")
    suggestion.status = SuggestionStatus.REJECTED
    suggestion.decided_by = actor.user
    suggestion.decided_at = timezone.now()
    suggestion.save(update_fields=["status", "decided_by", "decided_at"])
    audit_record(workspace=suggestion.workspace, actor=actor, verb="identity.suggestion.reject", target=suggestion)
    return suggestion
