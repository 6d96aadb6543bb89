"""Deterministic, named rules that find what a speaker states about themselves: keyed
profile facts ("my email is …", "I'm on Pacific time") and relationships from the speaker
to someone or something else ("I work at Acme", "my sister Jane").

Pure Python, no Django, so the rules run in microseconds and are property-tested.

Every candidate goes to a person for review, so the rules choose precision over recall: a
cue fires only on first-person present-tense wording, names must be capitalised ("I work
at home" is not an employer), job titles come from a fixed list ("I'm a big fan" is not a
role), and a rule that is unsure stays quiet. Free-form statements ("I love hiking") are
memories, not profile values, and are left alone.

Rule names are stable, `profile.<key>.<cue>` and `relationship.<predicate>.<cue>`, so a
reviewer (and `ProfileValue.source = "rule:<name>"`) can tell which wording produced a
candidate. Relations between two named third parties are out of scope: the speaker is
always the subject.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from entities.kinds import PREDICATES  # a pure module too: no Django

PROFILE_KEYS = (
    "email",
    "name",
    "preferred_name",
    "employer",
    "location",
    "timezone",
    "role",
    "communication_style",
    "technical_level",
    "phone",
)

# The predicate registry (name -> (description, functional)) lives in entities.kinds.


@dataclass(frozen=True)
class ProfileCandidate:
    key: str
    value: str
    quote: str
    start: int
    end: int
    rule: str
    confidence: float


@dataclass(frozen=True)
class RelationCandidate:
    predicate: str
    object_name: str
    object_kind: str
    subject_is_speaker: bool
    quote: str
    start: int
    end: int
    rule: str
    confidence: float
    valid_from_hint: str | None


Candidate = ProfileCandidate | RelationCandidate

_I = re.IGNORECASE
_IM = r"\bI(?:[ \t]*['’]?[ \t]*m|[ \t]+am)"  # I'm, I’m, Im, I am
_SP = r"[ \t]+"


# --- names -----------------------------------------------------------------------------

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


# --- shared helpers ---------------------------------------------------------------------

# A first-person statement inside a condition, a wish or someone else's belief does not
# state a fact: "when I'm a doctor", "if I work at Google", "Mom thinks I'm a nurse".
_HYPOTHETICAL_BEFORE = re.compile(
    r"\b(?:if|when|whenever|once|until|unless|whether|wish|hope|imagine|pretend|suppose|dream|"
    r"dreamed|dreamt|as\s+if|as\s+though|like|thinks?|thought|believes?|believed|assumes?|"
    r"assumed|says?|said)(?:[ \t]+that)?[ \t]*$",
    _I,
)
_NOW_AFTER = re.compile(r"[ \t]*,?[ \t]*(?<!right )now\b", _I)
_SINCE_AFTER = re.compile(r"[ \t]*,?[ \t]*(?:since|as\s+of|nowadays|these\s+days)\b", _I)
_CHANGE_WORD = re.compile(r"\b(?:now|just|recently|moved|relocated|joined|started|new)\b", _I)


def _hypothetical(text: str, start: int) -> bool:
    return bool(_HYPOTHETICAL_BEFORE.search(text[max(0, start - 40) : start]))


def _trailing_now(text: str, end: int) -> int:
    """Where a trailing "now" ends, so the quote keeps the word that marks the change."""
    now = _NOW_AFTER.match(text, end)
    return now.end() if now else end


def _change_hint(text: str, start: int, obj: tuple[int, int], end: int) -> str | None:
    """ "now" when the wording marks a change ("I just joined", "moved", "… now",
    "since May"), so the relationship starts at the message rather than sometime before.
    Only the cue and what follows the object count: "New Relic" is a name, not news."""
    if _CHANGE_WORD.search(text[start : obj[0]]) or _CHANGE_WORD.search(text[obj[1] : end]):
        return "now"
    return "now" if _SINCE_AFTER.match(text, end) else None


def _profile(text: str, key: str, value: str, start: int, end: int, rule: str, confidence: float) -> ProfileCandidate:
    return ProfileCandidate(key, value, text[start:end], start, end, f"profile.{key}.{rule}", confidence)


def _relation(
    text: str,
    predicate: str,
    object_span: tuple[int, int],
    kind: str,
    start: int,
    end: int,
    rule: str,
    confidence: float,
    hint: str | None,
) -> RelationCandidate:
    name = text[object_span[0] : object_span[1]].strip()
    return RelationCandidate(
        predicate, name, kind, True, text[start:end], start, end, f"relationship.{predicate}.{rule}", confidence, hint
    )


def _matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """The statements of a cue, without those in a condition or someone else's belief."""
    for match in pattern.finditer(text):
        if not _hypothetical(text, match.start()):
            yield match


# --- email and phone --------------------------------------------------------------------

_EMAIL = r"[A-Za-z0-9][A-Za-z0-9._%+\-]*@[A-Za-z0-9][A-Za-z0-9\-]*(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9\-])"
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


# --- work: employer and role -------------------------------------------------------------

_ROLE_MODIFIERS = r"""senior junior lead principal staff chief head assistant associate deputy
    software data web front-?end back-?end full-?stack mobile cloud devops ml ai qa test security
    systems? network product project program graphic ux ui interaction visual industrial game
    freelance independent registered licensed certified high-?school middle-?school
    elementary(?:-?school)? primary(?:-?school)? kindergarten preschool school math maths science
    english history music art language research phd grad graduate postgraduate undergraduate
    undergrad college university medical nursing law mechanical electrical civil chemical
    biomedical aerospace structural environmental clinical mental-health marriage guidance career
    financial sales marketing hr it content technical pediatric paediatric er icu emergency
    general python java javascript typescript ruby php ios android react""".split()
_ROLE_HEADS = r"""software\s+engineer social\s+worker police\s+officer real\s+estate\s+agent
    flight\s+attendant nurse\s+practitioner personal\s+trainer product\s+owner scrum\s+master
    site\s+reliability\s+engineer engineer developer programmer designer manager teacher nurse
    doctor physician surgeon dentist pharmacist student researcher scientist counsell?or
    therapist psychologist psychiatrist lawyer attorney paralegal accountant architect analyst
    consultant journalist reporter editor librarian professor lecturer tutor instructor mechanic
    electrician plumber carpenter pilot firefighter paramedic veterinarian chef baker barista
    bartender waiter waitress cashier translator interpreter recruiter intern administrator
    sysadmin technician entrepreneur co-?founder founder ceo cto cfo coo economist statistician
    mathematician physicist chemist biologist illustrator animator dietitian nutritionist midwife
    caregiver receptionist secretary clerk farmer tester maintainer freelancer contractor""".split()
_TECH_HEADS = frozenset({"engineer", "developer", "programmer", "architect", "sysadmin", "scientist"})
_SENIOR = frozenset({"senior", "lead", "principal", "staff"})
_ROLE = rf"(?P<role>(?:(?:{'|'.join(_ROLE_MODIFIERS)}){_SP}){{0,3}}(?:{'|'.join(_ROLE_HEADS)}))"
_ROLE_END = (
    r"(?=[ \t]*(?:$|[.,;:!?)\]\n—–]|-[ \t])"
    r"|[ \t]+(?:at|for|in|with|and|but|who|by|from|so|now|too|here|there|myself|on|based|since)\b"
    r"|[ \t]+of[ \t]+(?-i:[A-Z]))"  # "the founder of Acme", not "a student of life"
)
_AT_ORGANISATION = re.compile(r"[ \t]+(?:at|for)[ \t]+", _I)
_OF_ORGANISATION = re.compile(r"[ \t]+(?:at|for|of)[ \t]+", _I)  # "the founder of Acme"
_LEADERS = frozenset({"founder", "co-founder", "cofounder", "ceo", "cto", "cfo", "coo"})
_ROLE_CUES = (
    (re.compile(rf"{_IM}(?:{_SP}(?:now|currently|also|actually))?{_SP}(?:an?|the){_SP}{_ROLE}{_ROLE_END}", _I), "im_a", 0.8),
    (re.compile(rf"\bI(?:{_SP}(?:now|currently|also|actually))?{_SP}work{_SP}as{_SP}an?{_SP}{_ROLE}{_ROLE_END}", _I), "work_as", 0.85),
    (re.compile(rf"{_IM}{_SP}working{_SP}as{_SP}an?{_SP}{_ROLE}{_ROLE_END}", _I), "work_as", 0.85),
)


_PROPER_MODIFIERS = {w.lower(): w for w in "Python Java JavaScript TypeScript Ruby PHP iOS Android React English".split()}


def _role_value(phrase: str) -> str:
    """"Senior Software Engineer" -> "senior software engineer"; acronyms and names keep
    their case ("UX designer", "CEO", "Python developer")."""
    words = phrase.split()
    return " ".join(
        _PROPER_MODIFIERS.get(w.lower()) or (w if len(w) > 1 and any(c.isupper() for c in w[1:]) else w.lower()) for w in words
    )


def _roles(text: str) -> Iterator[Candidate]:
    for pattern, rule, confidence in _ROLE_CUES:
        for m in _matches(pattern, text):
            role = _role_value(m.group("role"))
            words = role.lower().split()
            employer = None
            at = (_OF_ORGANISATION if words[-1] in _LEADERS else _AT_ORGANISATION).match(text, m.end())
            if at:
                employer = _organisation_at(text, _skip_article(text, at.end()))
            end = employer[1] if employer else m.end()
            # "I'm a nurse at St. Mary's" is a job more surely than "I'm a nurse" alone.
            yield _profile(text, "role", role, m.start(), end, rule, 0.9 if employer else confidence)
            if words[-1] in _TECH_HEADS and _SENIOR & set(words):
                yield _profile(text, "technical_level", "expert", m.start(), m.end(), "senior_title", 0.7)
            if employer is None:
                continue
            hint = _change_hint(text, m.start(), employer, end)
            if words[-1] == "student":  # a university is where a student studies, not an employer
                yield _relation(text, "member_of", employer, "organisation", m.start(), end, "student_at", 0.7, hint)
                continue
            name = text[employer[0] : employer[1]]
            yield _profile(text, "employer", name, m.start(), end, "role_at", 0.85)
            yield _relation(text, "works_at", employer, "organisation", m.start(), end, "role_at", 0.85, hint)


_EMPLOYER_CUES = (
    (re.compile(rf"\bI(?:{_SP}(?:also|currently|now|still|actually|just))?{_SP}work{_SP}at{_SP}", _I), "work_at", 0.85),
    # "I work for Jane" is as likely as "I work for Acme", hence the lower confidence.
    (re.compile(rf"\bI(?:{_SP}(?:also|currently|now|still|actually|just))?{_SP}work{_SP}for{_SP}", _I), "work_for", 0.6),
    (re.compile(rf"(?:{_IM}(?:{_SP}(?:now|currently|also|still))?|\bI(?:['’]ve|{_SP}have){_SP}been){_SP}working{_SP}(?:at|for){_SP}", _I), "working_at", 0.8),
    (re.compile(rf"\bI{_SP}(?:just{_SP}|recently{_SP})?(?:started{_SP}(?:working{_SP})?at|got{_SP}(?:a{_SP}job{_SP}at|hired{_SP}(?:at|by))|started{_SP}a{_SP}new{_SP}job{_SP}at){_SP}", _I), "started_at", 0.8),
)
_AS_ROLE = re.compile(rf"[ \t]*,?[ \t]+as{_SP}an?{_SP}{_ROLE}{_ROLE_END}", _I)


def _employers(text: str) -> Iterator[Candidate]:
    for pattern, rule, confidence in _EMPLOYER_CUES:
        for m in _matches(pattern, text):
            employer = _organisation_at(text, _skip_article(text, m.end()))
            if employer is None:
                continue
            yield from _employment(text, m.start(), employer, rule, confidence)


def _employment(text: str, start: int, employer: tuple[int, int], rule: str, confidence: float) -> Iterator[Candidate]:
    end = _trailing_now(text, employer[1])
    hint = _change_hint(text, start, employer, end)
    yield _profile(text, "employer", text[employer[0] : employer[1]], start, end, rule, confidence)
    yield _relation(text, "works_at", employer, "organisation", start, end, rule, confidence, hint)
    role = _AS_ROLE.match(text, end)
    if role:
        yield _profile(text, "role", _role_value(role.group("role")), start, role.end(), f"{rule}_as", 0.85)


# --- groups: member_of, manages ----------------------------------------------------------

_GROUP_NOUNS = r"""team group club band choir committee board community society union league squad
    crew guild association chapter council orchestra lab department""".split()
_NOT_GROUP_WORDS = frozenset(
    """a an the my our your his her their this that same whole other entire best great good new old
    first last right wrong big small perfect winning losing home""".split()
)
_GROUP = re.compile(rf"(?P<words>(?:[^\W\d_][\w'’\-]*{_SP}){{1,3}}?)(?P<noun>{'|'.join(_GROUP_NOUNS)})s?\b", _I)
_GROUP_NOUN_ONLY = re.compile(rf"(?:{'|'.join(_GROUP_NOUNS)})\b", _I)


def _described_group(text: str, pos: int) -> tuple[int, int] | None:
    """"platform team", "chess club": words that say which group. "same team" does not."""
    group = _GROUP.match(text, pos)
    if group and not ({w.lower() for w in group.group("words").split()} & _NOT_GROUP_WORDS):
        return group.span()
    return None


def _group_at(text: str, pos: int) -> tuple[int, int] | None:
    """"the platform team", "the Sierra Club", "the chess club" (after its "the"): a named
    or described group. "the team" alone names nothing."""
    described = _described_group(text, pos)
    if described:
        return described
    name = _organisation_at(text, pos)
    if name and not _GROUP_NOUN_ONLY.fullmatch(text[name[0] : name[1]]):
        return name
    return None


_MEMBER_CUES = (
    (re.compile(rf"{_IM}(?:{_SP}(?:now|also))?{_SP}(?:a{_SP})?(?:part|member){_SP}of{_SP}", _I), "part_of", 0.85),
    (re.compile(rf"{_IM}(?:{_SP}(?:now|also))?{_SP}on{_SP}the{_SP}", _I), "on_the", 0.8),
    (re.compile(rf"\bI{_SP}(?:(?:just|recently|also){_SP})?joined{_SP}", _I), "joined", 0.8),
)


def _memberships(text: str) -> Iterator[Candidate]:
    for pattern, rule, confidence in _MEMBER_CUES:
        for m in _matches(pattern, text):
            article = _ARTICLE.match(text, m.end())
            if rule == "joined":
                yield from _joined(text, m, article)
                continue
            if rule == "on_the":  # "I'm on the phone" is not a team, nor is "I'm on the Rhine"
                span = _described_group(text, m.end())
            else:
                span = _group_at(text, article.end() if article else m.end())
            if span:
                end = _trailing_now(text, span[1])
                yield _relation(text, "member_of", span, "organisation", m.start(), end, rule, confidence, _change_hint(text, m.start(), span, end))


def _joined(text: str, m: re.Match[str], article: re.Match[str] | None) -> Iterator[Candidate]:
    """ "I joined the chess club" is a membership; "I joined Acme" is a new job unless Acme
    is a platform ("I joined Discord") or its name says it is a group ("Sierra Club")."""
    if article:
        group = _group_at(text, article.end())
        if group:
            end = _trailing_now(text, group[1])
            yield _relation(text, "member_of", group, "organisation", m.start(), end, "joined", 0.8, "now")
        return
    name = _organisation_at(text, m.end())
    if name is None or _plain(text[name[0] : name[1]].split()[0]) in _SOFTWARE:
        return
    last_word = text[name[0] : name[1]].split()[-1]
    if _GROUP_NOUN_ONLY.fullmatch(last_word):
        yield _relation(text, "member_of", name, "organisation", m.start(), _trailing_now(text, name[1]), "joined", 0.8, "now")
        return
    yield from _employment(text, m.start(), name, "joined", 0.6)


_MANAGES_CUES = (
    (re.compile(rf"\bI(?:{_SP}(?:now|currently|also))?{_SP}(?:manage|oversee){_SP}", _I), "manage", 0.85),
    (re.compile(rf"\bI(?:{_SP}(?:now|currently|also))?{_SP}(?:lead|run){_SP}", _I), "lead", 0.75),
    (re.compile(rf"{_IM}(?:{_SP}(?:now|currently|also))?{_SP}managing{_SP}", _I), "manage", 0.8),
)
_REPORTS_TO_ME = re.compile(rf"(?<![ \t]){_SP}(?:now{_SP})?reports?{_SP}(?:directly{_SP})?to{_SP}me\b", _I)


def _managing(text: str) -> Iterator[Candidate]:
    for pattern, rule, confidence in _MANAGES_CUES:
        for m in _matches(pattern, text):
            article = _ARTICLE.match(text, m.end())
            if article:
                group = _described_group(text, article.end())
                if group is None:
                    continue
                span, kind = group, "organisation"
            elif rule == "manage":  # "I lead Jane" is not English; "I manage Jane" is
                person = _person_at(text, m.end())
                if person is None:
                    continue
                span, kind = person, "person"
            else:
                continue
            end = _trailing_now(text, span[1])
            yield _relation(text, "manages", span, kind, m.start(), end, rule, confidence, _change_hint(text, m.start(), span, end))
    for m in _REPORTS_TO_ME.finditer(text):
        # The person is the name that ends right before "reports to me"; the longest wins.
        offset = max(0, m.start() - 60)
        words = list(re.finditer(r"[^\W\d_][\w'’\-]*", text[offset : m.start()]))
        for word in words[-3:]:
            person = _person_at(text, offset + word.start())
            if person and person[1] == m.start() and (person[0] == 0 or not text[person[0] - 1].isalnum()):
                end = _trailing_now(text, m.end())
                yield _relation(text, "manages", person, "person", person[0], end, "reports_to_me", 0.8, _change_hint(text, person[1], (m.end(), m.end()), end))
                break


# --- people: family_of, knows, reports_to -------------------------------------------------

_KIN = r"""mother-in-law father-in-law sister-in-law brother-in-law son-in-law daughter-in-law
    stepmother stepfather stepmom stepdad stepsister stepbrother stepson stepdaughter
    half-sister half-brother grandmother grandfather grandma grandpa granny grandson
    granddaughter mother father mom mum mommy mummy dad daddy sister brother wife husband son
    daughter cousin aunt auntie uncle niece nephew""".split()
_ACQUAINTANCES = r"""best\s+friend friend colleague co-?worker teammate classmate roommate flatmate
    housemate neighbou?r mentor buddy pal boyfriend girlfriend partner fianc[eé]e? bff""".split()
_BOSSES = r"(?:boss|manager|supervisor|line\s+manager|team\s+lead)"
_PERSON_ADJECTIVES = r"(?:(?:best|close|good|old|older|oldest|elder|eldest|younger|youngest|little|big|baby|twin|new|dear|dearest|[0-9]{1,2}[- ]year[- ]old)[ \t]+){0,2}"
# "my sister Jane", "my sister's name is Jane", and "my dad, Bruno, …" with both commas:
# "thanks, my friend, Jon!" has one and is Jon being addressed, not introduced.
_NAMED = rf"(?:{_SP}is{_SP}(?:named|called)|['’]s{_SP}name{_SP}is)?(?:{_SP}|(?P<comma>,){_SP})"
_PEOPLE_CUES = (
    (re.compile(rf"\bmy{_SP}{_PERSON_ADJECTIVES}(?:{'|'.join(_KIN)}){_NAMED}", _I), "family_of", "person", "my_kin", 0.85),
    (re.compile(rf"\bmy{_SP}{_PERSON_ADJECTIVES}(?:{'|'.join(_ACQUAINTANCES)}){_NAMED}", _I), "knows", "person", "my_acquaintance", 0.8),
    (re.compile(rf"\bmy{_SP}(?:(?:new|current|direct){_SP})?{_BOSSES}{_SP}(?:is{_SP})?", _I), "reports_to", "person", "my_boss", 0.85),
    (re.compile(rf"\bI(?:{_SP}(?:now|currently|directly))?{_SP}report{_SP}(?:directly{_SP})?to{_SP}", _I), "reports_to", "person", "report_to", 0.85),
)


def _people(text: str) -> Iterator[Candidate]:
    for pattern, predicate, kind, rule, confidence in _PEOPLE_CUES:
        # No hypothetical guard: "if my sister Jane comes" still says Jane is a sister.
        for m in pattern.finditer(text):
            person = _person_at(text, m.end())
            if person is None or (m.groupdict().get("comma") and not text.startswith(",", person[1])):
                continue
            end = _trailing_now(text, person[1])
            yield _relation(text, predicate, person, kind, m.start(), end, rule, confidence, _change_hint(text, m.start(), person, end))


# --- where: location ----------------------------------------------------------------------

_LOCATION_CUES = (
    (re.compile(rf"\bI(?:{_SP}(?:now|currently|still|also|actually))?{_SP}live{_SP}in{_SP}", _I), "live_in", 0.9),
    (re.compile(rf"(?:{_IM}(?:{_SP}(?:now|currently))?|\bI(?:['’]ve|{_SP}have){_SP}been){_SP}living{_SP}in{_SP}", _I), "living_in", 0.85),
    (re.compile(rf"{_IM}(?:{_SP}(?:now|currently))?{_SP}(?:based|located){_SP}(?:in|out{_SP}of){_SP}", _I), "based_in", 0.85),
    (re.compile(rf"\bI(?:['’]ve|{_SP}have)?(?:{_SP}(?:just|recently|finally))?{_SP}(?:moved|relocated){_SP}(?:back{_SP})?to{_SP}", _I), "moved_to", 0.8),
    (re.compile(rf"{_IM}{_SP}now{_SP}in{_SP}", _I), "now_in", 0.65),
    (re.compile(rf"{_IM}{_SP}in{_SP}", _I), "in_now", 0.65),
)
# "I'm in X" alone may be a visit, so those two cues need "now", and not "right now" or
# "now for a conference", which read as a trip.
_TRIP_AFTER = re.compile(r"[ \t]+for\b", _I)
_IN_NOW_AFTER = re.compile(r"[ \t]*,?[ \t]*(?<!right )now\b(?![ \t]+for\b)", _I)
_TIME_AFTER = re.compile(r"[ \t]+(?:(?:standard[ \t]+)?time|timezone|tz)\b", _I)


def _locations(text: str) -> Iterator[Candidate]:
    for pattern, rule, confidence in _LOCATION_CUES:
        for m in _matches(pattern, text):
            place = _organisation_at(text, _skip_article(text, m.end()), max_words=4)
            if place is None or _plain(text[place[0] : place[1]].split()[0]) in _SOFTWARE:
                continue
            if _TIME_AFTER.match(text, place[1]):  # "I'm in Pacific time" is a timezone
                continue
            if rule == "in_now" and not _IN_NOW_AFTER.match(text, place[1]):
                continue
            if rule == "now_in" and _TRIP_AFTER.match(text, place[1]):
                continue
            end = _trailing_now(text, place[1])
            value = text[place[0] : place[1]]
            yield _profile(text, "location", value, m.start(), end, rule, confidence)
            yield _relation(text, "lives_in", place, "place", m.start(), end, rule, confidence, _change_hint(text, m.start(), place, end))


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


# --- entry points ---------------------------------------------------------------------------

_RULES: tuple[Callable[[str], Iterable[Candidate]], ...] = (
    _emails, _phones, _names, _roles, _employers, _memberships, _managing, _people, _locations,
    _timezones, _styles, _levels,
)


def _candidates(text: str) -> Iterator[Candidate]:
    for rule in _RULES:
        yield from rule(text)


def _best(candidates: Iterable[Candidate], identity: Callable[[Candidate], tuple[str, ...]]) -> list[Candidate]:
    """One candidate per fact: the most confident wording, the earliest on a tie."""
    best: dict[tuple[str, ...], Candidate] = {}
    for candidate in candidates:
        key = identity(candidate)
        current = best.get(key)
        if current is None or (-candidate.confidence, candidate.start) < (-current.confidence, current.start):
            best[key] = candidate
    return sorted(best.values(), key=lambda c: (c.start, c.end, c.rule))


def extract_profile(text: str) -> list[ProfileCandidate]:
    """Keyed facts the speaker states about themselves, one per (key, value)."""
    found = (c for c in _candidates(text) if isinstance(c, ProfileCandidate))
    return _best(found, lambda c: (c.key, c.value.casefold()))  # type: ignore[return-value,union-attr]


def extract_relationships(text: str) -> list[RelationCandidate]:
    """Relationships from the speaker to someone or something, one per (predicate, object)."""
    found = (c for c in _candidates(text) if isinstance(c, RelationCandidate))
    return _best(found, lambda c: (c.predicate, c.object_name.casefold()))  # type: ignore[return-value,union-attr]
