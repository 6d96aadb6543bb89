"""How an entity and a relationship read as text: what the worker embeds and what recall,
packs and the embedding trigger's consumers show. Pure (no Django), so the plain-SQL
readers (context.retrieval, entities.selectors.facts_of) word them exactly as the
embedder did."""

from __future__ import annotations


def card(name: str, kind: str, aliases: list[str], description: str) -> str:
    """"Acme Robotics (organisation), also known as Acme: a company that …"."""
    text = f"{name} ({kind})"
    others = [a for a in aliases if a.casefold() != name.casefold()]
    if others:
        text += ", also known as " + ", ".join(others)
    if description:
        text += f": {description}"
    return text


def relationship(subject: str, predicate: str, object_: str) -> str:
    """"Caroline works at Acme": the ends' names around the predicate's words."""
    return f"{subject} {predicate.replace('_', ' ')} {object_}"
