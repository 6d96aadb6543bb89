"""LoCoMo (../shared/bench/locomo/locomo-dev.json) as Mnemo interactions, exactly as
../shared/bench/README.md prescribes: one interaction per turn, external_id = dia_id,
channel "chat", channel_id and sender_name = the speaker, thread = the sample id,
occurred_at = the session's date-time with turns a few seconds apart, and a shared
photo's caption appended as " [image: <caption>]"."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "locomo" / "locomo-dev.json"
TURN_SPACING = timedelta(seconds=10)
_SESSION = re.compile(r"^session_(\d+)$")


def available() -> bool:
    return DATA.exists()


def load() -> list[dict]:
    return json.loads(DATA.read_text())


def session_start(text: str) -> datetime:
    # "1:56 pm on 8 May, 2023"
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def turn_content(turn: dict) -> str:
    content = turn["text"]
    if turn.get("blip_caption"):
        content += f" [image: {turn['blip_caption']}]"
    return content


def interactions(sample: dict) -> list[dict]:
    """The sample's turns as POST /api/v1/interactions items, in order."""
    conversation = sample["conversation"]
    sessions = sorted(
        (int(m.group(1)), key) for key in conversation if (m := _SESSION.match(key)) and isinstance(conversation[key], list)
    )
    items = []
    for number, key in sessions:
        start = session_start(conversation[f"session_{number}_date_time"])
        for position, turn in enumerate(conversation[key]):
            items.append({
                "external_id": turn["dia_id"],
                "channel": "chat",
                "channel_id": turn["speaker"],
                "sender_name": turn["speaker"],
                "thread": sample["sample_id"],
                "direction": "inbound",
                "content": turn_content(turn),
                "occurred_at": (start + TURN_SPACING * position).isoformat(),
            })
    return items
