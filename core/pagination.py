"""Limit/offset pages with a hard maximum, for endpoints that transform rows before
answering (e.g. redaction), where ninja's @paginate cannot reach."""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from ninja import Schema
from pydantic import Field


class PageIn(Schema):
    limit: int = Field(settings.NINJA_PAGINATION_PER_PAGE, ge=1, le=settings.NINJA_PAGINATION_MAX_LIMIT)
    offset: int = Field(0, ge=0)


def page(queryset: QuerySet, params: PageIn, transform: Callable[[Any], Any] = lambda row: row) -> dict:
    rows = list(queryset[params.offset:params.offset + params.limit])
    return {"count": queryset.count(), "items": [transform(row) for row in rows]}
