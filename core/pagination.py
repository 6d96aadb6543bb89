"""Limit/offset pages with a hard maximum: `page` for endpoints that transform rows before
answering (e.g. redaction), where ninja's @paginate cannot reach, and the class @paginate
uses (settings.NINJA_PAGINATION_CLASS). Both bound the offset to what PostgreSQL's OFFSET
(a bigint) takes."""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from ninja import Schema
from ninja import pagination
from pydantic import Field

from core.input_types import Offset


class PageIn(Schema):
    limit: int = Field(settings.NINJA_PAGINATION_PER_PAGE, ge=1, le=settings.NINJA_PAGINATION_MAX_LIMIT)
    offset: Offset = 0


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    class Input(pagination.LimitOffsetPagination.Input):
        offset: Offset = 0


def page(queryset: QuerySet, params: PageIn, transform: Callable[[Any], Any] = lambda row: row) -> dict:
    rows = list(queryset[params.offset:params.offset + params.limit])
    return {"count": queryset.count(), "items": [transform(row) for row in rows]}


def page_number(request) -> int:
    """The dashboard's ?page=N, 1 when absent or not a number."""
    try:
        return max(1, int(request.GET.get("page", "1")))
    except ValueError:
        return 1
