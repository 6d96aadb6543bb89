"""The words of a message: sentences, tokens and stems, and trimming a sentence for display."""

from __future__ import annotations

import re

# One rambling message must not eat the whole budget.
MAX_SENTENCE_CHARS = 300

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")

# --- sentence splitting --------------------------------------------------------------------

_EMOJI = (r"[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u2300-\u23FF]"
          r"[\uFE0F\u200D\U0001F3FB-\U0001F3FF\U0001F000-\U0001FAFF\u2600-\u27BF]*")
_EMOJI_RE = re.compile(_EMOJI)
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


def _display(sentence: str) -> str:
    if len(sentence) <= MAX_SENTENCE_CHARS:
        return sentence
    cut = sentence[:MAX_SENTENCE_CHARS - 1].rsplit(" ", 1)[0]
    return cut + "\u2026"


def _strip_trailing(sentence: str) -> str:
    return _EMOJI_RE.sub("", sentence).rstrip(" \"'\u201d\u2019)]").rstrip()
