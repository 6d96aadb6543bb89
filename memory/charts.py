"""The workspace's memories over time, drawn for the maintenance page and the memories page."""

from __future__ import annotations

from core.charts import counts_chart
from memory.selectors import memory_growth


def memory_growth_charts(*, workspace_id: int, days: int = 90) -> dict[str, str]:
    """{"by_status": chart, "by_type": chart} of memory_growth()."""
    labels, by_status, by_type = memory_growth(workspace_id=workspace_id, days=days)
    return {"by_status": counts_chart(labels, by_status, label="Memories by status"),
            "by_type": counts_chart(labels, by_type, label="Active memories by type")}
