"""Rules that find keyed profile facts only: email, phone, name and preferred name,
timezone, communication style and technical level. Rules that also find a relationship
(employer, role, location) live in `relationships`."""

from __future__ import annotations

import re
from collections.abc import Iterator

from entities.extraction._common import _I, _IM, _SP, Candidate, _matches, _profile
from entities.extraction._names import _person_at


# --- email and phone --------------------------------------------------------------------

_EMAIL = r"[A-Za-z0-9][A-Za-z0-9._%+\-]*@[A-Za-z0-9][A-Za-z0-9\-]*(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9\-])"
# What each family of rules looks for, for the review queue's plain-language "why"
# (`profile.<key>.<cue>` is explained by its `profile.<key>` line).
RULES = {
    "profile.email": "says their email address (“my email is …”, “reach me at …”)",
    "profile.phone": "says their phone number (“my number is …”, “call me at …”)",
    "profile.name": "says their name (“my name is …”, “I'm called …”)",
    "profile.preferred_name": "says what they like to be called (“call me …”, “I go by …”)",
    "profile.timezone": "says which time zone they are on (“I'm on Pacific time”, “my timezone is CET”)",
    "profile.communication_style": "says how they like to be answered (“keep it short”, “be casual”)",
    "profile.technical_level": "says how technical they are (“I'm new to this”, “I'm a senior engineer”)",
}

_EMAIL_CUES = (
    (re.compile(rf"\bmy(?:{_SP}(?:work|personal|new|main|private|business))?{_SP}e-?mail(?:{_SP}address)?{_SP}is{_SP}(?P<value>{_EMAIL})", _I), "stated", 0.95),
    (re.compile(rf"\b(?:e-?mail|reach|contact|find|ping|write\s+to)\s+me\s+(?:at|on|via)\s+(?P<value>{_EMAIL})", _I), "reach_me", 0.9),
)
_PHONE = r"\+?\(?[0-9](?:[0-9 ().\-]{5,22})[0-9](?![\w])"
_PHONE_CUES = (
    (re.compile(rf"\bmy(?:{_SP}(?:work|personal|new|mobile|cell|home))?{_SP}(?:phone(?:{_SP}number)?|number|mobile|cell|cell{_SP}phone){_SP}is{_SP}(?P<value>{_PHONE})", _I), "stated", 0.9),
    (re.compile(rf"\b(?:call|text|reach|ring|contact)\s+me\s+(?:at|on)\s+(?P<value>{_PHONE})", _I), "call_me", 0.85),
)


def _emails(text: str) -> Iterator[Candidate]:
    for pattern, rule, confidence in _EMAIL_CUES:
        for m in _matches(pattern, text):
            value = m.group("value").rstrip(".")
            end = m.start("value") + len(value)
            yield _profile(text, "email", value.lower(), m.start(), end, rule, confidence)


def _phones(text: str) -> Iterator[Candidate]:
    for pattern, rule, confidence in _PHONE_CUES:
        for m in _matches(pattern, text):
            number = m.group("value")
            digits = "".join(c for c in number if c in "0123456789")
            if not 7 <= len(digits) <= 15:
                continue
            value = ("+" if number.startswith("+") else "") + digits
            yield _profile(text, "phone", value, m.start(), m.end("value"), rule, confidence)


# --- names ------------------------------------------------------------------------------

_NAME_CUES = (
    (re.compile(rf"\bmy(?:{_SP}full)?{_SP}name(?:{_SP}is|['’]s){_SP}", _I), "name", "my_name_is", 0.95),
    (re.compile(rf"{_IM}{_SP}called{_SP}", _I), "name", "called", 0.8),
    (re.compile(rf"\bI{_SP}go{_SP}by{_SP}", _I), "preferred_name", "go_by", 0.9),
    (re.compile(rf"\bI{_SP}prefer{_SP}(?:to{_SP}be|being){_SP}called{_SP}", _I), "preferred_name", "prefer_called", 0.9),
    (re.compile(rf"(?<!\bnot )(?<!\bdon't )(?<!\bdon’t )(?<!\bnever )(?<!\bstop )\bcall{_SP}me{_SP}", _I), "preferred_name", "call_me", 0.85),
    (re.compile(rf"\b(?:everyone|everybody|people|friends|my{_SP}friends|most{_SP}people){_SP}call{_SP}me{_SP}", _I), "preferred_name", "others_call_me", 0.75),
)


def _names(text: str) -> Iterator[Candidate]:
    for pattern, key, rule, confidence in _NAME_CUES:
        for m in _matches(pattern, text):
            name = _person_at(text, m.end())
            if name:
                yield _profile(text, key, text[name[0] : name[1]], m.start(), name[1], rule, confidence)


# --- timezone ------------------------------------------------------------------------------

_IANA = r"(?:Africa|America|Antarctica|Arctic|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc)/[A-Za-z_\-]+(?:/[A-Za-z_\-]+)?"
_OFFSET = r"(?:UTC|GMT)(?:[ \t]*(?P<sign>[+\-−])[ \t]*(?P<hours>[0-9]{1,2})(?::?(?P<minutes>[0-9]{2}))?)?"
# Abbreviations that name one zone. CST (US Central or China), IST (India, Israel or
# Ireland) and BST (British Summer or Bangladesh) do not, and are kept as written.
_ABBREVIATIONS = {
    "PST": "America/Los_Angeles", "PDT": "America/Los_Angeles", "PT": "America/Los_Angeles",
    "MST": "America/Denver", "MDT": "America/Denver", "MT": "America/Denver",
    "CDT": "America/Chicago", "CT": "America/Chicago",
    "EST": "America/New_York", "EDT": "America/New_York", "ET": "America/New_York",
    "AKST": "America/Anchorage", "AKDT": "America/Anchorage", "HST": "Pacific/Honolulu",
    "CET": "CET", "CEST": "CET", "EET": "EET", "EEST": "EET", "WET": "WET", "WEST": "WET",
    "JST": "Asia/Tokyo", "KST": "Asia/Seoul", "SGT": "Asia/Singapore", "HKT": "Asia/Hong_Kong",
    "AEST": "Australia/Sydney", "AEDT": "Australia/Sydney", "NZST": "Pacific/Auckland",
    "NZDT": "Pacific/Auckland", "MSK": "Europe/Moscow",
}
_AMBIGUOUS_ABBREVIATIONS = frozenset({"CST", "IST", "BST"})
_ZONE_WORDS = {
    "pacific": "America/Los_Angeles", "west coast": "America/Los_Angeles",
    "mountain": "America/Denver", "central": "America/Chicago",
    "eastern": "America/New_York", "east coast": "America/New_York",
    "alaska": "America/Anchorage", "hawaii": "Pacific/Honolulu",
    "central european": "CET", "eastern european": "EET", "western european": "WET",
    "uk": "Europe/London", "british": "Europe/London", "london": "Europe/London",
    "greenwich": "UTC", "berlin": "Europe/Berlin", "paris": "Europe/Paris",
    "tokyo": "Asia/Tokyo", "japan": "Asia/Tokyo", "india": "Asia/Kolkata",
    "indian": "Asia/Kolkata", "sydney": "Australia/Sydney", "singapore": "Asia/Singapore",
}
_ZONE_WORD = "|".join(sorted((w.replace(" ", _SP) for w in _ZONE_WORDS), key=len, reverse=True))
_ZONE_CODE = rf"(?P<iana>{_IANA})|(?P<offset>{_OFFSET})(?![\w+\-])|(?P<abbr>[A-Za-z]{{2,4}})\b"
_TIMEZONE_CUES = (
    (re.compile(rf"\bmy{_SP}(?:time[ \t]*zone|tz){_SP}is{_SP}(?:(?P<word>{_ZONE_WORD})(?:{_SP}(?:standard{_SP})?time)?\b|{_ZONE_CODE})", _I), "stated", 0.95),
    (re.compile(rf"{_IM}{_SP}(?:on|in){_SP}(?:the{_SP})?(?P<word>{_ZONE_WORD}){_SP}(?:standard{_SP})?(?:time(?:[ \t]*zone)?|tz)\b", _I), "on_zone_time", 0.85),
    (re.compile(rf"{_IM}{_SP}(?:on|in){_SP}(?:{_ZONE_CODE})(?:{_SP}(?:time(?:[ \t]*zone)?|tz)\b)?", _I), "on_zone_code", 0.8),
)


def _zone_value(m: re.Match[str], *, stated: bool) -> tuple[str, bool] | None:
    """The normalised zone and whether it is ambiguous, or None if the words name no zone."""
    group = m.groupdict()
    if group.get("word"):
        return _ZONE_WORDS[" ".join(group["word"].lower().split())], False
    if group.get("iana"):
        return group["iana"], False
    if group.get("offset"):
        if not group["sign"]:
            return "UTC", False
        hours, minutes = int(group["hours"]), int(group["minutes"] or 0)
        sign = "-" if group["sign"] in "-−" else "+"
        if hours > 14 or minutes not in (0, 15, 30, 45) or (sign == "-" and hours > 12):
            return None
        return f"UTC{sign}{hours:02d}:{minutes:02d}", False
    abbreviation = group["abbr"]
    if stated:  # after "my timezone is", "est" can only be a zone
        abbreviation = abbreviation.upper()
    # Otherwise "I'm in it" is a word and "I'm in CT" is Connecticut, not Central Time.
    elif not abbreviation.isupper() or len(abbreviation) < 3:
        return None
    if abbreviation in _AMBIGUOUS_ABBREVIATIONS:
        return abbreviation, True
    if abbreviation in _ABBREVIATIONS:
        return _ABBREVIATIONS[abbreviation], False
    return None


def _timezones(text: str) -> Iterator[Candidate]:
    for pattern, rule, confidence in _TIMEZONE_CUES:
        for m in _matches(pattern, text):
            zone = _zone_value(m, stated=rule == "stated")
            if zone is None:
                continue
            value, ambiguous = zone
            yield _profile(text, "timezone", value, m.start(), m.end(), rule, 0.5 if ambiguous else confidence)


# --- how to talk to them: communication style and technical level ----------------------------

_ANSWERS = r"(?:answers?|responses?|replies|messages?|explanations?)"
_STYLE_CUES = (
    ("concise", "keep_it_short", 0.8, rf"\bplease{_SP}keep{_SP}(?:it|things|your{_SP}{_ANSWERS}|{_ANSWERS}){_SP}(?:short|brief|concise|to{_SP}the{_SP}point)\b"),
    ("concise", "keep_it_short", 0.8, rf"\bkeep{_SP}(?:it|things|your{_SP}{_ANSWERS}|{_ANSWERS}){_SP}(?:short|brief|concise|to{_SP}the{_SP}point)[ \t]*,?[ \t]*please\b"),
    ("concise", "keep_it_short", 0.8, rf"\bkeep{_SP}(?:your{_SP})?{_ANSWERS}{_SP}(?:short|brief|concise|to{_SP}the{_SP}point)\b"),
    ("concise", "prefer_short", 0.85, rf"\bI{_SP}(?:prefer|like|want|appreciate){_SP}(?:short|brief|concise|succinct|to-the-point){_SP}{_ANSWERS}"),
    ("concise", "be_brief", 0.8, rf"\bplease{_SP}be{_SP}(?:brief|concise|succinct)\b|\bbe{_SP}(?:brief|concise|succinct)[ \t]*,?[ \t]*please\b"),
    ("detailed", "prefer_detailed", 0.85, rf"\bI{_SP}(?:prefer|like|want|love|appreciate){_SP}(?:detailed|thorough|in-depth|long|step-by-step){_SP}{_ANSWERS}"),
    ("detailed", "in_detail", 0.75, rf"\bplease{_SP}explain{_SP}(?:(?:it|this|that|things){_SP})?in{_SP}(?:detail|depth)\b"),
    ("detailed", "more_detail", 0.7, rf"\bthe{_SP}more{_SP}detail{_SP}the{_SP}better\b"),
    ("no emojis", "no_emojis", 0.9, rf"\bno{_SP}emoji(?:s|es)?[ \t]*,?[ \t]*please\b|\bplease[ \t]*,?[ \t]*no{_SP}emoji(?:s|es)?\b"),
    ("no emojis", "no_emojis", 0.85, rf"(?<!\bI )(?<!\bwe )\b(?:please{_SP})?(?:don['’]?t|do{_SP}not|never){_SP}use{_SP}(?:any{_SP})?emoji(?:s|es)?\b"),
    ("bullet points", "prefer_bullets", 0.8, rf"\bI{_SP}(?:prefer|like){_SP}bullet(?:ed)?{_SP}(?:points|lists)\b"),
)
_STYLE_PATTERNS = tuple((value, rule, confidence, re.compile(pattern, _I)) for value, rule, confidence, pattern in _STYLE_CUES)
_TONE = re.compile(rf"\bI{_SP}prefer{_SP}(?:a{_SP})?(?P<tone>formal|casual|informal|professional){_SP}(?:tone|style|language)\b", _I)


def _styles(text: str) -> Iterator[Candidate]:
    for value, rule, confidence, pattern in _STYLE_PATTERNS:
        for m in _matches(pattern, text):
            yield _profile(text, "communication_style", value, m.start(), m.end(), rule, confidence)
    for m in _matches(_TONE, text):
        tone = m.group("tone").lower()
        yield _profile(text, "communication_style", "casual" if tone == "informal" else tone, m.start(), m.end(), "prefer_tone", 0.8)


# Being a beginner at pottery says nothing about how to explain software: "beginner" and
# "new to" count only for these subjects.
_TECH = (
    r"(?:programming|coding|code|computers?|tech|technology|software|python|javascript|typescript|"
    r"java|rust|golang|c\+\+|c#|sql|databases?|linux|(?:the{_SP})?command{_SP}line|(?:the{_SP})?terminal|"
    r"git|github|docker|kubernetes|django|react|html|css|web{_SP}development|machine{_SP}learning|"
    r"ml|ai|data{_SP}science|excel|spreadsheets|apis?|(?:the{_SP})?cloud|aws|devops|networking)(?!\w)"
).replace("{_SP}", _SP)
_LEVEL_CUES = (
    ("beginner", "not_technical", 0.85, rf"{_IM}{_SP}not(?:{_SP}(?:very|that|really|super|particularly|at{_SP}all))?{_SP}(?:technical|tech-?savvy|tech{_SP}savvy|techy)\b"),
    ("beginner", "not_technical", 0.85, rf"{_IM}{_SP}not{_SP}(?:a{_SP})?(?:technical|tech|techie|computer|techy){_SP}person\b"),
    ("beginner", "beginner_with", 0.85, rf"{_IM}{_SP}(?:(?:just|only){_SP})?an?{_SP}(?:(?:complete|total|absolute|real){_SP})?(?:beginner|newbie|novice|noob){_SP}(?:with|at|in|to){_SP}{_TECH}"),
    ("beginner", "new_to", 0.8, rf"{_IM}{_SP}(?:(?:completely|totally|very|pretty|fairly|quite){_SP})?new{_SP}to{_SP}{_TECH}"),
    ("beginner", "eli5", 0.8, rf"\bexplain(?:{_SP}(?:it|this|that))?(?:{_SP}to{_SP}me)?{_SP}like{_SP}I['’]?m{_SP}(?:five|5|a{_SP}five-year-old|a{_SP}child|a{_SP}kid)\b"),
    ("beginner", "eli5", 0.7, r"\bELI5\b"),
    ("intermediate", "somewhat_technical", 0.65, rf"{_IM}{_SP}(?:fairly|somewhat|reasonably|moderately|pretty|kind{_SP}of|kinda|sort{_SP}of|a{_SP}bit|a{_SP}little){_SP}(?:technical|tech-?savvy)\b"),
    ("intermediate", "know_the_basics", 0.65, rf"\bI{_SP}know{_SP}the{_SP}basics{_SP}of{_SP}{_TECH}"),
    ("expert", "very_technical", 0.8, rf"{_IM}{_SP}(?:very|highly|quite|extremely){_SP}(?:technical|tech-?savvy)\b"),
    ("expert", "expert_in", 0.8, rf"{_IM}{_SP}an{_SP}expert{_SP}(?:in|with|at|on){_SP}{_TECH}"),
)
_LEVEL_PATTERNS = tuple((value, rule, confidence, re.compile(pattern, _I)) for value, rule, confidence, pattern in _LEVEL_CUES)


def _levels(text: str) -> Iterator[Candidate]:
    for value, rule, confidence, pattern in _LEVEL_PATTERNS:
        for m in _matches(pattern, text):
            yield _profile(text, "technical_level", value, m.start(), m.end(), rule, confidence)
