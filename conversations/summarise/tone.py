"""The tone of a conversation (formality, technical level, sentiment) and its pace, each
read from cheap surface signals."""

from __future__ import annotations

import math
import re
import statistics
from datetime import timedelta

from conversations.summarise._types import Turn
from conversations.summarise.text import _APOSTROPHES, _EMOJI_RE, _FENCED_CODE, _tokens, split_sentences

# --- pace (median gap between turns) -----------------------------------------------------

RAPID_GAP = timedelta(minutes=1)  # live chat: replies inside a minute
STEADY_GAP = timedelta(minutes=15)  # still one sitting, people think before they answer
# Bursts separated by long silences: the longest gap dwarfs the usual one and is long.
SPORADIC_RATIO = 10
SPORADIC_MIN_GAP = timedelta(hours=1)

# --- tone ----------------------------------------------------------------------------------

_EMOTICON = re.compile(r"(?<!\w)(?:[:;=]-?[)(DPp/\\]|<3|xD|XD)(?!\w)")
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
