"""False positives of the privacy filter on ordinary conversation: every LoCoMo turn.

LoCoMo holds long chats between two people about their lives; none of it is a secret, so
every turn `find_secrets` flags is a false positive (the target is zero). Turns that
`redact` would change are counted per category for information only: a chat may well
mention an email address or a phone number.

    .venv/bin/python bench/privacy_false_positives.py

Each turn is scanned the way it is ingested: its text, plus ` [image: <caption>]` when
the turn shared a picture. Prints dia_ids and rule names, never the turns' text.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.privacy import find_secrets, redact  # noqa: E402  (needs the path above)

DATA = Path(__file__).resolve().parents[1].parent / "shared/bench/locomo/locomo-dev.json"
SESSION_KEY = re.compile(r"^session_\d+$")
PRIVATE_TAG = re.compile(r"<\s*/?\s*private\b", re.IGNORECASE)


def turns(samples: list[dict]):
    """(sample_id, dia_id, ingested text) for every turn of every session."""
    for sample in samples:
        conversation = sample["conversation"]
        for key, session in conversation.items():
            if not SESSION_KEY.match(key) or not isinstance(session, list):
                continue
            for turn in session:
                text = turn.get("text", "")
                if turn.get("blip_caption"):
                    text += f" [image: {turn['blip_caption']}]"
                yield sample.get("sample_id", "?"), turn.get("dia_id", "?"), text


MASKS = {"emails": "[email]", "phones": "[phone]", "ips": "[ip]"}
SECRET_WORDS = re.compile(r"pass|pwd|secret|token|key|auth|credential", re.IGNORECASE)


def redaction_categories(original: str, redacted: str) -> set[str]:
    """The categories redact() masked; a mask already written in the original doesn't count."""
    return {name for name, mask in MASKS.items() if redacted.count(mask) > original.count(mask)}


def main() -> int:
    if not DATA.exists():
        print(f"LoCoMo data not found at {DATA}; nothing to measure.")
        return 0
    samples = json.loads(DATA.read_text())
    all_turns = list(turns(samples))

    secret_hits: dict[str, list[str]] = defaultdict(list)
    redacted_turns: Counter[str] = Counter()
    private_turns: list[str] = []
    started = time.perf_counter()
    for sample_id, dia_id, text in all_turns:
        for match in find_secrets(text):
            secret_hits[match.rule].append(f"{sample_id}/{dia_id}")
        for category in redaction_categories(text, redact(text)):
            redacted_turns[category] += 1
        if PRIVATE_TAG.search(text):
            private_turns.append(f"{sample_id}/{dia_id}")
    elapsed = time.perf_counter() - started

    scan_started = time.perf_counter()
    for _, _, text in all_turns:
        find_secrets(text)
    scan_elapsed = time.perf_counter() - scan_started

    false_positives = sum(len(hits) for hits in secret_hits.values())
    print(f"data: {DATA.name}, {len(samples)} samples")
    print(f"turns scanned: {len(all_turns)}")
    print(f"secret false positives: {false_positives}")
    for rule, where in sorted(secret_hits.items()):
        print(f"  {rule}: {len(where)} ({', '.join(where[:20])}{' …' if len(where) > 20 else ''})")
    print(
        "turns redact() would change (informational): "
        f"emails {redacted_turns['emails']}, phones {redacted_turns['phones']}, ips {redacted_turns['ips']}"
    )
    named = sum(1 for _, _, text in all_turns if SECRET_WORDS.search(text))
    print(f"turns naming a secret-looking word (pass, token, key, auth…), the generic rule's candidates: {named}")
    print(f"turns containing a <private> tag: {len(private_turns)} {' '.join(private_turns)}".rstrip())
    print(f"find_secrets alone: {len(all_turns) / scan_elapsed:,.0f} turns/s ({scan_elapsed * 1000:.0f} ms)")
    print(f"find_secrets + redact + tag check: {len(all_turns) / elapsed:,.0f} turns/s ({elapsed * 1000:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
