"""Server-rendered relationship graph: the entity in the middle, its neighbours on a
circle, one labelled edge per relationship. Pure: positions and labels only; the template
draws the SVG (no graph library to vendor, readable without JavaScript)."""

from __future__ import annotations

import math
from dataclasses import dataclass

WIDTH, HEIGHT = 640, 420
RADIUS = 150


@dataclass(frozen=True)
class Node:
    id: int
    label: str
    kind: str
    x: float
    y: float
    center: bool = False


@dataclass(frozen=True)
class Edge:
    x1: float
    y1: float
    x2: float
    y2: float
    label: str
    lx: float
    ly: float
    outgoing: bool
    current: bool


def layout(center: tuple[int, str, str], relationships: list[tuple[int, str, str, str, bool, bool]]) -> dict:
    """center = (id, name, kind); each relationship = (other id, other name, other kind,
    predicate, outgoing, current). Returns {"nodes", "edges", "width", "height"}."""
    cx, cy = WIDTH / 2, HEIGHT / 2
    others: dict[int, tuple[str, str]] = {}
    for other_id, name, kind, *_ in relationships:
        others.setdefault(other_id, (name, kind))
    nodes = [Node(center[0], center[1], center[2], cx, cy, center=True)]
    positions = {}
    for index, (other_id, (name, kind)) in enumerate(others.items()):
        angle = -math.pi / 2 + 2 * math.pi * index / max(1, len(others))
        x, y = cx + RADIUS * 1.45 * math.cos(angle), cy + RADIUS * math.sin(angle)
        positions[other_id] = (x, y)
        nodes.append(Node(other_id, name, kind, round(x, 1), round(y, 1)))
    edges = []
    seen: dict[int, int] = {}
    for other_id, _, _, predicate, outgoing, current in relationships:
        x, y = positions[other_id]
        # Several relationships with one neighbour: stagger their labels along the edge.
        nth = seen.get(other_id, 0)
        seen[other_id] = nth + 1
        t = 0.5 + 0.14 * nth
        edges.append(Edge(round(cx, 1), round(cy, 1), round(x, 1), round(y, 1),
                          predicate + ("" if current else " (past)"),
                          round(cx + (x - cx) * t, 1), round(cy + (y - cy) * t - 4, 1), outgoing, current))
    return {"nodes": nodes, "edges": edges, "width": WIDTH, "height": HEIGHT}
