"""What every memory rule shares: the message cut into sentences with their offsets and
time phrases, the guards that keep a rule quiet (questions, conditions, quoted speech),
turning "I" and "my" into the speaker, the object phrase after a cue, and the builder of a
candidate."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from memory.extraction._types import SPEAKER, MemoryCandidate
from memory.timeexpr import TimeMention, dated, label, resolve

_I = re.IGNORECASE
_SP = r"[ \t]+"
_IM = r"\bI(?:[ \t]*['’][ \t]*m|[ \t]+am)"  # I'm, I’m, I am
_WE_ARE = r"\bwe(?:['’]re|[ \t]+are)"
_LEADING_PREPOSITION = re.compile(r"(?:on|in|at)[ \t]+", _I)

# --- sentences --------------------------------------------------------------------------

_TERMINATOR = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)")
_ABBREVIATIONS = frozenset("mr mrs ms dr prof sr jr st vs etc approx e.g i.e a.m p.m u.s u.k".split())


def _ends_sentence(line: str, match: re.Match[str]) -> bool:
    if not match.group().startswith("."):
        return True
    word = line[: match.start()].rsplit(None, 1)[-1].lstrip("(\"'“‘").lower() if line[: match.start()].strip() else ""
    return not (word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, trimmed: split after . ! ? … (not after "Dr." or an
    initial) and at line breaks, so offsets still point into the original text."""
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in text.split("\n"):
        start = 0
        for match in _TERMINATOR.finditer(line):
            if _ends_sentence(line, match):
                spans.append((offset + start, offset + match.end()))
                start = match.end()
        spans.append((offset + start, offset + len(line)))
        offset += len(line) + 1
    trimmed = []
    for start, end in spans:
        piece = text[start:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            trimmed.append((start + lead, start + len(piece.rstrip())))
    return trimmed


@dataclass(frozen=True)
class Source:
    """A message as the rules see it: its text, when it was said, its sentences and its
    resolved time phrases, computed once for all rules."""

    text: str
    anchor: datetime
    sentences: tuple[tuple[int, int], ...]
    times: tuple[TimeMention, ...]

    @classmethod
    def of(cls, text: str, anchor: datetime) -> Source:
        return cls(text, anchor, tuple(sentence_spans(text)), tuple(resolve(text, anchor)))

    @property
    def today(self) -> date:
        return self.anchor.date()

    @property
    def said(self) -> str:
        return f"(said on {label(self.today, 'day')})"

    def sentence(self, pos: int) -> tuple[int, int]:
        for start, end in self.sentences:
            if start <= pos < end:
                return start, end
        return pos, pos

    def times_in(self, start: int, end: int) -> list[TimeMention]:
        return [m for m in self.times if start <= m.start and m.end <= end]

    def time_at(self, pos: int) -> TimeMention | None:
        """The time phrase at `pos`, after blanks and an "on" or "in" that is not part of it
        ("my birthday is on June 5th")."""
        at = pos
        while self.text[at : at + 1] in (" ", "\t"):
            at += 1
        preposition = _LEADING_PREPOSITION.match(self.text, at)
        starts = {at, preposition.end()} if preposition else {at}
        return next((m for m in self.times if m.start in starts), None)

    def with_dates(self, start: int, end: int) -> str:
        """text[start:end] with its relative time phrases replaced by their dates."""
        parts, at = [], start
        for mention in self.times_in(start, end):
            parts += [self.text[at : mention.start], dated(mention, self.text)]
            at = mention.end
        parts.append(self.text[at:end])
        return "".join(parts)


# --- guards: a rule stays quiet unless the speaker states it ---------------------------------

_CLAUSE_TERMINATOR = re.compile(r"[,;:.!?\n]|[ \t][-–—][ \t]|[—–]")
_QUESTION_START = re.compile(
    r"[\W_]*(?:do|does|did|am|is|are|was|were|can|could|would|should|will|won['’]t|have|has|had|shall|may|might|"
    r"why|what|how|when|where|who|which|isn['’]t|aren['’]t|don['’]t|didn['’]t|doesn['’]t|haven['’]t|wouldn['’]t)\b", _I)
_TRAILING_NOISE = " \t\"'”’)]*~"
# Anywhere before the statement in its sentence, these make it a condition or a wish:
# "If it rains tomorrow, I'm going to stay home", "I wish I lived in Paris".
_CONDITION = re.compile(r"\b(?:if|unless|whether|wish(?:es|ed)?|imagine|suppose|supposing|pretend|assuming|in[ \t]+case|"
                        r"as[ \t]+if|as[ \t]+though|what[ \t]+if|hypothetically)\b", _I)
# Right before the subject, these report someone else's words or set a future condition:
# "she said I'm allergic", "Mom thinks I'm a nurse", "when I'm a doctor".
_REPORTED = re.compile(r"\b(?:says?|said|thinks?|thought|believes?|believed|assumes?|assumed|claims?|claimed|"
                       r"told[ \t]+\w+|tells[ \t]+\w+|when|whenever|once|until|like)(?:[ \t]+that)?[ \t]*,?[ \t]*$", _I)


def is_question(source: Source, start: int, end: int) -> bool:
    """The clause of the match ends with "?", or its sentence is a question from its first
    word ("Do you know I love hiking?"). "I love hiking, do you?" is a statement."""
    s_start, s_end = source.sentence(start)
    terminator = _CLAUSE_TERMINATOR.search(source.text, end, s_end)
    if terminator and terminator.group() == "?":
        return True
    sentence = source.text[s_start:s_end].rstrip(_TRAILING_NOISE)
    return sentence.endswith("?") and (terminator is None or bool(_QUESTION_START.match(source.text, s_start, start)))


def is_hypothetical(source: Source, start: int) -> bool:
    s_start, _ = source.sentence(start)
    reported = _REPORTED.search(source.text, max(s_start, start - 40), start)
    return bool(_CONDITION.search(source.text, s_start, start) or reported)


def is_quoted(source: Source, start: int) -> bool:
    """Inside quotation marks the words are someone else's: She told me "I love you"."""
    s_start, _ = source.sentence(start)
    before = source.text[s_start:start]
    return (before.count('"') + before.count("“") + before.count("”")) % 2 == 1


# After these words "I" starts a new clause; after any other it starts a relative clause
# whose object came before it: "the figurines I bought yesterday", "what I love is ...".
_CLAUSE_OPENERS = frozenset("""and but so then because cause since plus also actually well oh now anyway finally recently
    just today yesterday tonight lol haha yeah yes yep sure btw honestly ok okay too though while after before think
    guess know hey hi wow personally seriously totally absolutely definitely sometimes usually always lately still
    especially really why how much ya you reason reasons""".split())


def opens_clause(source: Source, pos: int) -> bool:
    """Whether the subject at `pos` starts its own clause rather than a relative one."""
    s_start, _ = source.sentence(pos)
    before = source.text[s_start:pos].rstrip()
    if not before or before[-1] in ",;:—–-(\"'“”)…!" or any(t.end == s_start + len(before) for t in source.times):
        return True
    last = before.rsplit(None, 1)[-1].lower()
    return last in _CLAUSE_OPENERS or not any(c.isalpha() for c in last)  # an emoji ends a clause too


def stated(source: Source, start: int, end: int) -> bool:
    """Whether the words at [start, end) are the speaker stating something, not asking,
    supposing or quoting."""
    return not (is_question(source, start, end) or is_hypothetical(source, start) or is_quoted(source, start))


# --- phrases ------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_][\w'’&+\-]*")
_GAP = re.compile(r"[ \t]+")
# A conjunction that starts a new clause ends the object: "hiking, but", "hiking and I ...".
_CLAUSE_WORDS = frozenset("but because cuz so since when while though although which who whenever if unless "
                          "until whereas especially plus".split())
_SUBJECT_WORDS = frozenset("i i'm i’m i've i’ve i'll i’ll i'd i’d we we're we’re you he she they it it's it’s that this "
                           "there then also my our".split())
# Adverbs of the verb, not part of its object: "I love hiking so much".
_TRAILING_ADVERBS = ("so much", "very much", "a lot", "too", "as well", "also", "now", "anymore", "any more", "lately",
                     "these days", "right now", "more than anything", "the most", "more", "even more", "though",
                     "honestly", "tbh", "lol", "haha", "already", "still", "again", "really", "tho", "sometimes")
MAX_OBJECT_WORDS = 8


def phrase_at(source: Source, pos: int, *, max_words: int = MAX_OBJECT_WORDS) -> tuple[int, int] | None:
    """The phrase that starts at `pos` and runs to the end of its clause: punctuation, a
    conjunction, "and I", a time phrase. None when it is empty or longer than `max_words`,
    which is where a rule is no longer sure what the object is."""
    text = source.text
    time_starts = {m.start for m in source.times}
    words: list[tuple[int, int]] = []
    at = pos
    while True:
        match = _WORD.match(text, at)
        if not match or match.start() in time_starts:
            break
        word = match.group().lower()
        if word in _CLAUSE_WORDS:
            break
        if word in ("and", "or") and _next_word(text, match.end()) in _SUBJECT_WORDS:
            break
        words.append(match.span())
        if len(words) > max_words + 4:  # room for trailing adverbs to be dropped
            return None
        gap = _GAP.match(text, match.end())
        if not gap:
            break
        at = gap.end()
    words = _without_trailing_adverbs(text, words)
    if not words or len(words) > max_words:
        return None
    return words[0][0], words[-1][1]


def _next_word(text: str, pos: int) -> str:
    gap = _GAP.match(text, pos)
    match = _WORD.match(text, gap.end() if gap else pos)
    return match.group().lower() if match else ""


def _without_trailing_adverbs(text: str, words: list[tuple[int, int]]) -> list[tuple[int, int]]:
    changed = True
    while words and changed:
        changed = False
        for adverb in _TRAILING_ADVERBS:
            n = adverb.count(" ") + 1
            if len(words) > n and " ".join(text[s:e].lower() for s, e in words[-n:]) == adverb:
                words = words[:-n]
                changed = True
                break
    return words


# Words that point at something only the conversation knows: "I love that", "your painting".
_CONTEXT_WORDS = frozenset("you your yours yourself ya u it its it's it’s that this these those them they their theirs he "
                           "she him her his hers there here one ones".split())


def refers_to_context(phrase: str) -> bool:
    return any(w.lower() in _CONTEXT_WORDS for w in _WORD.findall(phrase))


_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves|ya|u)\b", _I)
_FIRST_PERSON = (
    (re.compile(r"\bI(?:['’]m|[ \t]+am)\b", _I), f"{SPEAKER} is"),
    (re.compile(r"\bI(?:['’]ve|[ \t]+have)\b", _I), f"{SPEAKER} has"),
    (re.compile(r"\bI['’]ll\b", _I), f"{SPEAKER} will"),
    (re.compile(r"\bI['’]d\b", _I), f"{SPEAKER} would"),
    (re.compile(r"\bwe['’]re\b", _I), f"{SPEAKER} and others are"),
    (re.compile(r"\bwe['’]ve\b", _I), f"{SPEAKER} and others have"),
    (re.compile(r"\bwe['’]ll\b", _I), f"{SPEAKER} and others will"),
    (re.compile(r"\bmyself\b", _I), "themselves"),  # "pushing myself": "pushing Jon" would be someone else
    (re.compile(r"\b(?:I|me)\b", _I), SPEAKER),
    (re.compile(r"\b(?:we|(?-i:us)|ourselves)\b", _I), f"{SPEAKER} and others"),  # "US" is a country
    (re.compile(r"\b(?:my|mine|our|ours)\b", _I), f"{SPEAKER}'s"),
)


def third_person(phrase: str) -> str | None:
    """The phrase with the speaker named instead of "I", "me", "my" ("my mom" ->
    "{speaker}'s mom"); None when it speaks to the listener, whom no memory can name."""
    if _SECOND_PERSON.search(phrase):
        return None
    for pattern, replacement in _FIRST_PERSON:
        phrase = pattern.sub(replacement, phrase)
    return " ".join(phrase.split())


_LEADING_DETERMINER = re.compile(r"^(?:(?:a|an|the|my|our|some)[ \t]+)+", _I)


def normal_value(phrase: str) -> str:
    """The comparable form of a value: "the Hiking " -> "hiking", "my dog" -> "dog"."""
    value = " ".join(phrase.replace("’", "'").strip(" \t\"'“”.,;:!?").split()).casefold()
    return _LEADING_DETERMINER.sub("", value) or value


def article(noun_phrase: str) -> str:
    return "an" if noun_phrase[:1].lower() in "aeiou" else "a"


# --- the candidate ------------------------------------------------------------------------

def candidate(
    source: Source,
    rule: str,
    type_: str,
    text: str,
    span: tuple[int, int],
    *,
    confidence: float,
    importance: float,
    attribute: str = "",
    value: str = "",
    polarity: int = 1,
    event: TimeMention | tuple[date, date] | None = None,
    route: str = "memory",
    entity_kind: str | None = None,
    name: str = "",
    steps: Sequence[str] = (),
    trigger: str = "",
) -> MemoryCandidate:
    start, end = span
    quote = source.text[start:end]
    start += len(quote) - len(quote.lstrip())
    end -= len(quote) - len(quote.rstrip())
    if isinstance(event, TimeMention):
        event = (event.first, event.last)
    return MemoryCandidate(
        rule=rule, type=type_, text=text, attribute=attribute, value=value, polarity=polarity,
        confidence=confidence, certainty="extracted", importance=importance, quote=source.text[start:end],
        start=start, end=end, event_first=event[0] if event else None, event_last=event[1] if event else None,
        route=route, entity_kind=entity_kind, name=name, steps=tuple(steps), trigger=trigger,
    )


def sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:] if text and not text.startswith(SPEAKER) else text
