"""Finding where a name starts and ends in free text: people ("Jane", "Jane Doe"),
organisations and places ("University of Toronto", "St. Mary's"), kept whole across words
and stopped at function words, dates and sentence ends."""

from __future__ import annotations

import re
from dataclasses import dataclass

from entities.extraction._common import _I

_WORD = re.compile(r"[^\W_][\w'’&\-]*(?:\.[^\W_][\w'’&\-]*)*\.?")
_CONNECTORS = ("of", "de", "da", "di", "du", "del", "van", "von", "der", "den", "la", "le", "&")
_NAME_SEP = re.compile(rf"[ \t]+(?:(?:{'|'.join(_CONNECTORS)})[ \t]+)?")
_PERSON_SEP = re.compile(r"[ \t]+(?:(?:de|da|di|du|del|van|von|der|den|la|le)[ \t]+)?")
# Abbreviations that begin a name rather than end a sentence ("St. Mary's", "Mr. Smith").
_PREFIX_ABBREVIATIONS = frozenset({"St", "Mt", "Ft", "Dr", "Mr", "Mrs", "Ms", "Prof"})
_WEEKDAYS = frozenset({"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"})
# April, May, June and August are also first names, so only these stop a person's name.
_NON_NAME_MONTHS = frozenset({"January", "February", "March", "July", "September", "October", "November", "December"})
_MONTHS = _NON_NAME_MONTHS | {"April", "May", "June", "August"}
# Capitalised words that start a clause or fill a sentence but never name anyone.
_FUNCTION_WORDS = frozenset(
    """I I'm I've I'd I'll Im A An And But Or So Then My Your His Her Our Their We You He She It It's
    They This That These Those There Here Is Was Are Were Be Who What When Where Why How Oh Hey Hi
    Hello Yes Yeah Yep No Nope Not Thanks Thank Please OK Ok Okay ASAP Lol LOL Haha Wow Now Today
    Tonight Tomorrow Yesterday Later Soon Too Also Just Maybe Sure Well Anyway Btw BTW Back Sometime
    Again If Because""".split()
)
_NOT_PERSON = _FUNCTION_WORDS | _WEEKDAYS | _NON_NAME_MONTHS | {"The"}
_NOT_ORGANISATION = _FUNCTION_WORDS | _WEEKDAYS | _MONTHS
# Software, platforms and services: "I moved to Linux" is not a move house, "I joined
# Discord" is not a new job.
_SOFTWARE = frozenset(
    """Linux Windows Mac macOS MacOS OSX Python Java JavaScript TypeScript Rust Go Golang Ruby Kotlin
    Swift Postgres PostgreSQL MySQL SQLite Mongo MongoDB Redis React Vue Angular Svelte Django Flask
    Rails AWS Azure GCP Kubernetes Docker GitHub GitLab Bitbucket Slack Teams Zoom Notion Obsidian
    Vim Neovim Emacs VS VSCode Ubuntu Debian Arch Fedora Android iOS iPhone Chrome Firefox Safari
    Spotify Twitter Mastodon Bluesky Substack Medium Discord Reddit Facebook Instagram TikTok LinkedIn
    YouTube Twitch Gmail Outlook WhatsApp Telegram Signal Snapchat Pinterest Tumblr Patreon Threads
    Strava Duolingo Netflix Hulu""".split()
)


def _plain(word: str) -> str:
    return word.replace("’", "'")


def _is_capitalised(word: str) -> bool:
    first = word[0]
    if first.isupper():
        return True
    if first.isdigit():  # 3M, 7-Eleven
        return any(c.isupper() for c in word)
    return len(word) > 1 and first.islower() and word[1].isupper()  # eBay


def _is_possessive(word: str) -> bool:
    return _plain(word).endswith("'s")


@dataclass(frozen=True)
class _Name:
    start: int
    end: int
    possessive: bool


def _name_at(text: str, pos: int, *, person: bool, max_words: int) -> _Name | None:
    """The capitalised name that starts exactly at `pos`, kept whole across words
    ("New York", "University of Toronto"), ending before lowercase words, punctuation and a
    sentence-ending dot ("Acme Corp." -> "Acme Corp")."""
    stop = _NOT_PERSON if person else _NOT_ORGANISATION
    separator = _PERSON_SEP if person else _NAME_SEP
    spans: list[tuple[int, int]] = []
    possessive = False
    at = pos
    while len(spans) < max_words:
        match = _WORD.match(text, at)
        if not match:
            break
        word = match.group()
        bare = word.rstrip(".'’-&")
        if not bare or not _is_capitalised(bare) or _plain(bare) in stop:
            break
        if person and bare.isdigit():
            break
        abbreviation = word.endswith(".") and bare in _PREFIX_ABBREVIATIONS
        acronym = word.endswith(".") and "." in bare  # U.S.
        spans.append((match.start(), match.end() if abbreviation or acronym else match.start() + len(bare)))
        if _is_possessive(bare):
            possessive = True
            break
        if word.endswith(".") and not abbreviation:
            break  # the end of a sentence
        gap = separator.match(text, match.end())
        if not gap:
            break
        at = gap.end()
    while spans and _plain(text[spans[-1][0] : spans[-1][1]]).rstrip(".") in _PREFIX_ABBREVIATIONS:
        spans.pop()  # "I live in St." names nothing
    if not spans:
        return None
    first = text[spans[0][0] : spans[0][1]]
    if first == "The" and len(spans) == 1:
        return None
    return _Name(spans[0][0], spans[-1][1], possessive)


def _person_at(text: str, pos: int) -> tuple[int, int] | None:
    """A person's name at `pos`, without a possessive ending ("Jane's dog" -> "Jane")."""
    name = _name_at(text, pos, person=True, max_words=3)
    if name is None:
        return None
    end = name.end - 2 if name.possessive else name.end
    return (name.start, end) if end > name.start else None


_POSSESSED = re.compile(
    r"[ \t]+(?!(?:and|or|but|so|in|on|at|for|with|as|since|until|now|then|where|which|who|because)\b)[^\W\d_]", _I
)


def _organisation_at(text: str, pos: int, *, max_words: int = 6) -> tuple[int, int] | None:
    """An organisation or place at `pos`. A possessive that modifies what follows ("Acme's
    running club") names something else; one that ends the phrase ("McDonald's.") is kept."""
    name = _name_at(text, pos, person=False, max_words=max_words)
    if name is None:
        return None
    if name.possessive and _POSSESSED.match(text, name.end):
        return None
    return name.start, name.end


_ARTICLE = re.compile(r"the[ \t]+")  # lowercase: "The Hague" keeps its article


def _skip_article(text: str, pos: int) -> int:
    article = _ARTICLE.match(text, pos)
    return article.end() if article else pos
