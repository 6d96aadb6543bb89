"""The optional LLM judge of capability gaps (issue 18: "optionally an LLM judge through the
existing OpenAI-compatible provider; rules remain the fallback; the LLM's reason is kept
as evidence").

Candidates are the agent turns the rules flag as refusals, and agent replies that directly
answer a request and that no rule flagged (the implicit refusals the rules miss: "I only speak English and
Spanish for now"), at most `limit` per batch. One call judges them all; each judgement
is checked like any other draft — its shape, the need's and the reason's lengths, no
secret in anything it would store, a quote that is really in the reply. A rule finding
the model answers for properly is replaced by the model's reading (its `need` becomes the
description, rule "gap.llm") or dropped when the model says it is no gap; a finding the
model did not answer for properly stays as the rules found it, and a provider error
leaves every finding as it was.

No Django here: the caller passes the client (`core.providers.get_llm()`), from the
worker's prepare step only — never a request an agent waits on."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from core.privacy import find_secrets
from core.providers.base import ProviderError
from gaps import rules

logger = logging.getLogger("mnemo.gaps")

RULE = "gap.llm"
PROMPT_VERSION = "gap-judge-v1"
MAX_TEXT_CHARS = 2000  # of a request or a reply in the prompt
MAX_NEED_CHARS = rules.MAX_DESCRIPTION_CHARS
MAX_REASON_CHARS = 300
JUDGED = ("gap.refusal",)  # policy refusals and tool errors are facts the model need not weigh

SYSTEM = """You judge whether an AI agent's reply shows a capability gap: something a person asked the agent to do
that it could not do because it lacks a tool, an integration, access or a feature.
Answer with one JSON object and nothing else:
{"judgements": [{"id": integer, "is_gap": boolean, "need": string, "category": string, "reason": string,
                 "quote": string}]}
One judgement per candidate, with the candidate's id.
- is_gap: true only when the agent said it cannot do what was asked for want of a capability. false for
  politeness and idioms ("I can't wait"), a request the agent fulfilled or offered another way to do, a lookup
  that found nothing, and a refusal because of a rule or policy the team chose.
- need: when is_gap, the missing capability as a short phrase starting with a verb ("export invoices as PDF"),
  not the refusal's words; "" otherwise.
- category: one of integration, data_access, feature, knowledge, permission, tool_error, other.
- reason: one short sentence a person can read, saying why.
- quote: the reply's exact words that say it cannot (copied, not paraphrased); "" when none."""


@dataclass(frozen=True)
class Candidate:
    turn_id: int  # the agent's reply
    request_id: int | None
    request: str
    reply: str
    finding: rules.Finding | None  # what the rules found in it, None for a reply they did not flag


@dataclass(frozen=True)
class Verdict:
    is_gap: bool
    need: str = ""
    category: str = "other"
    reason: str = ""
    span: tuple[int, int] | None = None  # of the quote in the reply


def candidates(turns: Sequence[rules.Turn], fresh: set[int], findings: Sequence[rules.Finding]) -> list[Candidate]:
    """The batch's rule refusals, then its agent replies to a request that no rule flagged."""
    by_turn = {f.primary_id: f for f in findings}
    found = []
    for position, turn in enumerate(turns):
        if turn.id not in fresh or turn.direction != "outbound":
            continue
        finding = by_turn.get(turn.id)
        if finding is not None and finding.rule not in JUDGED:
            continue
        request = rules.request_before(turns, position)
        # A reply no rule flagged is weighed only as the direct answer to a request.
        answers = position > 0 and turns[position - 1].direction == "inbound"
        if finding is None and (request is None or not answers or request[0] != turns[position - 1].id):
            continue
        request_id, asked = request if request else (None, "")
        text = next((t.content for t in turns if t.id == request_id), asked)
        found.append(Candidate(turn.id, request_id, text[:MAX_TEXT_CHARS], turn.content[:MAX_TEXT_CHARS], finding))
    return found


def _prompt(found: Sequence[Candidate]) -> str:
    return json.dumps({"candidates": [
        {"id": c.turn_id, "request": c.request, "reply": c.reply,
         "rules": "flagged as a refusal" if c.finding else "not flagged"} for c in found]}, ensure_ascii=False)


def judge(llm, found: Sequence[Candidate]) -> dict[int, Verdict]:
    """The model's usable verdicts by turn id; {} when it failed (the rules stand)."""
    if not found:
        return {}
    try:
        answer = llm.complete_json(system=SYSTEM, user=_prompt(found))
    except ProviderError as exc:
        logger.warning("LLM gap judge failed; the rules' findings stand", extra={"error": str(exc)})
        return {}
    return parse(answer, found)


def _clean(value, cap: int) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text if len(text) <= cap and not find_secrets(text) else None


def _verdict(item, replies: Mapping[int, str]) -> tuple[int, Verdict] | None:
    if not isinstance(item, dict) or isinstance(item.get("id"), bool) or not isinstance(item.get("id"), int):
        return None
    turn_id, is_gap = item["id"], item.get("is_gap")
    if turn_id not in replies or not isinstance(is_gap, bool):
        return None
    if not is_gap:
        return turn_id, Verdict(False)
    need = _clean(item.get("need"), MAX_NEED_CHARS)
    reason = _clean(item.get("reason", ""), MAX_REASON_CHARS * 3)
    quote = item.get("quote") if isinstance(item.get("quote"), str) else ""
    if not need or len(need.rstrip(".!?")) < 3 or reason is None or (quote and find_secrets(quote)):
        return None
    start = replies[turn_id].find(quote.strip()) if quote.strip() else -1
    span = (start, start + len(quote.strip())) if start >= 0 else None
    category = item.get("category") if item.get("category") in rules.CATEGORIES else "other"
    return turn_id, Verdict(True, need.rstrip(".!? "), category, reason[:MAX_REASON_CHARS], span)


def parse(answer, found: Sequence[Candidate]) -> dict[int, Verdict]:
    """Each usable judgement by turn id; anything malformed is left out (that turn keeps
    what the rules found). The first judgement of a turn counts."""
    items = answer.get("judgements") if isinstance(answer, dict) else None
    replies = {c.turn_id: c.reply for c in found}
    verdicts: dict[int, Verdict] = {}
    for item in items if isinstance(items, list) else []:
        judged = _verdict(item, replies)
        if judged is not None and judged[0] not in verdicts:
            verdicts[judged[0]] = judged[1]
    return verdicts


_SENTENCE_END = re.compile(r"[.!?\n]")


def _first_sentence(reply: str) -> tuple[int, int]:
    end = _SENTENCE_END.search(reply)
    return 0, end.start() if end and end.start() > 0 else len(reply)


def apply(findings: Sequence[rules.Finding], found: Sequence[Candidate],
          verdicts: Mapping[int, Verdict]) -> list[rules.Finding]:
    """The findings after the model's verdicts: judged refusals replaced or dropped,
    replies the rules missed added, everything else as the rules found it."""
    judged = {c.turn_id: c for c in found}
    result = []
    for finding in findings:
        verdict = verdicts.get(finding.primary_id) if finding.primary_id in judged else None
        if verdict is None:
            result.append(finding)
        elif verdict.is_gap:
            result.append(replace(finding, description=verdict.need, category=verdict.category, rule=RULE,
                                  reason=verdict.reason or finding.reason))
    flagged = {f.primary_id for f in findings}
    for candidate in found:
        verdict = verdicts.get(candidate.turn_id)
        if candidate.turn_id in flagged or verdict is None or not verdict.is_gap:
            continue
        start, end = verdict.span or _first_sentence(candidate.reply)
        result.append(rules.Finding(
            description=verdict.need, category=verdict.category, rule=RULE, confidence=0.6,
            primary_id=candidate.turn_id, supporting_ids=(candidate.request_id,) if candidate.request_id else (),
            quote=candidate.reply[start:end], span=(start, end), reason=verdict.reason))
    return result
