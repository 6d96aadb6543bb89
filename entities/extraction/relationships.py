"""Rules that find a relationship from the speaker to someone or something: where they
work (with the employer and role profile facts that go with it), the groups they belong to
or manage, the people in their life, and where they live (with the location fact)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from entities.extraction._common import (
    _I,
    _IM,
    _SP,
    Candidate,
    _change_hint,
    _matches,
    _profile,
    _relation,
    _trailing_now,
)
from entities.extraction._names import (
    _ARTICLE,
    _SOFTWARE,
    _organisation_at,
    _person_at,
    _plain,
    _skip_article,
)

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
# What each family of rules looks for, for the review queue's plain-language "why"
# (`relationship.<predicate>.<cue>` is explained by its `relationship.<predicate>` line).
RULES = {
    "profile.role": "says what their job is (“I'm a teacher”, “I work as a designer”)",
    "profile.employer": "says where they work (“I work at Acme”, “I just started at Initech”)",
    "profile.location": "says where they live now (“I live in Berlin”, “I moved to Lisbon”)",
    "relationship.works_at": "says where they work (“I work at Acme”, “I'm a nurse at St. Mary's”)",
    "relationship.member_of": "says which team or group they belong to (“I'm on the platform team”, “I joined …”)",
    "relationship.manages": "says what or whom they manage or lead (“I manage the data team”)",
    "relationship.family_of": "names a relative of theirs (“my sister Jane”)",
    "relationship.knows": "names a friend or colleague of theirs (“my colleague Sam”)",
    "relationship.reports_to": "names their manager (“my boss is Dana”, “I report to Dana”)",
    "relationship.lives_in": "says where they live now (“I live in Berlin”, “I moved to Lisbon”)",
}

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
