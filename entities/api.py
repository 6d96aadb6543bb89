from typing import Literal

from django.http import HttpRequest
from ninja import Query, Router, Status
from ninja.pagination import paginate

from core.auth import require
from core.input_types import Id
from core.services import Actor
from entities import selectors, services
from entities.kinds import PREDICATES, WHAT_KINDS, WHO_KINDS
from entities.schemas import (
    EntityDetailOut,
    EntityFilter,
    EntityIn,
    EntityOut,
    EntityPatch,
    ErasureOut,
    IdentityIn,
    IdentityOut,
    KindOut,
    MergeIn,
    MergeOut,
    PredicateOut,
    ProfileIn,
    ProfileValueOut,
    RelationshipFilter,
    RelationshipIn,
    RelationshipOut,
    SuggestionFilter,
    SuggestionOut,
)
from review.services import review_or

router = Router(tags=["entities"])


def _actor(request) -> Actor:
    return Actor.for_api_key(request.auth)


def _entity(request, entity_id: int):
    return selectors.entity_get(workspace=request.workspace, entity_id=entity_id)


def _detail(entity) -> dict:
    return {**EntityOut.from_orm(entity).model_dump(), "identities": selectors.identities_of(entity=entity),
            "profile": selectors.profile_current(entity=entity)}


@router.get("/entity-kinds", response=list[KindOut], auth=require("read"), summary="The entity kind registry")
def list_kinds(request: HttpRequest):
    return [{"name": n, "description": d, "who": True} for n, d in WHO_KINDS.items()] + \
           [{"name": n, "description": d, "who": False} for n, d in WHAT_KINDS.items()]


@router.get("/predicates", response=list[PredicateOut], auth=require("read"), summary="The relationship predicates")
def list_predicates(request: HttpRequest):
    return [{"name": n, "description": d, "functional": f} for n, (d, f) in PREDICATES.items()]


@router.post("/entities", response={201: EntityDetailOut}, auth=require("write"), summary="Create an entity")
def create_entity(request: HttpRequest, payload: EntityIn):
    entity = services.entity_create(workspace=request.workspace, actor=_actor(request), **payload.model_dump())
    return Status(201, _detail(entity))


@router.get("/entities", response=list[EntityOut], auth=require("read"), summary="List and search entities")
@paginate
def list_entities(request: HttpRequest, filters: Query[EntityFilter]):
    return selectors.entity_list(workspace=request.workspace, **filters.model_dump())


@router.get("/entities/{entity_id}", response=EntityDetailOut, auth=require("read"),
            summary="One entity with its identities and current profile")
def get_entity(request: HttpRequest, entity_id: Id):
    return _detail(_entity(request, entity_id))


@router.patch("/entities/{entity_id}", response=EntityDetailOut, auth=require("write"),
              summary="Change name, aliases or description")
def update_entity(request: HttpRequest, entity_id: Id, payload: EntityPatch):
    entity = services.entity_update(entity=_entity(request, entity_id), actor=_actor(request),
                                    **payload.model_dump(exclude_unset=True))
    return _detail(entity)


# --- identities --------------------------------------------------------------------------------

@router.get("/entities/{entity_id}/identities", response=list[IdentityOut], auth=require("read"),
            summary="The entity's channel identities")
def list_identities(request: HttpRequest, entity_id: Id):
    return selectors.identities_of(entity=_entity(request, entity_id))


@router.post("/entities/{entity_id}/identities", response={201: IdentityOut}, auth=require("write"),
             summary="Link a channel handle to the entity (409 if another entity owns it)")
def link_identity(request: HttpRequest, entity_id: Id, payload: IdentityIn):
    identity = services.identity_link(entity=_entity(request, entity_id), actor=_actor(request), **payload.model_dump())
    return Status(201, identity)


@router.delete("/identities/{identity_id}", response={204: None}, auth=require("write"), summary="Unlink a handle")
def unlink_identity(request: HttpRequest, identity_id: Id):
    services.identity_unlink(identity=selectors.identity_get(workspace=request.workspace, identity_id=identity_id),
                             actor=_actor(request))
    return Status(204, None)


@router.post("/identities/{identity_id}/verify", response=IdentityOut, auth=require("write"),
             summary="Mark a handle's link as confirmed")
def verify_identity(request: HttpRequest, identity_id: Id):
    identity = selectors.identity_get(workspace=request.workspace, identity_id=identity_id)
    return services.identity_verify(identity=identity, actor=_actor(request))


@router.get("/identity-suggestions", response=list[SuggestionOut], auth=require("read"),
            summary="Proposed links between handles (never applied by themselves)")
@paginate
def list_suggestions(request: HttpRequest, filters: Query[SuggestionFilter]):
    return selectors.link_suggestions(workspace=request.workspace, status=filters.status)


@router.post("/identity-suggestions/{suggestion_id}/accept", response={200: MergeOut, 204: None}, auth=require("write"),
             summary="Accept: merges the handle's entity into the suggested one")
def accept_suggestion(request: HttpRequest, suggestion_id: Id):
    suggestion, actor = selectors.link_suggestion_get(workspace=request.workspace, suggestion_id=suggestion_id), _actor(request)
    item, merge = review_or(workspace_id=request.workspace.pk, kinds=("identity_link",), target_id=suggestion.pk,
                            actor=actor, action="approve",
                            fallback=lambda: services.link_suggestion_accept(suggestion=suggestion, actor=actor))
    if item is not None and item.result.get("merge"):
        merge = selectors.merge_get(workspace=request.workspace, merge_id=item.result["merge"])
    return merge if merge is not None else Status(204, None)


@router.post("/identity-suggestions/{suggestion_id}/reject", response=SuggestionOut, auth=require("write"),
             summary="Reject: the pair is not proposed again")
def reject_suggestion(request: HttpRequest, suggestion_id: Id):
    suggestion, actor = selectors.link_suggestion_get(workspace=request.workspace, suggestion_id=suggestion_id), _actor(request)
    review_or(workspace_id=request.workspace.pk, kinds=("identity_link",), target_id=suggestion.pk, actor=actor,
              action="reject", fallback=lambda: services.link_suggestion_reject(suggestion=suggestion, actor=actor))
    return selectors.link_suggestions(workspace=request.workspace, status=None).get(pk=suggestion_id)


# --- merge and split -------------------------------------------------------------------------------

@router.post("/entities/{entity_id}/merge", response=MergeOut, auth=require("write"),
             summary="Merge this entity into another (undo with a split)")
def merge_entity(request: HttpRequest, entity_id: Id, payload: MergeIn):
    source = _entity(request, entity_id)
    target = _entity(request, payload.into)
    return services.entity_merge(source=source, target=target, actor=_actor(request))


@router.post("/merges/{merge_id}/split", response=EntityDetailOut, auth=require("write"),
             summary="Undo a merge: everything it moved goes back")
def split_merge(request: HttpRequest, merge_id: Id):
    merge = selectors.merge_get(workspace=request.workspace, merge_id=merge_id)
    return _detail(services.entity_split(merge=merge, actor=_actor(request)))


# --- profile ------------------------------------------------------------------------------------------

@router.get("/entities/{entity_id}/profile", response=list[ProfileValueOut], auth=require("read"),
            summary="The current value of each profile key")
def get_profile(request: HttpRequest, entity_id: Id):
    return selectors.profile_current(entity=_entity(request, entity_id))


@router.get("/entities/{entity_id}/profile/history", response=list[ProfileValueOut], auth=require("read"),
            summary="Every version of every key (or of one key), oldest first")
def get_profile_history(request: HttpRequest, entity_id: Id, key: str | None = None):
    return selectors.profile_history(entity=_entity(request, entity_id), key=key)


@router.post("/entities/{entity_id}/profile", response={201: ProfileValueOut}, auth=require("write"),
             summary="Set a profile value (supersedes the current one)")
def set_profile(request: HttpRequest, entity_id: Id, payload: ProfileIn):
    row = services.profile_set(entity=_entity(request, entity_id), actor=_actor(request), source="api",
                               **payload.model_dump())
    return Status(201, row)


@router.post("/profile-values/{value_id}/approve", response=ProfileValueOut, auth=require("write"),
             summary="Approve a candidate value: it becomes current")
def approve_profile_value(request: HttpRequest, value_id: Id):
    value, actor = selectors.profile_value_get(workspace=request.workspace, value_id=value_id), _actor(request)
    review_or(workspace_id=request.workspace.pk, kinds=("profile_value",), target_id=value.pk, actor=actor,
              action="approve", fallback=lambda: services.profile_candidate_approve(value=value, actor=actor))
    return selectors.profile_value_get(workspace=request.workspace, value_id=value_id)


@router.post("/profile-values/{value_id}/reject", response=ProfileValueOut, auth=require("write"),
             summary="Reject a candidate value")
def reject_profile_value(request: HttpRequest, value_id: Id):
    value, actor = selectors.profile_value_get(workspace=request.workspace, value_id=value_id), _actor(request)
    review_or(workspace_id=request.workspace.pk, kinds=("profile_value",), target_id=value.pk, actor=actor,
              action="reject", fallback=lambda: services.profile_candidate_reject(value=value, actor=actor))
    return selectors.profile_value_get(workspace=request.workspace, value_id=value_id)


# --- relationships ---------------------------------------------------------------------------------------

@router.get("/entities/{entity_id}/relationships", response=list[RelationshipOut], auth=require("read"),
            summary="Relationships at either end; as_of = what was true then")
def list_relationships(request: HttpRequest, entity_id: Id, filters: Query[RelationshipFilter]):
    return selectors.relationships_for(entity=_entity(request, entity_id), **filters.model_dump())


@router.post("/relationships", response={201: RelationshipOut}, auth=require("write"),
             summary="Add a relationship (a contradiction supersedes the old one)")
def add_relationship(request: HttpRequest, payload: RelationshipIn):
    data = payload.model_dump()
    subject = _entity(request, data.pop("subject"))
    obj = _entity(request, data.pop("object"))
    rel = services.relationship_add(subject=subject, object=obj, actor=_actor(request), source="api", **data)
    return Status(201, rel)


@router.post("/relationships/{relationship_id}/{action}", response=RelationshipOut, auth=require("write"),
             summary="approve (a candidate) or invalidate")
def decide_relationship(request: HttpRequest, relationship_id: Id, action: Literal["approve", "invalidate"]):
    status = {"approve": "active", "invalidate": "invalid"}[action]
    rel, actor = selectors.relationship_get(workspace=request.workspace, relationship_id=relationship_id), _actor(request)
    fallback = lambda: services.relationship_set_status(relationship=rel, status=status, actor=actor)  # noqa: E731
    if rel.status == "candidate":
        review_or(workspace_id=request.workspace.pk, kinds=("relationship",), target_id=rel.pk, actor=actor,
                  action="approve" if action == "approve" else "reject", fallback=fallback)
    else:
        fallback()
    return selectors.relationship_get(workspace=request.workspace, relationship_id=relationship_id)


# --- erasure ------------------------------------------------------------------------------------------------

@router.post("/entities/{entity_id}/erase", response=ErasureOut, auth=require("admin"),
             summary="Erase everything Mnemo holds about this entity (irreversible)")
def erase_entity(request: HttpRequest, entity_id: Id):
    """Removes the entity's interactions, conversations, summaries, profile values,
    relationships, memories, gap evidence and embeddings; answers a receipt of counts per
    table. Erasing again is a 404."""
    receipt = services.entity_erase(entity=_entity(request, entity_id), actor=_actor(request))
    return {"erased": True, "receipt": receipt}
