"""Time expressions in a message ("yesterday", "last May", "two weeks ago", "in June 2023")
found and resolved to calendar dates against the moment the message was said.

A memory outlives the conversation it came from: "I went to the support group yesterday"
means nothing a month later unless "yesterday" became 7 May 2023 while the message's date
was still at hand. The same resolution turns a query's "last May" into a date range that
retrieval can filter or boost on.

Pure Python, no Django. Precision over recall, as everywhere in extraction: "May" is a
month only when capitalised and next to a day, a year or a preposition ("in May"), so "I
may go" and "May I ask" stay words; "the last week of May" is not last week; "in two
years" after a past verb ("I lost 20 pounds in two years") is a duration, not a date.

Choices where English is ambiguous, kept simple so a reader can predict them:
- Weeks run Monday to Sunday. "last week" is the week before the anchor's, "next week" the
  one after. A weekend is Saturday and Sunday of that week, so on a Monday "last weekend"
  is the one just gone, and "next weekend" is always the one of next week.
- "last Friday" is the most recent Friday strictly before the anchor's day, "next Friday"
  the first one strictly after. A bare "on Friday" or "this Friday" leans on the past (chat
  mostly tells what happened) unless the clause says future ("will", "going to", "can't
  wait", ...), then it is the next one.
- "last May" is the most recent May strictly before the anchor's month, "next May" the
  first one after. "in May" (or "5 May" without a year) follows the clause's tense; with no
  tense cue it is the nearest May, since nobody means one eleven months away.
- "a few" is 3, "a couple (of)" is 2, "a"/"an" is 1. "N weeks ago" is the whole week that
  held the day N×7 days back; months and years are calendar months and years.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
GRANULARITIES = ("day", "week", "weekend", "month", "year")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass(frozen=True)
class TimeMention:
    start: int
    end: int
    phrase: str  # text[start:end]
    first: date
    last: date  # inclusive
    granularity: str  # one of GRANULARITIES
    label: str  # "7 May 2023", "the week of 1 May 2023", "May 2023", "2023", ...


@dataclass(frozen=True)
class TimeRange:
    first: date
    last: date
    phrase: str


# --- vocabulary -----------------------------------------------------------------------------

_I = re.IGNORECASE
# March, May and August are also words ("march on", "I may", "august company"): capitalised only.
_MONTH = (r"(?P<month>January|February|April|June|July|September|October|November|December"
          r"|(?-i:March|May|August))")
_WEEKDAY = r"(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday|(?-i:Mon|Tues?|Wed|Thu(?:rs?)?|Fri|Sat|Sun))"
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
            "ten": 10, "eleven": 11, "twelve": 12, "a": 1, "an": 1, "a few": 3, "a couple": 2, "a couple of": 2}
_COUNT = r"(?P<count>\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a[ \t]+couple(?:[ \t]+of)?|a[ \t]+few|an?)"
_UNIT = r"(?P<unit>day|week|month|year)s?"
_ORDINAL = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d|2100)"
# "in 2000 users" is a count, not a year.
_NOT_A_COUNT = r"(?![ \t]*(?:%|\$|[.,]\d|[ \t]+(?:people|users|times|items|dollars|euros|pounds|words|rows|ms|km|kg|miles|steps|pages|requests|bytes)\b))"

# The words of a clause that say which way in time it points.
_FUTURE_CUE = re.compile(
    r"\b(?:will|shall|gonna|going\s+to|plan(?:s|ning)?\s+(?:to|on)|hop(?:e|es|ing)\s+to|about\s+to|can['’]?t\s+wait|"
    r"excited\s+(?:to|for)|looking\s+forward|upcoming|coming\s+up|scheduled|next|tomorrow)\b|['’]ll\b", _I)
_PAST_CUE = re.compile(
    r"\b(?:was|were|did|had|went|got|took|saw|made|met|came|left|found|bought|won|lost|ran|gave|spent|ago|yesterday|last)\b"
    r"|\b(?:I|we|he|she|they|you)[ \t]+(?:(?!(?:am|are|is|be|been|feel|get)\b)\w+[ \t]+)?(?!need\b|used\b)\w{2,}ed\b", _I)
_WORD = re.compile(r"\w+")
_MONTH_NAMES = "|".join(MONTHS)
# The parenthesis annotate() writes: seeing one after a phrase means it was annotated already.
_ANNOTATION = re.compile(rf"[ \t]*\((?:the[ \t]+week(?:end)?[ \t]+of[ \t]+)?(?:\d{{1,2}}[ \t]+)?(?:(?:{_MONTH_NAMES})[ \t]+)?\d{{1,4}}\)")


# --- dates ----------------------------------------------------------------------------------

def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _add_months(year: int, month: int, months: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + months
    return index // 12, index % 12 + 1


def label(first: date, granularity: str) -> str:
    """How a resolved date reads: "7 May 2023", "the week of 1 May 2023", "May 2023", "2023"."""
    day = f"{first.day} {MONTHS[first.month - 1]} {first.year}"
    if granularity == "week":
        return f"the week of {day}"
    if granularity == "weekend":
        return f"the weekend of {day}"
    if granularity == "month":
        return f"{MONTHS[first.month - 1]} {first.year}"
    if granularity == "year":
        return str(first.year)
    return day


# A resolved span before it knows where it sits in the text.
@dataclass(frozen=True)
class _Span:
    first: date
    last: date
    granularity: str


def _day(d: date) -> _Span:
    return _Span(d, d, "day")


def _week(d: date) -> _Span:
    monday = _monday(d)
    return _Span(monday, monday + timedelta(days=6), "week")


def _weekend(d: date) -> _Span:
    saturday = _monday(d) + timedelta(days=5)
    return _Span(saturday, saturday + timedelta(days=1), "weekend")


def _month(year: int, month: int) -> _Span:
    return _Span(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]), "month")


def _year(year: int) -> _Span:
    return _Span(date(year, 1, 1), date(year, 12, 31), "year")


# --- tense ----------------------------------------------------------------------------------

def _words_between(text: str, a: int, b: int) -> int:
    """Words between two offsets, not counting annotate()'s parentheses, so that annotating
    a text never changes how its other phrases resolve."""
    return len(_WORD.findall(_ANNOTATION.sub("", text[a:b])))


def _tense(text: str, start: int, end: int) -> str | None:
    """ "past" or "future" from the verb nearest the phrase in its sentence, None when the
    sentence shows neither."""
    left = max(text.rfind(edge, 0, start) for edge in ".!?\n") + 1
    right = min((i for i in (text.find(edge, end) for edge in ".!?\n") if i >= 0), default=len(text))
    best: tuple[int, str] | None = None
    for cue, tense in ((_FUTURE_CUE, "future"), (_PAST_CUE, "past")):
        for m in cue.finditer(text, left, right):
            if m.end() > start and m.start() < end:
                continue  # the phrase's own "last"/"next" says nothing about the verb
            distance = _words_between(text, m.end(), start) if m.end() <= start else _words_between(text, end, m.start())
            if best is None or distance < best[0]:
                best = (distance, tense)
    return best[1] if best else None


# --- resolvers: one per cue, (match, anchor day, tense) -> span or None ------------------------

_Tense = Callable[[], str | None]


def _relative_day(m: re.Match[str], today: date, tense: _Tense) -> _Span | None:
    word = " ".join(m.group("word").lower().split())
    offsets = {"today": 0, "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
               "yesterday": -1, "last night": -1, "the day before yesterday": -2,
               "tomorrow": 1, "the day after tomorrow": 2}
    return _day(today + timedelta(days=offsets[word]))


def _which(m: re.Match[str]) -> str:
    """ "last", "this" or "next"; "this past" is last, "this coming" is next."""
    which = " ".join(m.group("which").lower().split())
    return {"this past": "last", "this coming": "next"}.get(which, which)


def _relative_unit(m: re.Match[str], today: date, tense: _Tense) -> _Span | None:
    return _shifted(today, m.group("unit").lower(), {"last": -1, "this": 0, "next": 1}[_which(m)])


def _weekday(m: re.Match[str], today: date, tense: _Tense) -> _Span | None:
    which = _which(m)
    name = m.group("weekday").lower()
    if which == "on" and name not in WEEKDAYS:
        return None  # "on Sun" / "on Sat": only full names after a bare "on"
    target = next(i for i, day in enumerate(WEEKDAYS) if day.startswith(name[:2]))
    if which in ("on", "this"):
        which = "next" if tense() == "future" else "last"
    if which == "last":
        back = (today.weekday() - target) % 7 or 7
        return _day(today - timedelta(days=back))
    ahead = (target - today.weekday()) % 7 or 7
    return _day(today + timedelta(days=ahead))


def _count(m: re.Match[str]) -> int:
    word = " ".join(m.group("count").lower().split())
    return int(word) if word.isdigit() else _NUMBERS[word]


def _shifted(today: date, unit: str, amount: int) -> _Span:
    """The day, week, weekend, month or year `amount` units away from `today`."""
    if unit == "day":
        return _day(today + timedelta(days=amount))
    if unit == "week":
        return _week(today + timedelta(weeks=amount))
    if unit == "weekend":
        return _weekend(today + timedelta(weeks=amount))
    if unit == "month":
        return _month(*_add_months(today.year, today.month, amount))
    return _year(today.year + amount)


def _ago(m: re.Match[str], today: date, tense: _Tense) -> _Span | None:
    return _shifted(today, m.group("unit").lower(), -_count(m))


# "twice in a week" and "more in a day" count, they do not date.
_FREQUENCY_BEFORE = re.compile(r"\b(?:times?|once|twice|all|much|lot|more|less|than|only|just|per|every|each|most|best)[ \t]+$", _I)


def _in_count(m: re.Match[str], today: date, tense: _Tense) -> _Span | None:
    if _FREQUENCY_BEFORE.search(m.string, max(0, m.start() - 20), m.start()) or tense() == "past":
        return None
    return _shifted(today, m.group("unit").lower(), _count(m))


def _from_now(m: re.Match[str], today: date, tense: _Tense) -> _Span | None:
    return _shifted(today, m.group("unit").lower(), _count(m))


def _month_number(m: re.Match[str]) -> int:
    name = m.group("month").lower()
    return next(i for i, month in enumerate(MONTHS, 1) if month.lower() == name)


def _nearest_year(today: date, month: int, direction: str | None) -> int:
    """The year of the named month: the current one when it is this month, else the last or
    the next one by tense, else whichever is nearer (a tie goes to the past)."""
    if month == today.month:
        return today.year
    past = today.year if month < today.month else today.year - 1
    future = past + 1
    if direction == "past":
        return past
    if direction == "future":
        return future
    past_gap = (today.year - past) * 12 + today.month - month
    future_gap = (future - today.year) * 12 + month - today.month
    return past if past_gap <= future_gap else future


def _named_month(m: re.Match[str], today: date, tense: _Tense) -> _Span | None:
    month = _month_number(m)
    which = _which(m)
    if which == "last":
        year = today.year if month < today.month else today.year - 1
    elif which == "next":
        year = today.year if month > today.month else today.year + 1
    elif which == "this":
        year = today.year
    elif which == "since":
        year = _nearest_year(today, month, "past")
    else:
        year = _nearest_year(today, month, tense())
    span = _month(year, month)
    if which == "since":
        return _Span(span.first, max(today, span.first), "month")
    return span


def _valid_day(year: int, month: int, day: int) -> date | None:
    return date(year, month, day) if 1 <= day <= calendar.monthrange(year, month)[1] else None


def _full_date(m: re.Match[str], today: date, tense: _Tense) -> _Span | None:
    found = _valid_day(int(m.group("year")), _month_number(m), int(m.group("day")))
    return _day(found) if found else None


def _day_of_month(m: re.Match[str], today: date, tense: _Tense) -> _Span | None:
    """ "5 May", "June 10th": the date in the year the tense points to, else the nearest."""
    month, day = _month_number(m), int(m.group("day"))
    direction = tense()
    dates = [d for year in (today.year - 1, today.year, today.year + 1) if (d := _valid_day(year, month, day))]
    if direction == "past":
        dates = [d for d in dates if d <= today]
    elif direction == "future":
        dates = [d for d in dates if d >= today]
    if not dates:
        return None
    return _day(min(dates, key=lambda d: (abs((d - today).days), d > today)))


def _month_year(m: re.Match[str], today: date, tense: _Tense) -> _Span | None:
    return _month(int(m.group("year")), _month_number(m))


def _year_cue(m: re.Match[str], today: date, tense: _Tense) -> _Span | None:
    span = _year(int(m.group("year")))
    if m.group("prep").lower() == "since":
        return _Span(span.first, max(today, span.first), "year")
    return span


# --- cues -----------------------------------------------------------------------------------

_Resolver = Callable[[re.Match[str], date, _Tense], _Span | None]
_WHICH = r"(?P<which>this[ \t]+past|this[ \t]+coming|last|this|next)"
# "the last week of May", "the next day": an ordinal inside a phrase, not a date.
_NOT_AFTER_THE = r"(?<!\bthe )"

_CUES: tuple[tuple[re.Pattern[str], _Resolver], ...] = (
    (re.compile(r"\b(?P<word>the[ \t]+day[ \t]+before[ \t]+yesterday|the[ \t]+day[ \t]+after[ \t]+tomorrow|yesterday|"
                r"today(?!['’]s[ \t]+(?:world|society|age|culture|economy|climate|standards))|tonight|tomorrow|"
                r"last[ \t]+night|this[ \t]+(?:morning|afternoon|evening))\b", _I), _relative_day),
    (re.compile(rf"{_NOT_AFTER_THE}\b{_WHICH}[ \t]+(?P<unit>week|weekend|month|year)\b", _I), _relative_unit),
    (re.compile(rf"{_NOT_AFTER_THE}\b(?P<which>this[ \t]+past|this[ \t]+coming|last|this|next|on)[ \t]+{_WEEKDAY}\b", _I), _weekday),
    (re.compile(rf"\b{_COUNT}[ \t]+{_UNIT}[ \t]+ago\b", _I), _ago),
    (re.compile(rf"\bin[ \t]+{_COUNT}[ \t]+{_UNIT}\b(?![ \t]+(?:of|old|time)\b)", _I), _in_count),
    (re.compile(rf"\b{_COUNT}[ \t]+{_UNIT}[ \t]+from[ \t]+now\b", _I), _from_now),
    (re.compile(rf"{_NOT_AFTER_THE}\b(?P<which>this[ \t]+past|this[ \t]+coming|last|next|this|in|since|of|during|early|late|mid)"
                rf"(?:[ \t]*-[ \t]*|[ \t]+){_MONTH}\b", _I), _named_month),
    (re.compile(rf"\b{_ORDINAL}(?:[ \t]+of)?[ \t]+{_MONTH},?[ \t]+{_YEAR}\b", _I), _full_date),
    (re.compile(rf"\b{_MONTH}[ \t]+{_ORDINAL},?[ \t]+{_YEAR}\b", _I), _full_date),
    (re.compile(rf"\b{_ORDINAL}(?:[ \t]+of)?[ \t]+{_MONTH}\b", _I), _day_of_month),
    (re.compile(rf"\b{_MONTH}[ \t]+{_ORDINAL}\b(?![:.,]?\d)", _I), _day_of_month),
    (re.compile(rf"\b{_MONTH}(?:[ \t]+of)?,?[ \t]+{_YEAR}\b{_NOT_A_COUNT}", _I), _month_year),
    (re.compile(rf"\b(?P<prep>in|since|during)[ \t]+(?:the[ \t]+year[ \t]+)?{_YEAR}\b{_NOT_A_COUNT}", _I), _year_cue),
)
_NAMES_A_YEAR = re.compile(r"\b(?:19|20)\d\d\b|\b2100\b")


def _found(text: str, today: date) -> list[TimeMention]:
    found = []
    for pattern, resolver in _CUES:
        for m in pattern.finditer(text):
            try:
                span = resolver(m, today, lambda m=m: _tense(text, m.start(), m.end()))
            except (OverflowError, ValueError):  # an anchor near date.min or date.max
                continue
            if span is not None:
                found.append(TimeMention(m.start(), m.end(), m.group(), span.first, span.last, span.granularity,
                                         label(span.first, span.granularity)))
    return found


def resolve(text: str, anchor: datetime) -> list[TimeMention]:
    """The time expressions of `text` resolved against `anchor` (when it was said, in the
    speaker's timezone), in text order. Where two overlap, the longer wins: "May 2023" over
    "in May", "the day before yesterday" over "yesterday"."""
    today = anchor.date()
    chosen: list[TimeMention] = []
    for mention in sorted(_found(text, today), key=lambda m: (m.start - m.end, m.start)):
        if all(mention.end <= other.start or other.end <= mention.start for other in chosen):
            chosen.append(mention)
    return sorted(chosen, key=lambda m: m.start)


def is_absolute(mention: TimeMention) -> bool:
    """Whether the phrase names its year, so it means the same whenever it is read."""
    return bool(_NAMES_A_YEAR.search(mention.phrase))


# --- rewriting text -------------------------------------------------------------------------

def annotate(text: str, anchor: datetime) -> str:
    """`text` with each relative time phrase followed by its date in parentheses: "yesterday"
    said on 8 May 2023 becomes "yesterday (7 May 2023)". Phrases naming their year are left
    alone, and so are a phrase already followed by such a parenthesis and one inside it."""
    annotations = [m.span() for m in _ANNOTATION.finditer(text)]
    parts: list[str] = []
    at = 0
    for mention in resolve(text, anchor):
        inside = any(start < mention.end and mention.start < end for start, end in annotations)
        if is_absolute(mention) or inside or _ANNOTATION.match(text, mention.end):
            continue
        parts.append(text[at : mention.end])
        parts.append(f" ({mention.label})")
        at = mention.end
    parts.append(text[at:])
    return "".join(parts)


# A phrase after one of these words takes the bare date: "by 12 May 2023", not "by on 12 May".
_PREPOSITION_BEFORE = re.compile(r"\b(?:by|until|till|before|after|from|since|for|during|on|in|of|at|to|through|about|around|"
                                 r"roughly|nearly|almost|approximately|over)[ \t]+$", _I)
_INTRODUCED = {"day": "on ", "week": "in ", "weekend": "on ", "month": "in ", "year": "in "}


def dated(mention: TimeMention, text: str) -> str:
    """What replaces a relative phrase in a standalone sentence: "yesterday" -> "on 7 May
    2023", "next month" -> "in June 2023", "since May" -> "since May 2023"."""
    if is_absolute(mention):
        return mention.phrase
    if mention.phrase.lower().startswith("since"):
        return f"since {mention.label}"
    if _PREPOSITION_BEFORE.search(text, max(0, mention.start - 16), mention.start):
        return mention.label
    return _INTRODUCED[mention.granularity] + mention.label


def replace_relative(text: str, anchor: datetime) -> str:
    """`text` with every relative time phrase replaced by the date it denotes, for a memory
    read long after it was said: "I'm going to Paris next month" -> "I'm going to Paris in
    June 2023"."""
    parts: list[str] = []
    at = 0
    for mention in resolve(text, anchor):
        parts.append(text[at : mention.start])
        parts.append(dated(mention, text))
        at = mention.end
    parts.append(text[at:])
    return "".join(parts)


# --- queries --------------------------------------------------------------------------------

def query_range(query: str, now: datetime) -> TimeRange | None:
    """The dates a search query asks about ("what did Caroline do last May?" -> May of last
    year), as one range covering all its time cues, or None when it names no time."""
    mentions = resolve(query, now)
    if not mentions:
        return None
    return TimeRange(
        first=min(m.first for m in mentions),
        last=max(m.last for m in mentions),
        phrase=", ".join(m.phrase for m in mentions),
    )
