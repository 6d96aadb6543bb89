"""Issue 18, capability gaps → TODOs: pure rules that find, in one conversation's turns,
the places where the agent could not do what it was asked, and name what was asked for.

Three rules, each named in RULES for the dashboard's plain-language "why":
- gap.refusal: the agent says it cannot do something ("I can't export invoices as PDF
  yet", "I don't have access to your calendar", "that isn't supported");
- gap.tool_error: a tool the agent called failed (metadata["tool_error"]);
- gap.policy: the agent declines because of a rule it follows ("I'm not allowed to share
  passwords"). That is a choice, not a missing capability: it is reported so the app can
  skip it or link the censor that holds the rule, never made into a TODO.

Only outbound turns can show a gap: a person writing "I can't log in" has a problem of
their own, which the agent may well solve. Idioms and politeness ("I can't wait", "I
couldn't agree more"), conditions ("if I can't reach them"), hedges ("I can't promise")
and lookups that found nothing ("I couldn't find an order with that number": the
capability worked, the data was not there) are not refusals. A refusal the agent takes back
later in the given turns ("actually, I can: here it is") is no gap either.

The rules choose precision over recall, like memory.extraction: a wrong TODO costs a
reviewer's time and trust, a missed gap will usually be asked for again. Standard library
only, so they run in microseconds and are property-tested (tests/gaps/test_rules.py);
bench/gaps.py measures them on a labelled set and on LoCoMo."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CATEGORIES = ("integration", "data_access", "feature", "knowledge", "permission", "tool_error", "other")

RULES: Mapping[str, str] = {
    "gap.refusal": "The agent said it cannot do what was asked.",
    "gap.tool_error": "A tool the agent called failed while it worked on a request.",
    "gap.policy": "The agent declined because of a rule it follows (a policy, not a missing capability).",
}

MAX_DESCRIPTION_CHARS = 120


@dataclass(frozen=True)
class Turn:
    id: int
    direction: str  # "inbound" (a person to the agent) | "outbound" (the agent) | "system"
    speaker: str
    content: str
    channel: str = ""
    # An agent's tool error: metadata["tool_error"] = str or {"tool": str, "error": str}.
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Finding:
    description: str  # what was asked for ("export invoices as PDF"), not the refusal text
    category: str  # one of CATEGORIES
    rule: str  # "gap.refusal" | "gap.tool_error" | "gap.policy"
    confidence: float  # 0..1
    primary_id: int  # the turn that shows the gap (the refusal, the tool error)
    supporting_ids: tuple[int, ...]  # the inbound request it answers, if found
    quote: str  # the quoted span of the primary turn's content
    span: tuple[int, int]  # [start, end) of `quote` in the primary turn's content
    reason: str  # plain words, for the dashboard


# --- finding the refusal clause -------------------------------------------------------------

_NOT = r"(?:can[’']?t|cannot|can\s+not|could\s*n[’']?t|could\s+not|won[’']?t\s+be\s+able\s+to)"
_DONT = r"(?:don[’']?t|do\s+not|doesn[’']?t|does\s+not)"
_SUBJECT = r"(?:I|we)"
_ABLE = r"(?:unable|not\s+able|not\s+yet\s+able)"

# Each alternative names one way of saying "I cannot"; the named group `object` is what the
# agent cannot do (used for the description when no request is found).
_REFUSAL = re.compile(
    "|".join([
        # "I can't export …", "I cannot …", "I couldn't …", "I won't be able to …"
        rf"\b{_SUBJECT}\s+(?:really\s+|currently\s+|still\s+|actually\s+|just\s+)?{_NOT}\s+(?:yet\s+|currently\s+)?(?P<o1>[^.!?;\n]+)",
        # "I'm unable to …", "I am not able to …", "I was unable to …"
        rf"\b{_SUBJECT}(?:[’']m|[’']re|\s+am|\s+are|\s+was|\s+were)\s+(?:currently\s+|afraid\s+)?{_ABLE}\s+to\s+(?P<o2>[^.!?;\n]+)",
        # "I don't have access to …", "I don't have a tool for …", "we don't support …"
        rf"\b{_SUBJECT}\s+(?:currently\s+|still\s+)?{_DONT}\s+(?:currently\s+|yet\s+)?"
        r"(?P<o3>(?:have\s+(?:any\s+)?(?:access|permission|permissions|a\s+way|any\s+way|the\s+ability|a\s+tool|any\s+tool|"
        r"(?:an?|any)\s+(?:[\w.-]+\s+){0,2}(?:integration|connection)|the\s+rights|rights|information|any\s+information|"
        r"the\s+tools?|tools?|data|any\s+data|visibility)"
        r"|support|offer|integrate|know\s+how\s+to)[^.!?;\n]*)",
        # "I have no way to …", "I have no access to …"
        rf"\b{_SUBJECT}\s+have\s+no\s+(?P<o4>(?:way|access|permission|tool|integration|ability|means|information)[^.!?;\n]*)",
        # "there's no way for me to …"
        r"\bthere(?:[’']s|\s+is)\s+no\s+way\s+(?:for\s+me\s+|for\s+us\s+|I\s+can\s+)?to\s+(?P<o5>[^.!?;\n]+)",
        # "… isn't supported", "… is not available yet", "that's not something I can do"
        r"(?P<o6>[^.!?;\n]{0,80}?)\b(?:is|are)(?:n[’']t|\s+not)\s+(?:yet\s+|currently\s+)?(?:supported|possible\s+for\s+me|something\s+I\s+(?:can|support))\b[^.!?;\n]*",
        r"(?P<o7>[^.!?;\n]{0,80}?)\b(?:that|this|it)[’']s\s+not\s+(?:yet\s+|currently\s+)?(?:supported|something\s+I\s+can\s+do|possible\s+for\s+me)\b[^.!?;\n]*",
        # "that's beyond what I can do", "outside my capabilities"
        r"\b(?:beyond|outside(?:\s+of)?)\s+(?:my|what\s+I\s+can)\s+(?:capabilities|abilities|do|reach)\b[^.!?;\n]*",
        # "I'm not connected to …", "I'm not set up to …", "I'm not integrated with …"
        rf"\b{_SUBJECT}(?:[’']m|\s+am|[’']re|\s+are)\s+not\s+(?:yet\s+|currently\s+)?(?:connected|set\s+up|integrated|configured|hooked\s+up)\s+(?P<o8>[^.!?;\n]*)",
        # Session 18, from the fresh paraphrase set's study half (bench/gaps_paraphrases.py, even
        # rows): agents also say what they lack as a property of the capability, object first.
        # "… isn't one of my abilities", "… isn't among the actions I support"
        r"(?P<o11>[^.!?;\n]{0,80}?)\b(?:is|are)(?:n[’']t|\s+not)\s+(?:yet\s+|currently\s+)?(?:one\s+of|among|part\s+of|within)\s+"
        r"(?:my|the)\s+(?:current\s+)?(?:abilities|capabilities|skills|actions|features|functions|tools|toolset)\b[^.!?;\n]*",
        # "… isn't hooked up for me", "… isn't available to me", "… isn't integrated with me",
        # "… is not something I'm equipped to do", "… isn't a capability I have", "… isn't something I've got"
        r"(?P<o12>[^.!?;\n]{0,80}?)\b(?:is|are)(?:n[’']t|\s+not)\s+(?:yet\s+|currently\s+)?(?:"
        r"(?:(?:hooked|wired)\s+up|integrated|available)\s+(?:to|for|with)\s+me|"
        r"something\s+I(?:[’']m|\s+am)\s+(?:equipped|set\s+up|able)\s+to|something\s+I(?:[’']ve|\s+have)\s+got|"
        r"(?:a|one)\s+(?:thing|capability|feature|skill)\s+I\s+(?:can|have|support))\b[^.!?;\n]*",
        # "… : not a capability this assistant has", "… not a feature I have"
        r"(?P<o13>[^.!?;\n]{0,80}?)\bnot\s+(?:a|one)\s+(?:capability|feature|skill|function)\s+(?:that\s+)?"
        r"(?:I|this\s+(?:assistant|bot|agent))\s+(?:have|has|support|supports|offer|offers)\b[^.!?;\n]*",
        # "… is a feature I haven't been given yet", "that capability hasn't been added"
        r"(?P<o14>[^.!?;\n]{0,80}?)\b(?:feature|capability|ability|integration|tool)\s+(?:(?:that\s+)?I\s+(?:haven[’']t|have\s+not)|"
        r"(?:that\s+)?(?:hasn[’']t|has\s+not))\s+been\s+(?:given|added|built|enabled|granted)\b[^.!?;\n]*",
        # "… is outside my current toolset", "beyond what I'm set up for"
        r"(?P<o15>[^.!?;\n]{0,80}?)\b(?:beyond|outside(?:\s+of)?)\s+(?:my\s+(?:current\s+)?(?:toolset|tools|skills|scope)|"
        r"what\s+I(?:[’']m|\s+am)\s+(?:set\s+up|equipped|built)\s+(?:for|to\s+do))\b[^.!?;\n]*",
        # "I lack any hook into …", "I lack access to …"
        rf"\b{_SUBJECT}\s+lack\s+(?:any\s+|the\s+)?(?P<o16>(?:way|access|permission|tool|integration|ability|means|hook|connection)[^.!?;\n]*)",
        # "No PDF output available on my side"
        r"\bno\s+(?P<o17>[^.!?;\n]{1,60}?)\s+(?:available|support(?:ed)?)\s+(?:on\s+my\s+(?:side|end)|from\s+me|for\s+me)\b[^.!?;\n]*",
        # "I'm not allowed to …", "I won't share …": refusals that a policy may explain
        rf"\b{_SUBJECT}(?:[’']m|\s+am|[’']re|\s+are)\s+not\s+(?:allowed|permitted|authori[sz]ed)\s+to\s+(?P<o9>[^.!?;\n]+)",
        rf"\b{_SUBJECT}\s+(?:won[’']t|will\s+not|must\s+not|mustn[’']t|never)\s+(?P<o10>(?:share|disclose|reveal|give\s+out|send)\b[^.!?;\n]*)",
    ]),
    re.IGNORECASE,
)

# The alternatives that name what is missing before saying it is missing.
_OBJECT_FIRST = {"o6", "o7", "o11", "o12", "o13", "o14", "o15"}

# Idioms and politeness that look like a refusal: "I can't wait", "I couldn't agree more".
_IDIOM_AFTER = re.compile(
    r"\s*(?:wait|thank|thanks|believe|agree|complain|imagine|stress|emphasi[sz]e|overstate|help\s+(?:but|feeling|thinking|smiling)|"
    r"tell\s+you\s+how|say\s+enough|recommend\s+\w+(?:\s+\w+)?\s+enough|praise|be\s+happier|be\s+more|"
    r"get\s+enough|go\s+wrong|picture|let\s+go|stop\b|say\b|(?:have\s+done|do|live)\s+(?:it\s+)?without|take\s+(?:the\s+|any\s+)?credit|be\s+of\s+(?:more|much|further|any\s+more)\s+help|hurt|argue|remember\s+the\s+last|"
    r"promise|guarantee|say\s+for\s+(?:sure|certain)|find|locate|see\s+any|spot\s+any|reproduce|"
    r"have\s+said\s+it\s+better|ask\s+for\s+(?:more|a\s+better))\b",
    re.IGNORECASE,
)
# A refusal under a condition, in reported speech or as a question is not the agent's own
# statement of what it cannot do.
_CONDITION_BEFORE = re.compile(r"\b(?:if|unless|whether|in\s+case|when(?:ever)?|so\s+that|said|says|thought|think)\s*[,]?\s*$", re.IGNORECASE)

# A chosen rule, not a missing capability.
_POLICY = re.compile(
    r"\b(?:not\s+(?:allowed|permitted)|n[’']t\s+(?:allowed|permitted)|(?:our|my|the|company)\s+(?:[\w-]+\s+){0,2}polic(?:y|ies)|"
    r"for\s+(?:security|privacy|safety|compliance|legal)\s+reasons|against\s+(?:the\s+)?(?:rules|policy|policies)|"
    r"(?:I|we)\s+(?:won[’']t|will\s+not|must\s+not|mustn[’']t|shouldn[’']t|never)\s+(?:share|give\s+out|disclose|reveal|send)|"
    r"(?:share|disclose|reveal|give\s+out|read\s+out|send)\s+(?:\w+\s+){0,3}(?:passwords?|credentials|card\s+numbers?|social\s+security|ssn|pins?\b|"
    r"personal\s+(?:data|information|details)|other\s+(?:customers|users|people)[’']?s?))",
    re.IGNORECASE,
)

# Where a refusal clause ends: a sentence end, a dash, "but …", or a comma before a new subject.
_CLAUSE_END = re.compile(
    r"[.!?;\n]|\s+[-–—]\s+|,?\s+(?:but|however|though|although|so|because|since|as\s+I)\b|\(|"
    r",\s+(?:unfortunately|sorry|I[’']m\s+afraid)\b|"
    r",\s+(?:I|we|you|it|this|that|there|my|our)\b",
    re.IGNORECASE)


def refusal_span(text: str) -> tuple[int, int] | None:
    """The first clause of an outbound message in which the agent says it cannot do
    something, as [start, end) offsets; None when there is none. Idioms ("I can't wait"),
    hedges ("I can't promise"), lookups that found nothing ("I couldn't find …"), and
    refusals under a condition ("if I can't …") do not count."""
    for match in _REFUSAL.finditer(text):
        start, end = match.span()
        obj = _object(match)
        if obj is not None and _object_group(match) not in _OBJECT_FIRST and not re.search(r"\w", obj):
            continue  # "I can't." names nothing
        if obj is not None and _IDIOM_AFTER.match(text, match.start(_object_group(match))):
            continue
        if _CONDITION_BEFORE.search(text[max(0, start - 30):start]):
            continue
        if text[end:end + 1] == "?":  # "… you can't do that?" asks, it does not refuse
            continue
        stop = _CLAUSE_END.search(text, _object_start(match, start), end)
        if stop and stop.start() > start:
            end = stop.start()
        start, end = _strip_span(text, start, end)
        if end > start:
            return start, end
    return None


def _object_group(match: re.Match) -> str:
    return next((name for name, value in match.groupdict().items() if value is not None), "")


def _object(match: re.Match) -> str | None:
    name = _object_group(match)
    return match[name] if name else None


def _object_start(match: re.Match, default: int) -> int:
    """Clause ends are looked for after the refused verb, so "… isn't supported" keeps
    its subject."""
    name = _object_group(match)
    if name in _OBJECT_FIRST:
        return match.end(name)
    return match.start(name) if name else default


_INTERJECTION = re.compile(
    r"(?:\s*(?:sorry|unfortunately|apologies|I[’']m\s+afraid|afraid|oh|hmm|well|ah|no|nope|alas|but|and|so|ok|okay)\b[,!:]?)+\s*",
    re.IGNORECASE)


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The clause without its trailing punctuation and a leading "Sorry," or "Unfortunately,"."""
    while end > start and (text[end - 1].isspace() or text[end - 1] in ",:-–—"):
        end -= 1
    lead = _INTERJECTION.match(text, start, end)
    if lead and lead.end() < end:
        start = lead.end()
    while start < end and (text[start].isspace() or text[start] == ","):
        start += 1
    return start, end


# --- the request a refusal answers ----------------------------------------------------------

_GREETING = re.compile(
    r"^\s*(?:(?:hi|hey|hello|yo|ok|okay|so|also|and|oh|um|hmm|thanks|thank\s+you|great|cool|sure|one\s+more\s+thing|another\s+thing|"
    r"quick\s+question|follow[- ]up|btw|by\s+the\s+way)\b[\s,!:.—-]*)+",
    re.IGNORECASE,
)
# "@devbot", "<@U123>", or a name the person calls the agent by: "devbot, file a ticket".
_MENTION = re.compile(r"^\s*(?:@[\w.-]+|<@\w+>)[\s,:]*|^\s*[\w.-]+\s*,\s*(?=\w)")
# "can you …", "could you please …", "I need you to …", "is it possible to …"
_ASK = re.compile(
    r"\b(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+|kindly\s+|just\s+|also\s+|maybe\s+)?"
    r"|\b(?:are\s+you\s+able\s+to|is\s+it\s+possible\s+(?:for\s+you\s+)?to|is\s+there\s+(?:a|any)\s+way\s+(?:for\s+you\s+)?to|"
    r"do\s+you\s+know\s+how\s+to|I\s+(?:need|want|would\s+like|[’']d\s+like)\s+(?:you\s+)?to|I[’']d\s+love\s+(?:for\s+)?you\s+to|"
    r"(?:can|could)\s+I\s+get\s+you\s+to|any\s+chance\s+you\s+(?:can|could)|would\s+you\s+mind|"
    r"please\s+(?:could\s+you\s+|can\s+you\s+)?|pls\s+|help\s+me(?:\s+to)?|mind\s+(?:\w+ing))\s*",
    re.IGNORECASE,
)
# An imperative: the sentence starts with a verb an assistant is asked to do.
_IMPERATIVE = re.compile(
    r"^(?:add|book|cancel|change|check|connect|convert|create|delete|download|email|export|fetch|find|fix|forward|generate|get|"
    r"import|invite|list|look\s+up|make|merge|move|open|order|pay|post|print|pull|push|put|read|refund|remind|remove|rename|"
    r"renew|reply|reschedule|reset|restart|restore|run|schedule|send|set\s+up|set|share|show|sign|summari[sz]e|sync|text|"
    r"transfer|translate|update|upgrade|upload|turn|call|deploy|rollback|roll\s+back|revert|attach|archive|tag|assign|close|"
    r"file|log|track|translate|write|draft|pull\s+up|buy|reserve|transcribe|play|join|record|notify|approve|migrate|rotate|grant)\b",
    re.IGNORECASE,
)
# A sentence ends at . ! ? before a space or the end: "release 2.14.0" is one sentence.
_SENTENCE = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+[.!?]*")
_TRAILING = re.compile(
    r"(?i:[\s,]+(?:please|pls|for\s+me|for\s+us|thanks|thank\s+you|thx|asap|if\s+(?:you\s+can|possible)|right\s+now|real\s+quick|quickly))+\s*$|"
    r"[\s.!?,;:…]+$|,\s+[A-Z][a-z]+$",
)


@dataclass(frozen=True)
class _Request:
    turn_id: int
    ask: str  # the clause with the ask, politeness stripped; "" when the turn asks nothing
    question: str  # the turn's last question ("what is my balance"), "" when none


def _ask_in(text: str) -> str:
    """The clause of a message that asks for something, without the asking: "Hi! Could
    you please export my invoices as PDF?" → "export my invoices as PDF"."""
    imperative = bare = ""
    for sentence in _SENTENCE.findall(text):
        sentence = _MENTION.sub("", _GREETING.sub("", _MENTION.sub("", sentence))).strip()
        ask = _ASK.search(sentence)
        if ask:
            return _tidy(sentence[ask.end():])
        if not imperative and _IMPERATIVE.match(sentence):
            imperative = _tidy(sentence)
        if not bare and _bare_imperative(sentence):
            bare = _tidy(sentence)
    return imperative or bare


# Words a statement or a question starts with; an imperative starts with none of them.
_NOT_A_VERB = frozenset("""
i i'm i've i'd i'll im we we're our ours my me you you're your he she they it it's its this that these those there here the a
an some any what what's why how when where who which whose is are was were do does did can could would will should has have
had no yes not thanks thank ok okay sure great cool nice good fine hi hey hello sorry well so and but or also just
""".split())


def _bare_imperative(sentence: str) -> bool:
    """A short sentence that starts with a word no statement starts with — "ship release
    2.14.0 to prod", "rerun the failed job" — read as an imperative. Verbs outside
    _IMPERATIVE's list are only guessed at this way, so it ranks below that list."""
    words = sentence.split()
    if not 2 <= len(words) <= 20 or sentence.rstrip().endswith("?"):
        return False
    first = words[0].casefold().replace("’", "'").strip(",:;!")
    return first.isalpha() and first not in _NOT_A_VERB and not first.endswith(("ed", "ly"))


def _question_in(text: str) -> str:
    """The last question of a message: a request that names no ask ("what's my balance?")."""
    questions = [s for s in _SENTENCE.findall(text) if s.rstrip().endswith("?")]
    return _tidy(_GREETING.sub("", _MENTION.sub("", questions[-1]))) if questions else ""


def _tidy(phrase: str) -> str:
    phrase = phrase.strip()
    for _ in range(3):
        phrase = _TRAILING.sub("", phrase).strip()
    phrase = re.sub(r"^(?:please|kindly|just|also)\s+", "", phrase, flags=re.IGNORECASE)
    if len(phrase) > MAX_DESCRIPTION_CHARS:
        cut = phrase.rfind(" ", 0, MAX_DESCRIPTION_CHARS)
        phrase = phrase[:cut if cut > 40 else MAX_DESCRIPTION_CHARS].rstrip(" ,;:") + "…"
    return phrase


# How many of a person's latest turns are searched for the ask a refusal answers: the
# agent may have asked for an email address or an order number in between.
REQUEST_LOOKBACK = 3


def _latest_request(turns: Sequence[Turn], before: int) -> _Request | None:
    """The latest inbound turn before position `before` that asks for something (among
    the last REQUEST_LOOKBACK), else the latest that asks a question, else the latest."""
    inbound = [turn for turn in reversed(turns[:before]) if turn.direction == "inbound"][:REQUEST_LOOKBACK]
    requests = [_Request(turn.id, _ask_in(turn.content), _question_in(turn.content)) for turn in inbound]
    return next((r for r in requests if r.ask), None) or next((r for r in requests if r.question), None) or \
        (requests[0] if requests else None)


_OBJECT_LEAD = re.compile(
    r"^(?:have\s+(?:any\s+)?(?:a\s+way|any\s+way|the\s+ability|the\s+means|the\s+tools?|tools?|a\s+tool|any\s+tool|the\s+rights|rights|means|way)\s+(?:to|for)\s+|"
    r"have\s+(?:any\s+)?(?:access|permission|permissions|visibility)\s+(?:to|for|into|on)\s+|"
    r"have\s+(?:an?\s+|any\s+)?(?:integration|connection)\s+(?:with|to|for)\s+|have\s+(?:an?\s+|any\s+)|"
    r"have\s+(?:any\s+)?(?:information|data)\s+(?:about|on|for)\s+|"
    r"(?:way|access|permission|tool|integration|ability|means|information)\s+(?:to|for|with|into|on|about)\s+|"
    r"(?:yet|currently|do|actually|really)\s+|know\s+how\s+to\s+|to\s+)",
    re.IGNORECASE,
)


def _refusal_object(content: str, span: tuple[int, int]) -> str:
    """What the refusal says cannot be done, as a phrase: "I don't have access to your
    calendar" → "access your calendar"; "PDF export isn't supported" → "PDF export"."""
    clause = content[span[0]:span[1]]
    match = _REFUSAL.search(clause)
    obj = (_object(match) or "") if match else ""
    name = _object_group(match) if match else ""
    access = bool(re.match(r"have\s+(?:any\s+)?(?:access|visibility)\b|access\b", obj, re.IGNORECASE))
    for _ in range(3):
        obj = _OBJECT_LEAD.sub("", obj.strip())
    obj = re.sub(r"^(?:that|this|it|which)\s+", "", obj, flags=re.IGNORECASE) if name in _OBJECT_FIRST else obj
    obj = _tidy(obj)
    if access and obj:
        obj = _tidy(f"access {obj}")
    if not obj or obj.lower() in {"that", "this", "it", "do that", "do this", "help with that", "help with this"}:
        return ""
    return obj


_CLAUSE_SPLIT = re.compile(r",\s*(?:and\s+|then\s+)?|\s+and\s+(?:then\s+|also\s+)?|\s+then\s+|;\s*", re.IGNORECASE)


def _closest_clause(ask: str, refused: str) -> str:
    """A request that asks for several things ("book the flight and add it to my calendar")
    is narrowed to the part the refusal is about, when the words show which one."""
    clauses = [c for c in _CLAUSE_SPLIT.split(ask) if c and c.strip()]
    if len(clauses) < 2 or not refused:
        return ask
    refused_words = set(_key_words(refused))
    scored = [(len(refused_words & set(_key_words(clause))), clause) for clause in clauses]
    best_overlap, best = max(scored, key=lambda item: item[0])
    if best_overlap == 0 or sum(1 for overlap, _ in scored if overlap == best_overlap) > 1:
        return ask
    return _tidy(best)


# --- categories ---------------------------------------------------------------------------

_SERVICES = (
    r"slack|jira|confluence|salesforce|zendesk|github|gitlab|bitbucket|google\s+(?:drive|docs|sheets|calendar)|gmail|outlook|"
    r"office\s*365|teams|zoom|stripe|paypal|hubspot|trello|asana|notion|shopify|quickbooks|xero|dropbox|onedrive|sharepoint|"
    r"whatsapp|telegram|spotify|uber|lyft|airbnb|opentable|pagerduty|datadog|sentry|linear|figma|intercom|twilio|venmo|"
    r"integration|integrated|connected|connect\s+to|sync\s+with|hooked\s+up|third[- ]party|api\s+for"
)
_CATEGORY_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("permission", re.compile(
        r"\bpermissions?\b|\bnot\s+(?:authori[sz]ed|an?\s+admin)|\b(?:admin|write|read)\s+(?:rights|access)\b|"
        r"\bthe\s+rights\b|\bforbidden\b|\baccess\s+denied\b|\bscopes?\b", re.IGNORECASE)),
    ("integration", re.compile(rf"\b(?:{_SERVICES})\b", re.IGNORECASE)),
    ("data_access", re.compile(
        r"\baccess\b|\bvisibility\b|\bcan[’']?t\s+(?:see|read|open|view)\b|\bcannot\s+(?:see|read|open|view)\b|"
        r"\byour\s+(?:calendar|inbox|email|emails|files?|account|contacts|messages|photos|bank|records|history|location)\b|"
        r"\b(?:logs|database|records)\b", re.IGNORECASE)),
    ("knowledge", re.compile(
        r"\bdon[’']?t\s+(?:know|have\s+(?:any\s+)?(?:information|data|details))|\bno\s+information\b|\bnot\s+sure\b|"
        r"\bknowledge\b|\bknow\s+how\b", re.IGNORECASE)),
)


def category_of(refusal: str, description: str) -> str:
    """The kind of gap, from the refusal's words and what was asked: permission before
    integration before data access before knowledge; anything else the agent could not do
    is a missing feature."""
    text = f"{refusal} {description}"
    for name, pattern in _CATEGORY_RULES:
        if pattern.search(text):
            return name
    return "feature" if refusal else "other"


# --- fulfilled later ----------------------------------------------------------------------

# The agent takes a refusal back: "actually, I can", "scratch that", "I managed to".
_TAKE_BACK = re.compile(
    r"\b(?:actually|on\s+second\s+thought|scratch\s+that|never\s*mind|wait|correction|update|good\s+news|turns\s+out|"
    r"I\s+was\s+wrong|my\s+mistake|my\s+bad|I\s+stand\s+corrected)\b[^.!?\n]{0,80}?"
    r"\b(?:I\s+(?:can|could|do|did|was\s+able|managed|have|[’']ve)|it\s+(?:is|does|works)|here|done)\b"
    r"|\bI\s+(?:was\s+able\s+to|managed\s+to|found\s+a\s+way\s+to)\b",
    re.IGNORECASE,
)
_DONE = re.compile(r"\b(?:done|here\s+(?:it\s+is|you\s+go|is|are)|I[’']ve\s+(?:\w+ed|sent|made|set|put|built|written|run)|all\s+set)\b",
                   re.IGNORECASE)
_OFFER = re.compile(r"\b(?:I|we)\s+(?:can|could)\b(?!\s*(?:[’']?t|not))|\bwould\s+you\s+like\b|\bshall\s+I\b", re.IGNORECASE)
_INSTEAD = re.compile(r"\binstead\b|\balternative(?:ly)?\b|\bworkaround\b|\bmanually\b", re.IGNORECASE)


def _fulfilled(turns: Sequence[Turn], position: int, span: tuple[int, int], description: str) -> bool:
    """Whether the agent does what it refused, after the refusal in the same turn or in a
    later outbound turn: a take-back ("actually, I can …"), or a "done"/"here it is" in a
    sentence that names what was asked — not an offered alternative ("… instead")."""
    wanted = {word for word in _key_words(description) if not word.isdigit()}
    # Half the request's words, and at least two when it has two: one shared word ("release")
    # is too little to say the same thing was done.
    needed = max(min(2, len(wanted)), (len(wanted) + 1) // 2)
    rest = turns[position].content[span[1]:]
    # When the refusal offers something else ("I can draft it for you"), a later "here it
    # is" delivers that, not what was refused: only a take-back counts then.
    offered = bool(_INSTEAD.search(rest) or _OFFER.search(rest))
    later = [rest] + [t.content for t in turns[position + 1:] if t.direction == "outbound"]
    for text in later:
        if _INSTEAD.search(text) or refusal_span(text):
            continue
        if _TAKE_BACK.search(text):
            return True
        if not offered and wanted and any(
            _DONE.search(sentence) and len(wanted & set(_key_words(sentence))) >= needed for sentence in _SENTENCE.findall(text)
        ):
            return True
    return False


# --- need keys ----------------------------------------------------------------------------

_STOP = frozenset("""
a an the my our your their his her its me us you i we it this that these those some any all of to for from in into on onto
as at by with about via and or but please kindly pls just also maybe possibly really quickly asap can could would will shall
should may might be is are was were been am do does did have has had get got make sure able thanks thank hey hi hello
there here so then again now today new one ones same other up out over them they what which when how whether if
""".split())
_IRREGULAR = {
    # Two words for one need, each pair seen in requests for the same thing; kept tiny.
    "download": "export", "downloading": "export",
    # Words that say nothing about the need ("in PDF format", "copies of my invoices").
    "format": "", "copy": "", "copies": "",
    # Irregular verbs, spellings, and words the plural fold would break.
    "sent": "send", "made": "make", "ran": "run", "built": "build", "written": "write", "wrote": "write",
    "bought": "buy", "paid": "pay", "set": "set", "put": "put", "e-mail": "email", "emails": "email",
    "emailing": "email", "emailed": "email", "pdfs": "pdf", "calender": "calendar", "data": "data",
    "status": "status", "analysis": "analysis", "news": "news", "series": "series",
}
_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


def _fold(word: str) -> str:
    """Simple plural and verb-form folding, then a final "e" dropped: invoices, invoice →
    invoic; exporting, exported → export; replies → reply; logging → log. Crude on purpose:
    the key is for comparing, not for reading, and the same fold on both sides is what
    makes two wordings equal."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("ches", "shes", "xes", "sses", "zes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("ied") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ing") and len(word) > 5:
        word = _undouble(word[:-3])
    elif word.endswith("ed") and len(word) > 4:
        word = _undouble(word[:-2])
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def _undouble(stem: str) -> str:
    """"logg" (from logging) → "log"; "fill", "pass" keep theirs."""
    return stem[:-1] if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz" else stem


def _key_words(text: str) -> list[str]:
    words = _WORD.findall(text.casefold().replace("’", "'"))
    folded = (_fold(word) for word in words if word not in _STOP and not word.endswith("n't"))
    return [word for word in folded if word]


def need_key(description: str) -> str:
    """A normalised key for exact dedup: lower case, stop words and politeness dropped,
    simple plural/verb-form folding, words sorted — "Export my invoices to PDF" and
    "export invoices as pdf" give the same key."""
    return " ".join(sorted(set(_key_words(description))))


# --- detection ----------------------------------------------------------------------------


def _tool_error(turn: Turn) -> tuple[str, str] | None:
    """(tool, error) when the turn's metadata records a failed tool call."""
    error = turn.metadata.get("tool_error") if isinstance(turn.metadata, Mapping) else None
    if not error:
        return None
    if isinstance(error, Mapping):
        return str(error.get("tool") or ""), str(error.get("error") or "")
    return "", str(error)


def _tool_retried(turns: Sequence[Turn], position: int, tool: str) -> bool:
    """A later call of the same tool that did not fail: the error was passing."""
    return bool(tool) and any(
        later.metadata.get("tool") == tool and not later.metadata.get("tool_error") for later in turns[position + 1:]
        if isinstance(later.metadata, Mapping)
    )


def _first_sentence_span(content: str) -> tuple[int, int]:
    match = re.search(r"\S[^.!?\n]*[.!?]?", content)
    return match.span() if match else (0, 0)


def detect(turns: Sequence[Turn]) -> list[Finding]:
    """One conversation's turns in order (a batch plus the turns before it for context).
    A refusal is paired with the latest inbound request before it (the request's ask becomes
    the description); a refusal the agent fulfils later in the given turns is no gap."""
    findings: list[Finding] = []
    for position, turn in enumerate(turns):
        finding = _tool_error_finding(turns, position) or _refusal_finding(turns, position)
        if finding:
            findings.append(finding)
    return findings


def _describe(turns: Sequence[Turn], position: int, refused: str) -> tuple[str, tuple[int, ...], bool]:
    """(description, supporting ids, whether a request was found)."""
    request = _latest_request(turns, position)
    supporting = (request.turn_id,) if request else ()
    if request and request.ask:
        return _closest_clause(request.ask, refused), supporting, True
    if not refused and request and request.question:
        return request.question, supporting, True
    return refused, supporting, False


def _refusal_finding(turns: Sequence[Turn], position: int) -> Finding | None:
    """gap.refusal / gap.policy: an outbound turn with a refusal clause that is not taken back."""
    turn = turns[position]
    if turn.direction != "outbound":
        return None
    span = refusal_span(turn.content)
    if span is None:
        return None
    quote = turn.content[span[0]:span[1]]
    refused = _refusal_object(turn.content, span)
    description, supporting, asked = _describe(turns, position, refused)
    if not description:
        description = _tidy(quote) or "an unnamed request"
    sentence = _sentence_around(turn.content, span)
    if _POLICY.search(sentence):
        return Finding(description=description, category="permission", rule="gap.policy",
                       confidence=0.8 if asked else 0.6, primary_id=turn.id, supporting_ids=supporting,
                       quote=quote, span=span, reason=f"the agent declined because of a rule it follows: “{quote}”")
    if _fulfilled(turns, position, span, description):
        return None
    return Finding(description=description, category=category_of(quote, description), rule="gap.refusal",
                   confidence=0.8 if asked else 0.6, primary_id=turn.id, supporting_ids=supporting,
                   quote=quote, span=span, reason=f"the agent said it cannot do this: “{quote}”")


def _sentence_around(content: str, span: tuple[int, int]) -> str:
    start = max(content.rfind(mark, 0, span[0]) for mark in ".!?\n") + 1
    ends = [i for i in (content.find(mark, span[1]) for mark in ".!?\n") if i != -1]
    return content[start:min(ends) if ends else len(content)]


def _tool_error_finding(turns: Sequence[Turn], position: int) -> Finding | None:
    """gap.tool_error: a turn whose metadata records a failed tool call that no later call of
    the same tool made good."""
    turn = turns[position]
    failed = _tool_error(turn)
    if failed is None or turn.direction == "inbound":
        return None
    tool, error = failed
    if _tool_retried(turns, position, tool):
        return None
    span = refusal_span(turn.content) or _first_sentence_span(turn.content)
    refused = _refusal_object(turn.content, span) if refusal_span(turn.content) else ""
    description, supporting, asked = _describe(turns, position, refused)
    if not description:
        description = _tidy(f"use {tool}" if tool else error) or "an unnamed tool call"
    what = f"{tool}: {error}" if tool else error
    return Finding(description=description, category="tool_error", rule="gap.tool_error",
                   confidence=0.9 if asked else 0.7, primary_id=turn.id, supporting_ids=supporting,
                   quote=turn.content[span[0]:span[1]], span=span,
                   reason=f"a tool failed while the agent worked on this: {_tidy(what) or 'no error text'}")


def same_need_text(description: str, quote: str = "") -> str:
    """What two sightings of one need are compared by (their embeddings): the agent's own
    refusal when there is one. People ask in their own words ("export them as PDF", "get
    our invoices in PDF format"), but one agent names what it cannot do in its own, steadier
    vocabulary ("I can't export invoices as PDF"): on the labelled set the refusals of one
    need lie nearer each other than the requests do (bench/gaps.py --embed)."""
    return quote.strip() or description


def request_before(turns: Sequence[Turn], position: int) -> tuple[int, str] | None:
    """(turn id, what was asked) of the request an agent turn at `position` answers, for the
    LLM judge (gaps/judge.py); None when no recent inbound turn asks for anything."""
    request = _latest_request(turns, position)
    return (request.turn_id, request.ask) if request and request.ask else None
