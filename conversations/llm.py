"""LLM variants of the summariser and the idle judge (seed 002: "AI-judged idle detection"
and summaries with tone and pending actions), each with the deterministic version as its
fallback.

Both return a provenance string next to their result, to be stored with it:
"llm:<prompt version>" when the model's answer was used, "extractive" (summaries) or
"heuristic" (idle verdicts) when the fallback was. The model's answer is used only when it
passes strict validation; a provider error or anything malformed means the fallback, never
a half-trusted answer. No Django here: the caller passes the client (`get_llm()`)."""

from __future__ import annotations

import json
import logging
import math
import re
from datetime import datetime, timedelta

from conversations.idle import CLOSED_FLOOR, IdleVerdict, judge_idle
from conversations.summarise import PendingAction, SummaryDraft, Turn, pace, summarise
from core.providers.base import ProviderError
from core.providers.llm import LLMClient

logger = logging.getLogger("mnemo.conversations")

# Bump when a prompt changes, so stored results say which prompt produced them.
SUMMARY_PROMPT_VERSION = "summary-v1"
IDLE_PROMPT_VERSION = "idle-v1"

EXTRACTIVE = "extractive"
HEURISTIC = "heuristic"

# A single message longer than this is cut in the prompt; the summary cannot quote it all anyway.
MAX_MESSAGE_CHARS = 4000
# Past this the transcript outgrows small models' context: summarise extractively instead
# (callers summarise long conversations in slices, each superseding the last).
MAX_TRANSCRIPT_CHARS = 60_000
# The idle judge sees the last few messages only: whether a conversation has paused shows
# at its end.
IDLE_RECENT_MESSAGES = 12
MAX_REASON_CHARS = 300
MAX_ACTION_CHARS = 500
# The model may wait less than the heuristic floor (a clear goodbye) or longer than its
# ceiling ("back tomorrow"), but not below a minute nor past the point a thread closes anyway.
MIN_IDLE_AFTER = timedelta(minutes=1)
MAX_IDLE_AFTER = CLOSED_FLOOR

STATES = ("active", "idle", "closed")
ACTION_KINDS = ("commitment", "question")

SUMMARY_SYSTEM = """You summarise a conversation for an AI agent that will pick it up again later.
Answer with one JSON object and nothing else:
{"summary": string,
 "tone": {"formality": number, "technical_level": number, "sentiment": number},
 "pending_actions": [{"kind": "commitment" or "question", "text": string, "speaker": string,
                      "interaction_id": integer}],
 "salient_interaction_ids": [integer]}
Rules:
- summary: plain prose within the character limit given. First one sentence naming the
  participants, the date or date range and the number of messages. Then the facts, decisions,
  plans and feelings worth remembering, in the order they came up, saying who said what. Leave
  out greetings and small talk. When a previous summary is given, carry its important points
  forward briefly in a part starting with "Earlier:".
- tone: formality from 0 (casual: slang, emoji) to 1 (formal); technical_level from 0 (everyday
  talk) to 1 (code, jargon); sentiment from -1 (negative) to 1 (positive).
- pending_actions: promises or stated intentions still to be carried out ("commitment"), and
  questions to the other party that nobody answered afterwards ("question"). text is that
  sentence; speaker and interaction_id are those of the message it comes from. [] when none.
- salient_interaction_ids: the ids of the messages the summary draws on.
Use only what the transcript and the previous summary say; do not invent anything."""

IDLE_SYSTEM = """You decide whether a conversation has naturally paused.
Answer with one JSON object and nothing else:
{"state": "active" or "idle" or "closed", "reason": string, "idle_after_minutes": number}
- active: the exchange is still going; a reply can be expected soon.
- idle: it has paused: a goodbye was said, or the silence is long for this conversation's rhythm.
- closed: it is over; a new message would start a new conversation.
- idle_after_minutes: after how many minutes of silence since the last message you consider
  this conversation idle.
- reason: one short sentence a person can read.
Be consistent: state is "active" exactly when minutes_since_last_message is below idle_after_minutes.
The rule_of_thumb is a simple heuristic's verdict; follow what the messages say where they say more."""


# The end of a sentence: . ! ? or an ellipsis, closing quotes, then a space or the end.
_SENTENCE_END = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*(?=\s|$)")


class InvalidAnswer(ValueError):
    """The model answered, but not something we can use."""


# --- summaries -----------------------------------------------------------------------------

def llm_summarise(client: LLMClient, turns: list[Turn], *, previous_summary: str | None = None,
                  max_chars: int = 1200) -> tuple[SummaryDraft, str]:
    """A summary written by the model, or the extractive one if the model fails or answers
    badly. Returns (draft, provenance): provenance is "llm:<SUMMARY_PROMPT_VERSION>" or
    "extractive". Pace and messages per hour are always computed from the timestamps."""
    if not turns:
        raise ValueError("a summary needs at least one turn")
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    turns = sorted(turns, key=lambda t: (t.occurred_at, t.id))
    transcript = "\n".join(json.dumps(_message(t), ensure_ascii=False) for t in turns)
    if len(transcript) > MAX_TRANSCRIPT_CHARS:
        logger.info("summary: transcript of %d chars is too long for the LLM; extractive", len(transcript))
        return summarise(turns, previous_summary=previous_summary, max_chars=max_chars), EXTRACTIVE
    user = "\n\n".join(part for part in (
        f"Character limit for summary: {max_chars}",
        f"Previous summary (yours replaces it):\n{previous_summary}" if previous_summary else "",
        f"Transcript, one JSON message per line ({len(turns)} messages):\n{transcript}",
    ) if part)
    try:
        answer = client.complete_json(system=SUMMARY_SYSTEM, user=user)
        draft = _summary_from_answer(answer, turns, max_chars)
    except (ProviderError, InvalidAnswer) as exc:
        logger.warning("summary: LLM unusable (%s); extractive", exc)
        return summarise(turns, previous_summary=previous_summary, max_chars=max_chars), EXTRACTIVE
    return draft, f"llm:{SUMMARY_PROMPT_VERSION}"


def _message(turn: Turn) -> dict:
    return {"id": turn.id, "at": turn.occurred_at.isoformat(timespec="seconds"), "speaker": turn.speaker,
            "direction": turn.direction, "text": turn.content[:MAX_MESSAGE_CHARS]}


def _summary_from_answer(answer: dict, turns: list[Turn], max_chars: int) -> SummaryDraft:
    summary = answer.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise InvalidAnswer("summary is missing or empty")
    tone = answer.get("tone")
    if not isinstance(tone, dict):
        raise InvalidAnswer("tone is not an object")
    speakers = {t.id: t.speaker for t in turns}
    return SummaryDraft(
        text=fit_to_sentences(summary.strip(), max_chars),
        tone={
            "formality": round(_number(tone, "formality", 0.0, 1.0), 3),
            "technical_level": round(_number(tone, "technical_level", 0.0, 1.0), 3),
            "sentiment": round(_number(tone, "sentiment", -1.0, 1.0), 3),
            **pace(turns),
        },
        pending_actions=_actions(answer.get("pending_actions"), speakers),
        salient_turn_ids=_salient(answer, turns),
    )


def fit_to_sentences(text: str, max_chars: int) -> str:
    """`text` if it fits, else its longest prefix of whole sentences that does."""
    if len(text) <= max_chars:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text) if m.end() <= max_chars]
    if not ends:
        raise InvalidAnswer(f"summary is longer than {max_chars} chars and its first sentence alone is too")
    return text[:ends[-1]]


def _number(mapping: dict, key: str, low: float, high: float) -> float:
    value = mapping.get(key)
    # bool is an int in Python; true is not a formality.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidAnswer(f"{key} is not a number")
    if not low <= value <= high:
        raise InvalidAnswer(f"{key}={value} is outside {low}..{high}")
    return float(value)


def _actions(raw, speakers: dict) -> list[PendingAction]:
    if not isinstance(raw, list):
        raise InvalidAnswer("pending_actions is not a list")
    actions = []
    for item in raw:
        if not isinstance(item, dict):
            raise InvalidAnswer("a pending action is not an object")
        kind, text, speaker, interaction_id = (item.get(k) for k in ("kind", "text", "speaker", "interaction_id"))
        if kind not in ACTION_KINDS:
            raise InvalidAnswer(f"pending action kind {kind!r}")
        if not isinstance(text, str) or not text.strip():
            raise InvalidAnswer("a pending action has no text")
        if isinstance(interaction_id, bool) or not isinstance(interaction_id, int) or interaction_id not in speakers:
            raise InvalidAnswer(f"pending action points at unknown interaction {interaction_id!r}")
        if not isinstance(speaker, str) or speaker.strip().casefold() != speakers[interaction_id].strip().casefold():
            raise InvalidAnswer(f"pending action speaker {speaker!r} did not write interaction {interaction_id}")
        text = " ".join(text.split())
        if len(text) > MAX_ACTION_CHARS:
            text = text[:MAX_ACTION_CHARS - 1].rsplit(" ", 1)[0] + "\u2026"
        actions.append(PendingAction(kind=kind, text=text, speaker=speakers[interaction_id],
                                     interaction_id=interaction_id))
    return actions


def _salient(answer: dict, turns: list[Turn]) -> list[int]:
    if "salient_interaction_ids" not in answer:
        # The summary drew on the conversation as a whole.
        return [t.id for t in turns if t.direction != "system"]
    raw = answer["salient_interaction_ids"]
    if not isinstance(raw, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in raw):
        raise InvalidAnswer("salient_interaction_ids is not a list of integers")
    unknown = set(raw) - {t.id for t in turns}
    if unknown:
        raise InvalidAnswer(f"salient_interaction_ids has unknown ids {sorted(unknown)}")
    wanted = set(raw)
    return [t.id for t in turns if t.id in wanted]


# --- idle ------------------------------------------------------------------------------------

def llm_judge_idle(client: LLMClient, times: list[datetime], now: datetime, last_content: str,
                   recent_turns: list[Turn]) -> tuple[IdleVerdict, str]:
    """The model's judgement of whether the conversation has paused, or the rhythm heuristic
    if the model fails or answers badly. Returns (verdict, provenance): provenance is
    "llm:<IDLE_PROMPT_VERSION>" or "heuristic"."""
    heuristic = judge_idle(times, now, last_content)  # also rejects an empty `times`
    silence = now - max(times)
    recent = sorted(recent_turns, key=lambda t: (t.occurred_at, t.id))[-IDLE_RECENT_MESSAGES:]
    ordered = sorted(times)
    facts = {
        "now": now.isoformat(timespec="seconds"),
        "minutes_since_last_message": round(silence.total_seconds() / 60, 1),
        "message_count": len(times),
        "recent_gaps_minutes": [round((b - a).total_seconds() / 60, 1) for a, b in zip(ordered, ordered[1:])][-20:],
        "rule_of_thumb": {"state": heuristic.state, "reason": heuristic.reason,
                          "idle_after_minutes": round(heuristic.idle_after.total_seconds() / 60, 1)},
        "last_message": last_content[:MAX_MESSAGE_CHARS],
        "recent_messages": [_message(t) for t in recent],
    }
    try:
        answer = client.complete_json(system=IDLE_SYSTEM, user=json.dumps(facts, ensure_ascii=False, indent=1))
        verdict = _verdict_from_answer(answer, silence)
    except (ProviderError, InvalidAnswer) as exc:
        logger.warning("idle: LLM unusable (%s); heuristic", exc)
        return heuristic, HEURISTIC
    return verdict, f"llm:{IDLE_PROMPT_VERSION}"


def _verdict_from_answer(answer: dict, silence: timedelta) -> IdleVerdict:
    state = answer.get("state")
    if state not in STATES:
        raise InvalidAnswer(f"state {state!r}")
    reason = answer.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidAnswer("reason is missing or empty")
    reason = " ".join(reason.split())
    if len(reason) > MAX_REASON_CHARS:
        reason = reason[:MAX_REASON_CHARS - 1].rsplit(" ", 1)[0] + "\u2026"
    minutes = _number(answer, "idle_after_minutes", MIN_IDLE_AFTER.total_seconds() / 60,
                      MAX_IDLE_AFTER.total_seconds() / 60)
    idle_after = timedelta(minutes=minutes)
    # A verdict that contradicts its own threshold cannot be trusted either way.
    if (state == "active") != (silence < idle_after):
        raise InvalidAnswer(f"state {state} contradicts idle_after {minutes} min after {silence} of silence")
    return IdleVerdict(state=state, reason=reason, idle_after=idle_after)
