"""Small pure rules the memory services apply: how texts are compared for exact duplicates,
when two memories contradict each other, and when a memory's text has the shape of an
entity (seed 000's "X = value [unit]" template). No Django here."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass

# The rule of the episodic memory an episode is (memory.extraction.episodes): its text quotes
# its turns' sentences in order, and it cites those turns.
EPISODE_RULE = "episode.segment"

_PUNCT = re.compile(r"[^\w\s]")
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Case, accents, punctuation and spacing do not make a different memory."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return _SPACE.sub(" ", _PUNCT.sub(" ", text.casefold())).strip()


def text_hash(text: str) -> str:
    return hashlib.sha256(normalise(text).encode()).hexdigest()


# Sentence embeddings hardly see numbers or negation: all-MiniLM-L6-v2 rates "the service
# listens on port 9991" and "... port 9992" 0.988 alike (bench/RESULTS.md, dedup scan), and
# "X likes Y" / "X does not like Y" sit close too. Two texts that state different numbers or
# one negated and one not say different things however close their vectors are, so no
# near-duplicate fold may join them without a person (the dedup scan still offers them).
_WORD_NUMBERS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*|\b(?:" + "|".join(_WORD_NUMBERS) + r")\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without)\b|n['’]t\b", re.IGNORECASE)


def _numbers(text: str) -> list[str]:
    found = (_WORD_NUMBERS.get(m.casefold(), m) for m in _NUMBER.findall(text))
    return sorted(n.replace(",", ".") for n in found)


def values_differ(text: str, other: str) -> bool:
    """Whether two texts state different numbers, or one is negated and the other not
    (an odd count of negations each side decides), so they cannot be one memory."""
    text, other = unicodedata.normalize("NFKC", text), unicodedata.normalize("NFKC", other)
    negated = len(_NEGATION.findall(text)) % 2, len(_NEGATION.findall(other)) % 2
    return _numbers(text) != _numbers(other) or negated[0] != negated[1]


# Attributes that hold one value at a time: a different value contradicts the current one.
# Anything else ("allergy", "pet") may hold several values, so only opposite polarity on
# the same value contradicts it. Unknown attributes are treated as multi-valued: a false
# conflict costs a reviewer's time, a missed one only leaves two memories side by side.
SINGLE_VALUED = frozenset({
    "name", "employer", "location", "hometown", "age", "birthday", "diet", "relationship_status", "role",
    "timezone", "email", "phone",
})
SINGLE_VALUED_PREFIXES = ("favorite:", "prefers:")


def single_valued(attribute: str) -> bool:
    return attribute in SINGLE_VALUED or attribute.startswith(SINGLE_VALUED_PREFIXES)


def contradicts(attribute: str, value: str, polarity: int, other_value: str, other_polarity: int) -> bool:
    """Whether a new (attribute, value, polarity) contradicts an existing one with the
    same subject and attribute."""
    if not attribute:
        return False
    same_value = normalise(value) == normalise(other_value)
    if same_value:
        return polarity != other_polarity
    return single_valued(attribute) and polarity > 0 and other_polarity > 0


def same_claim(attribute: str, value: str, polarity: int, other_value: str, other_polarity: int) -> bool:
    """Two wordings of the same keyed claim: one reinforces the other."""
    return bool(attribute) and polarity == other_polarity and normalise(value) == normalise(other_value)


@dataclass(frozen=True)
class EntityProposal:
    kind: str  # "parameter" or "fact"
    name: str
    value: str = ""
    unit: str = ""

    def description(self) -> str:
        return f"{self.name} = {self.value} {self.unit}".strip() if self.value else self.name


# "max upload size = 25 MB", "The API timeout is 30 seconds", "pump pressure: 4.5 bar"
_TEMPLATE = re.compile(
    r"^\s*(?:the\s+)?(?P<name>[A-Za-z][\w .'/-]{1,60}?)\s*(?:=|:|\bis\b|\bequals\b)\s*"
    r"(?P<value>-?\d+(?:[.,]\d+)?)\s*(?P<unit>[A-Za-z%°µ/]{1,12}(?:\s?[A-Za-z/]{1,8})?)?\s*\.?\s*$",
    re.IGNORECASE,
)


def entity_template(text: str) -> EntityProposal | None:
    """Seed 000, signal 2: a memory shaped "X = value [unit]" is a parameter waiting to
    be one."""
    match = _TEMPLATE.match(text)
    if not match:
        return None
    name = match["name"].strip()
    return EntityProposal(kind="parameter", name=name[:1].upper() + name[1:], value=match["value"].replace(",", "."),
                          unit=(match["unit"] or "").strip())


def proposal_for(text: str) -> EntityProposal:
    """The entity a memory would become when graduated: a parameter when it has that
    shape, otherwise a fact named by its first words."""
    template = entity_template(text)
    if template:
        return template
    words = text.strip().rstrip(".").split()
    name = " ".join(words[:12]) + ("…" if len(words) > 12 else "")
    return EntityProposal(kind="fact", name=name)


def reinforced_confidence(confidence: float, *, step: float = 0.2) -> float:
    """Each confirmation closes a share of the gap to certainty, never reaching past 1."""
    return min(1.0, confidence + (1.0 - confidence) * step)
