"""An extractive, deterministic summariser for a conversation (seed 002, Layer 1).

It picks the conversation's most informative sentences, keeps them in the order they were
said and attributes each to its speaker, under a header naming who talked, when and how
much. It also reads the tone of the conversation and the actions left pending: promises
made and questions nobody answered.

No Django and no model here: the same turns always give the same summary, it runs in
microseconds, and it is the fallback whenever an LLM is not configured or misbehaves."""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class Turn:
    id: int
    speaker: str
    direction: str  # inbound | outbound | system
    content: str
    occurred_at: datetime  # timezone-aware


@dataclass(frozen=True)
class PendingAction:
    kind: str  # "commitment" | "question"
    text: str  # the sentence, trimmed
    speaker: str
    interaction_id: int


@dataclass(frozen=True)
class SummaryDraft:
    text: str
    # formality 0..1, technical_level 0..1, sentiment -1..1,
    # pace "rapid" | "steady" | "slow" | "sporadic", messages_per_hour
    tone: dict
    pending_actions: list[PendingAction]
    salient_turn_ids: list[int]  # the turns the summary sentences came from, in order


# --- selection ---------------------------------------------------------------------------

# Below this a sentence adds nothing a reader would miss ("Wow, that's cool!").
MIN_SALIENCE = 0.3
# Two sentences this similar say the same thing; keep the better one only.
MAX_REDUNDANCY = 0.6
# One rambling message must not eat the whole budget.
MAX_SENTENCE_CHARS = 300
# Carried-forward points of the superseded summary get at most this share of the budget,
# so the chain keeps its oldest facts without crowding out what was just said.
EARLIER_SHARE = 1 / 3
EARLIER_PREFIX = "Earlier: "

# --- pace (median gap between turns) -----------------------------------------------------

RAPID_GAP = timedelta(minutes=1)  # live chat: replies inside a minute
STEADY_GAP = timedelta(minutes=15)  # still one sitting, people think before they answer
# Bursts separated by long silences: the longest gap dwarfs the usual one and is long.
SPORADIC_RATIO = 10
SPORADIC_MIN_GAP = timedelta(hours=1)

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")

_STOPWORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
down during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's
her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it
it's its itself just let's me more most mustn't my myself nor not of off on once only or other
ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some
such than that that's the their theirs them themselves then there there's these they they'd
they'll they're they've this those through to too under until up very was wasn't we we'd we'll
we're we've were weren't what what's when when's where where's which while who who's whom why
why's will with won't would wouldn't you you'd you'll you're you've your yours yourself
yourselves also got get gets getting go going gonna really much many thing things lot lots
something anything everything one ones still even well way like would've could've
""".split())

# Words that carry no information on their own: greetings, thanks, backchannel, praise.
_FILLER = frozenset("""
hey hi hello hiya yo heya thanks thank thx ty lol lmao rofl haha hahaha hehe wow cool ok okay k
yeah yep yes yup no nope nah nice great awesome sure good bye goodbye totally agree love omg right
sweet amazing glad hope welcome congrats congratulations oh ah um uh hmm wonderful fantastic
perfect exactly true definitely absolutely indeed fine alright cheers sounds see soon talk later
anyway guess mean kinda sorta stuff guy guys dude man girl
""".split())

_NUMBER_WORDS = frozenset("two three four five six seven eight nine ten eleven twelve twenty thirty "
                          "fifty hundred thousand million billion dozen half".split())
_DATE_WORDS = frozenset("yesterday today tonight tomorrow monday tuesday wednesday thursday friday "
                        "saturday sunday weekend".split()) | frozenset(m.lower() for m in MONTHS if m != "May")
_RELATIVE_DATE = re.compile(
    r"\b(?:last|next|this|every)\s+(?:week|month|year|night|weekend|summer|winter|spring|autumn|fall|"
    r"morning|evening|time)\b|\b\d+\s+(?:days?|weeks?|months?|years?)\s+ago\b|\bMay\s+\d|\d\s+May\b|"
    r"\b(?:19|20)\d\d\b", re.IGNORECASE)
_FIRST_PERSON_FACT = re.compile(
    r"\b(?:i|we)(?:'ve|'d| have| had| just| finally| recently| also)?\s+(?:\w+ed|went|got|bought|made|"
    r"began|met|saw|won|lost|took|found|ran|wrote|built|did|had|have|was|were|am|are|do|love|like|"
    r"hate|work|live|study|teach|play|need|want|keep|feel|felt|left|kept|grew|sold|paid|spent|gave|"
    r"became|chose|drove|flew|broke|told|said|read|began|begun|think|know)\b"
    r"|\b(?:i'm|i am|we're|we are)\s+(?:going|gonna|keen|planning|starting|moving|working|learning|"
    r"taking|trying|thinking|a|an|from|in|at|now|still|currently)\b"
    r"|^(?:gonna|going to)\b"
    r"|\bmy\s+\w+(?:\s+\w+)?\s+(?:is|are|was|were|has|have)\b",
    re.IGNORECASE)

_COMMITMENT = re.compile(
    r"\b(?:i'll|i will|i shall|i'm going to|i am going to|i'm gonna|i am gonna|we'll|we will|"
    r"we're going to|we are going to|we're gonna|let me|i promise|i need to|i have to|i've got to|"
    r"i must|remind me to|i plan to|i intend to|i'm planning to|i am planning to)\b"
    r"|^(?:gonna|going to|will)\s+\w",
    re.IGNORECASE)
# Phrases shaped like a promise that promise nothing: a request, a figure of speech, a refusal.
_NOT_A_COMMITMENT = re.compile(
    r"\blet me (?:know|guess|see|think|tell you|say|be clear|explain why)\b|\b(?:i'll|i will) (?:never|not)\b"
    r"|\b(?:i'm sure|i am sure|i bet|i think|i hope|hopefully|maybe|probably|i guess)\b.*\b(?:i|we)(?:'ll| will)\b",
    re.IGNORECASE)
# Questions that ask for nothing: greetings and tags.
_PHATIC_QUESTION = re.compile(
    r"^(?:\w+[,!]?\s+)?(?:how are you|how are you doing|how have you been|how's it going|how are things|"
    r"what's up|wassup|sup|you know|right|really|huh|eh|isn't it|ok|okay|yeah|what's new|anything new|"
    r"you\s?ok)(?:\s+\w+)?\W*$",
    re.IGNORECASE)

_HEADER = re.compile(r"^Conversation (?:between|with) .*\(\d+ messages?\)\.$")
_SPEAKER_PREFIX = re.compile(r"^([^\s:.!?][^:.!?\n]{0,39}):\s+(\S.*)$")

# --- sentence splitting --------------------------------------------------------------------

_EMOJI = (r"[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u2300-\u23FF]"
          r"[\uFE0F\u200D\U0001F3FB-\U0001F3FF\U0001F000-\U0001FAFF\u2600-\u27BF]*")
_EMOJI_RE = re.compile(_EMOJI)
_EMOTICON = re.compile(r"(?<!\w)(?:[:;=]-?[)(DPp/\\]|<3|xD|XD)(?!\w)")
_TERMINATOR = re.compile(r"(?:[.!?\u2026]+[\"'\u201d\u2019)\]]*|(?:" + _EMOJI + r")+)(?=\s)")
_ABBREVIATIONS = frozenset("mr mrs ms dr prof sr jr st vs approx inc ltd co dept est fig cf al jan feb "
                           "mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun e.g "
                           "i.e a.m p.m u.s u.k ph.d".split())
_FENCED_CODE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'_-]*")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def split_sentences(text: str) -> list[str]:
    """Sentences of a message: split after . ! ? … or an emoji run, not after "Dr." or "e.g.",
    not inside "3.5" or a URL, and on line breaks. Fenced code is left out."""
    sentences = []
    for line in _FENCED_CODE.sub("\n", text).splitlines():
        line = " ".join(line.split())
        start = 0
        for match in _TERMINATOR.finditer(line):
            if not _ends_sentence(line, match):
                continue
            piece = line[start:match.end()].strip()
            if piece:
                sentences.append(piece)
            start = match.end()
        rest = line[start:].strip()
        if rest:
            sentences.append(rest)
    return sentences


def _ends_sentence(line: str, match: re.Match) -> bool:
    mark = match.group()
    following = line[match.end():].lstrip()[:1]
    if _EMOJI_RE.match(mark):
        # "Love it 😍 see you" runs on; "Love it 😍 See you" starts anew.
        return following.isupper() or following.isdigit()
    if "\u2026" in mark or mark.startswith(".."):
        return following.isupper()
    if mark.rstrip("\"'\u201d\u2019)]") == ".":
        word = line[:match.start()].rsplit(" ", 1)[-1].lstrip("(\"'\u201c\u2018").lower()
        if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
            return False
        if re.fullmatch(r"(?:[a-z]\.)+[a-z]", word):  # "U.S." already lost its last dot
            return False
    return True


def _tokens(text: str) -> list[str]:
    return [w.lower().rstrip("'") for w in _WORD.findall(text.translate(_APOSTROPHES))]


def _stem(token: str) -> str:
    if token.endswith("'s"):
        token = token[:-2]
    if len(token) > 4 and token.endswith("s") and not token.endswith("ss"):
        token = token[:-1]
    return token


# --- candidates and scores ---------------------------------------------------------------

@dataclass
class _Candidate:
    order: int  # position in the conversation (or in the earlier summary)
    turn_id: int | None
    speaker: str | None
    text: str
    terms: dict  # stem -> count
    specifics: float
    informative: bool
    vector: dict | None = None
    score: float = 0.0


def _display(sentence: str) -> str:
    if len(sentence) <= MAX_SENTENCE_CHARS:
        return sentence
    cut = sentence[:MAX_SENTENCE_CHARS - 1].rsplit(" ", 1)[0]
    return cut + "\u2026"


def _is_name(token: str, names: frozenset) -> bool:
    # "Mel" for Melanie: a vocative carries no information either.
    return token in names or (len(token) >= 3 and any(name.startswith(token) for name in names))


def _candidate(order: int, turn_id: int | None, speaker: str | None, sentence: str, names: frozenset) -> _Candidate:
    tokens = _tokens(sentence)
    content = [t for t in tokens if t not in _STOPWORDS and t not in _FILLER and not _is_name(t, names)]
    terms: dict = {}
    for token in content:
        stem = _stem(token)
        terms[stem] = terms.get(stem, 0) + 1
    normalised = sentence.translate(_APOSTROPHES)
    words = normalised.split()
    proper = 0
    for word in words[1:]:
        bare = word.strip(".,!?;:\"'()[]")
        if not bare or _is_name(bare.lower(), names) or bare.lower() in _FILLER or bare.lower() in _STOPWORDS:
            continue
        if (bare[0].isupper() and bare[1:].islower() and bare.lower() not in _DATE_WORDS) or \
                (len(bare) >= 2 and bare.isupper() and bare.isalpha()):
            proper += 1
    has_number = bool(re.search(r"\d", sentence)) or any(t in _NUMBER_WORDS for t in tokens)
    has_date = any(t in _DATE_WORDS for t in tokens) or bool(_RELATIVE_DATE.search(normalised))
    is_question = _strip_trailing(sentence).endswith("?")
    specifics = (0.35 * has_number + 0.35 * has_date + 0.15 * min(proper, 2)
                 + 0.45 * bool(_FIRST_PERSON_FACT.search(normalised))
                 + 0.2 * min(len(content), 8) / 8
                 - 0.3 * (len(content) < 3) - 0.25 * is_question)
    return _Candidate(order, turn_id, speaker, _display(sentence), terms, specifics, informative=bool(content))


def _strip_trailing(sentence: str) -> str:
    return _EMOJI_RE.sub("", sentence).rstrip(" \"'\u201d\u2019)]").rstrip()


def _score(candidates: list[_Candidate]) -> None:
    """Salience = TF-IDF cosine to the conversation's centroid (what it is about) plus the
    specifics a reader would want kept (numbers, dates, names, first-person facts)."""
    informative = [c for c in candidates if c.informative]
    document_frequency: dict = {}
    for c in informative:
        for term in c.terms:
            document_frequency[term] = document_frequency.get(term, 0) + 1
    total = len(informative)
    centroid: dict = {}
    for c in informative:
        vector = {t: n * (math.log((1 + total) / (1 + document_frequency[t])) + 1) for t, n in c.terms.items()}
        norm = math.sqrt(sum(v * v for v in vector.values())) or 1.0
        c.vector = {t: v / norm for t, v in vector.items()}
        for t, v in c.vector.items():
            centroid[t] = centroid.get(t, 0.0) + v
    norm = math.sqrt(sum(v * v for v in centroid.values())) or 1.0
    for c in candidates:
        if not c.informative:
            c.score = -1.0
            continue
        similarity = sum(v * centroid.get(t, 0.0) for t, v in c.vector.items()) / norm
        c.score = similarity + c.specifics


def _cosine(a: dict, b: dict) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(t, 0.0) for t, v in a.items())


def _pick(candidates: list[_Candidate], fits, *, threshold: float) -> list[_Candidate]:
    """Greedy by salience (ties to the earlier sentence), skipping repeats and anything that
    would break the budget; returned in the order they were said."""
    chosen: list[_Candidate] = []
    for c in sorted(candidates, key=lambda candidate: (-candidate.score, candidate.order)):
        if c.score < threshold:
            break
        if any(_cosine(c.vector, other.vector) >= MAX_REDUNDANCY for other in chosen):
            continue
        trial = sorted([*chosen, c], key=lambda candidate: candidate.order)
        if fits(trial):
            chosen = trial
    return chosen


# --- rendering -----------------------------------------------------------------------------

def _format_day(d) -> str:
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def date_range(first: datetime, last: datetime) -> str:
    """"8 May 2023", "8–9 May 2023", "30 April – 2 May 2023", "31 December 2023 – 1 January 2024"."""
    a, b = first.date(), last.astimezone(first.tzinfo).date()
    if a == b:
        return _format_day(a)
    if (a.year, a.month) == (b.year, b.month):
        return f"{a.day}\u2013{b.day} {MONTHS[a.month - 1]} {a.year}"
    if a.year == b.year:
        return f"{a.day} {MONTHS[a.month - 1]} \u2013 {_format_day(b)}"
    return f"{_format_day(a)} \u2013 {_format_day(b)}"


def _names(speakers: list[str]) -> str:
    if len(speakers) > 4:
        return f"{', '.join(speakers[:3])} and {len(speakers) - 3} others"
    if len(speakers) == 1:
        return speakers[0]
    return f"{', '.join(speakers[:-1])} and {speakers[-1]}"


def _header(turns: list[Turn], speakers: list[str]) -> str:
    who = ("between " if len(speakers) > 1 else "with ") + _names(speakers)
    count = f"{len(turns)} message{'s' if len(turns) != 1 else ''}"
    return f"Conversation {who} on {date_range(turns[0].occurred_at, turns[-1].occurred_at)} ({count})."


def _attributed(points: list[_Candidate], *, by_turn: bool) -> list[str]:
    """Consecutive sentences of one message (or of one speaker, for carried-forward points)
    share a single "Speaker:" label."""
    parts: list[list] = []
    for p in points:
        key = p.turn_id if by_turn else p.speaker
        if parts and parts[-1][0] == key and parts[-1][1] == p.speaker:
            parts[-1][2].append(p.text)
        else:
            parts.append([key, p.speaker, [p.text]])
    return [(f"{speaker}: " if speaker else "") + " ".join(texts) for _, speaker, texts in parts]


def _render(header: str, earlier: list[_Candidate], body: list[_Candidate]) -> str:
    lines = [header]
    if earlier:
        lines.append(EARLIER_PREFIX + " ".join(_attributed(earlier, by_turn=False)))
    lines.extend(_attributed(body, by_turn=True))
    return "\n".join(lines)


def _earlier_candidates(previous_summary: str) -> list[_Candidate]:
    """The points of a superseded summary (ours or anyone's prose), attributed when the text
    says who spoke; its header is dropped, as the new one replaces it."""
    points: list[_Candidate] = []
    for line in previous_summary.splitlines():
        line = line.strip()
        if line.startswith(EARLIER_PREFIX.strip()):
            line = line[len(EARLIER_PREFIX.strip()):].strip()
        speaker = None
        for sentence in split_sentences(line):
            if _HEADER.match(sentence):
                continue
            prefix = _SPEAKER_PREFIX.match(sentence)
            if prefix:
                speaker, sentence = prefix.group(1).strip(), prefix.group(2).strip()
            points.append((speaker, sentence))
    names = frozenset(s.lower() for s, _ in points if s)
    return [_candidate(i, None, speaker, sentence, names) for i, (speaker, sentence) in enumerate(points)]


# --- pending actions ---------------------------------------------------------------------

def pending_actions(turns: list[Turn]) -> list[PendingAction]:
    """Commitments (first-person intent) and questions no other party answered afterwards."""
    # later_speakers[i]: up to two distinct speakers who spoke after turn i, enough to tell
    # whether anyone other than the asker did.
    later_speakers: list[tuple] = [()] * len(turns)
    seen_after: tuple = ()
    for index in range(len(turns) - 1, -1, -1):
        later_speakers[index] = seen_after
        turn = turns[index]
        if turn.direction != "system" and turn.speaker not in seen_after and len(seen_after) < 2:
            seen_after = (*seen_after, turn.speaker)
    actions: list[PendingAction] = []
    seen: set = set()
    for index, turn in enumerate(turns):
        if turn.direction == "system":
            continue
        for sentence in split_sentences(turn.content):
            normalised = sentence.translate(_APOSTROPHES)
            is_question = _strip_trailing(sentence).endswith("?")
            if is_question:
                answered = any(s != turn.speaker for s in later_speakers[index])
                if answered or _PHATIC_QUESTION.match(_strip_trailing(normalised)):
                    continue
                kind = "question"
            elif _COMMITMENT.search(normalised) and not _NOT_A_COMMITMENT.search(normalised):
                kind = "commitment"
            else:
                continue
            key = (kind, turn.speaker, sentence.lower())
            if key not in seen:
                seen.add(key)
                actions.append(PendingAction(kind=kind, text=_display(sentence), speaker=turn.speaker,
                                             interaction_id=turn.id))
    return actions


# --- tone ----------------------------------------------------------------------------------

_SLANG = frozenset("lol lmao rofl omg btw u ur ya yeah yep yup nah gonna wanna gotta kinda sorta dunno "
                   "haha hahaha hehe dude bro thx pls plz tbh imo imho idk ikr brb ttyl cya yay woo "
                   "awesome cool hey wow ok okay k sup gotcha y'all ain't".split())
_POLITE = re.compile(r"^(?:dear|good (?:morning|afternoon|evening)|greetings)\b|\b(?:kind regards|best regards|"
                     r"regards|sincerely|please|kindly|thank you|would you|could you|i would|"
                     r"i appreciate|appreciated|at your convenience)\b", re.IGNORECASE | re.MULTILINE)
_CONTRACTION = re.compile(r"\b\w+'(?:re|ve|ll|d|m|t)\b|\b(?:it|that|what|there|he|she|let|who|here)'s\b"
                          r"|\b\w+n't\b", re.IGNORECASE)
_JARGON = frozenset("""
api apis endpoint endpoints database databases db sql postgres postgresql mysql sqlite query queries index
indexes schema migration migrations server servers deploy deployment deployed cache caching latency
throughput function functions method class classes module modules library dependency dependencies
docker kubernetes container containers cluster python django javascript typescript rust golang java
json yaml http https tcp dns url urls bug bugs stack traceback exception exceptions commit commits branch
merge rebase regex token tokens vector vectors embedding embeddings cpu gpu ram memory thread threads
async await timeout timeouts config configuration compile compiler runtime kernel linux bash shell
script scripts repo repository git pytest test tests unittest null none integer string strings array
arrays parameter parameters argument arguments variable variables algorithm benchmark refactor
backend frontend middleware serializer orm transaction transactions mutex webhook oauth jwt ssl tls
""".split())
_FILE_PATH = re.compile(r"(?:^|\s)(?:~|\.{1,2})?/?[\w.-]+/[\w./-]+|\b[\w-]+\.(?:py|js|ts|tsx|json|ya?ml|toml|"
                        r"sql|md|sh|txt|csv|html|css|go|rs|java|rb|cfg|ini|lock|log)\b")
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_IDENTIFIER = re.compile(r"\b[a-z]+_[a-z0-9_]+\b|\b[a-z]+[A-Z][A-Za-z0-9]+\b|\b\w+\(\)")

_POSITIVE = frozenset("""
good great awesome amazing wonderful fantastic excellent happy glad love loved lovely like liked enjoy
enjoyed fun nice cool beautiful brilliant perfect thanks thank grateful thankful excited exciting
proud inspiring inspired powerful helpful supportive accepted courage best better win won success
successful works working fixed solved pleased delighted calm relaxed relaxing peaceful hope hopeful
congrats congratulations yay sweet kind impressive impressed easy smooth fast
""".split())
_NEGATIVE = frozenset("""
bad terrible awful horrible sad angry upset hate hated annoying annoyed frustrated frustrating worried
worry anxious stressed stress stressful tired exhausted sick hurt pain painful lonely scared afraid
fear fail failed failing failure broken broke bug crash crashed crashes error errors wrong problem
problems issue issues slow stuck lost lose disappointed disappointing sorry unfortunately worse worst
difficult hard ugly boring confused confusing swamped overwhelmed
""".split())
_NEGATORS = frozenset("not no never none nobody nothing neither nor hardly without isn't wasn't aren't "
                      "weren't don't doesn't didn't can't cannot couldn't won't wouldn't shouldn't "
                      "haven't hasn't hadn't ain't".split())
_POSITIVE_EMOJI = frozenset("\U0001F600\U0001F601\U0001F602\U0001F603\U0001F604\U0001F60A\U0001F60D"
                            "\U0001F970\U0001F389\U0001F44D\u2764\U0001F495\U0001F496\U0001F64C\U0001F60E"
                            "\u263A\U0001F917\U0001F973\u2728")
_NEGATIVE_EMOJI = frozenset("\U0001F622\U0001F62D\U0001F61E\U0001F620\U0001F621\U0001F44E\U0001F494"
                            "\U0001F61F\U0001F629\U0001F62B\U0001F612\U0001F615")


def _clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


def tone_profile(turns: list[Turn]) -> dict:
    """Formality, technical level, sentiment and pace, each from cheap surface signals."""
    spoken = [t for t in turns if t.direction != "system"] or turns
    texts = [t.content.translate(_APOSTROPHES) for t in spoken]
    prose = [_FENCED_CODE.sub(" ", text) for text in texts]
    sentences = [s for text in prose for s in split_sentences(text)]
    tokens = [t for text in prose for t in _tokens(text)]
    n_words, n_sentences, n_turns = max(len(tokens), 1), max(len(sentences), 1), len(spoken)

    emoji = sum(len(_EMOJI_RE.findall(text)) + len(_EMOTICON.findall(text)) for text in prose)
    informal = (0.3 * min(1.0, 10 * sum(len(_CONTRACTION.findall(text)) for text in prose) / n_words)
                + 0.35 * min(1.0, 12 * sum(t in _SLANG for t in tokens) / n_words)
                + 0.2 * min(1.0, sum(text.count("!") for text in prose) / n_sentences)
                + 0.3 * min(1.0, emoji / n_turns)
                + 0.15 * sum(s[:1].islower() for s in sentences) / n_sentences)
    complete = sum(s[:1].isupper() and s.rstrip()[-1:] in ".?" for s in sentences) / n_sentences
    average_words = len(tokens) / n_sentences
    formal = (0.35 * complete
              + 0.3 * min(1.0, sum(len(_POLITE.findall(text)) for text in prose) / n_turns)
              + 0.25 * _clamp((average_words - 6) / 12, 0.0, 1.0))
    formality = _clamp(0.45 + formal - informal, 0.0, 1.0)

    code_blocks = sum(text.count("```") // 2 for text in texts)
    structure = 2 * code_blocks + sum(len(_INLINE_CODE.findall(text)) + len(_FILE_PATH.findall(text))
                                      + len(_IDENTIFIER.findall(text)) for text in prose)
    jargon = sum(t in _JARGON for t in tokens)
    long_words = sum(len(t) >= 12 and not t.isdigit() for t in tokens)
    technical = 1 - math.exp(-(1.2 * structure / n_turns + 12 * jargon / n_words + 4 * long_words / n_words))

    return {
        "formality": round(formality, 3),
        "technical_level": round(technical, 3),
        "sentiment": round(_sentiment(prose), 3),
        **pace(turns),
    }


def _sentiment(texts: list[str]) -> float:
    positive = negative = 0.0
    for text in texts:
        tokens = _tokens(text)
        for i, token in enumerate(tokens):
            polarity = (token in _POSITIVE) - (token in _NEGATIVE)
            if not polarity:
                continue
            # "not good", "isn't really working": a negator among the three words before flips it.
            if any(t in _NEGATORS for t in tokens[max(0, i - 3):i]):
                polarity = -polarity
            if polarity > 0:
                positive += 1
            else:
                negative += 1
        for char in text:
            positive += char in _POSITIVE_EMOJI
            negative += char in _NEGATIVE_EMOJI
    # The +2 keeps a single "thanks" in a neutral chat from reading as euphoric.
    return _clamp((positive - negative) / (positive + negative + 2), -1.0, 1.0)


def pace(turns: list[Turn]) -> dict:
    """"rapid" / "steady" / "slow" from the median gap between turns, "sporadic" for bursts
    separated by long silences. A single message has no rhythm yet: "slow", 0 per hour."""
    times = sorted(t.occurred_at for t in turns)
    gaps = [b - a for a, b in zip(times, times[1:])]
    if not gaps:
        return {"pace": "slow", "messages_per_hour": 0.0}
    median = statistics.median(gaps)
    longest = max(gaps)
    if len(gaps) >= 3 and longest >= SPORADIC_MIN_GAP and longest >= SPORADIC_RATIO * median:
        label = "sporadic"
    elif median <= RAPID_GAP:
        label = "rapid"
    elif median <= STEADY_GAP:
        label = "steady"
    else:
        label = "slow"
    # A span under a minute counts as a minute, so a burst does not read as infinite.
    span_hours = max((times[-1] - times[0]).total_seconds(), 60.0) / 3600
    return {"pace": label, "messages_per_hour": round(len(gaps) / span_hours, 2)}


# --- the summary ---------------------------------------------------------------------------

def summarise(turns: list[Turn], *, previous_summary: str | None = None, max_chars: int = 1200) -> SummaryDraft:
    """A readable summary of `turns`, never longer than `max_chars`.

    With `previous_summary` (the summary this one supersedes), its most salient points are
    carried forward on an "Earlier:" line, so a chain of summaries keeps its oldest facts."""
    if not turns:
        raise ValueError("a summary needs at least one turn")
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    if any(t.occurred_at.tzinfo is None for t in turns):
        raise ValueError("turn times must be timezone-aware")
    turns = sorted(turns, key=lambda t: (t.occurred_at, t.id))

    speakers: list[str] = []
    for turn in turns:
        name = " ".join(turn.speaker.split()) or "unknown"
        if turn.direction != "system" and name not in speakers:
            speakers.append(name)
    if not speakers:
        speakers = ["system"]
    header = _header(turns, speakers)
    if len(header) > max_chars:
        header = header[:max_chars - 1] + "\u2026"

    names = frozenset(part.lower() for s in speakers for part in s.split())
    body_candidates = []
    for turn in turns:
        if turn.direction == "system":
            continue
        speaker = " ".join(turn.speaker.split()) or "unknown"
        for sentence in split_sentences(turn.content):
            body_candidates.append(_candidate(len(body_candidates), turn.id, speaker, sentence, names))
    _score(body_candidates)

    earlier_candidates = _earlier_candidates(previous_summary) if previous_summary else []
    _score(earlier_candidates)
    earlier_length = sum(len(c.text) + 1 for c in earlier_candidates if c.informative)
    room = max(0, max_chars - len(header) - 1)
    reserve = min(earlier_length + len(EARLIER_PREFIX), int(room * EARLIER_SHARE)) if earlier_length else 0

    body = _pick(body_candidates, lambda trial: len(_render(header, [], trial)) + reserve <= max_chars,
                 threshold=MIN_SALIENCE)
    # Carried-forward points already earned their place once; only filler is refused.
    earlier = _pick(earlier_candidates, lambda trial: len(_render(header, trial, body)) <= max_chars,
                    threshold=-0.5)

    salient: list[int] = []
    for c in body:
        if c.turn_id not in salient:
            salient.append(c.turn_id)
    return SummaryDraft(
        text=_render(header, earlier, body),
        tone=tone_profile(turns),
        pending_actions=pending_actions(turns),
        salient_turn_ids=salient,
    )
