"""How likely is it that two channel identities are one person? A score and its reasons,
for a person to review (seed 002: "suggest, don't assume"; never auto-merge).

Three kinds of evidence, each given a strength read as "how often would two handles in one
workspace with this evidence, and nothing else, be the same person":

- the same email address on both sides (from an email handle, a display name, an entity name);
- the names: display/entity names compared with each other, a handle's name-like parts
  ("ada.lovelace@…", "@ada_l:matrix.org") compared with the other side's names or handle;
- co-occurrence supplied by the caller, a small bonus that never suffices alone.

A pure function of its inputs, with no Django imports, so it can be property-tested."""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

# Scores at or above this are put in front of a person. 0.5 = "more likely than not": below
# it most suggestions would be rejected, and a queue of mostly-wrong suggestions teaches
# reviewers to click through. The strengths below are set so that a lone first name (at most
# 0.35) and co-occurrence (at most 0.15) stay under it even together (at most 0.45), while
# any of: a shared email (0.97), an identical full name (0.88), a handle spelling out the
# other side's full name (0.75), a surname plus a matching initial (0.62) reach it.
SUGGEST_THRESHOLD = 0.5

# A shared address is nearly conclusive; the 3% left covers shared mailboxes and typos
# in a profile.
EMAIL_STRENGTH = 0.97
# Strength of matching names by how many whole words match (interpolated, half a word per
# matching initial): one word is a first name or surname that many people share; two words
# are a full name, rarely shared within one workspace; more words add little.
_WORDS_STRENGTH = ((0.0, 0.0), (1.0, 0.35), (2.0, 0.88), (3.0, 0.93))
# Short names are common names ("Al Li", "Ada"): full strength from 8 matching letters on,
# three-quarters at 4.
_FULL_STRENGTH_LETTERS = 16
# One side has extra words ("Ada Lovelace" ~ "Ada King Lovelace"): a little weaker than equal.
EXTRA_WORDS_FACTOR = 0.9
# Each side has a word the other lacks ("John Smith" ~ "Jane Smith"): that is evidence of two
# people. Handles often carry non-name words ("ada.codes"), so they are penalised less.
NAME_CONFLICT_FACTOR = 0.25
HANDLE_CONFLICT_FACTOR = 0.6
# A handle is chosen under constraints (taken names, conventions, public servers where many
# people share a name), so it says less than a name the person displays.
HANDLE_FACTOR = 0.85
# Co-occurrence (0..1) adds at most this much strength.
CO_OCCURRENCE_WEIGHT = 0.15
# People rarely hold two accounts on one service, so two handles on the same channel that
# look alike are more often two people (namesakes, a person and their bot). Not for email,
# where a work and a personal address are normal, and never for a shared email address.
SAME_CHANNEL_FACTOR = 0.6
_MULTI_ACCOUNT_CHANNELS = frozenset({"email"})

# Spelling variants: Jaro-Winkler of at least 0.9 between words of 4+ letters ("Lovelase");
# shorter words differing in a letter are usually different names (Ann, Anna; Jon, John).
TYPO_MIN_SIMILARITY = 0.9
_TYPO_MIN_LETTERS = 4
# Longer "names" are sentences or lists; comparing only the first words bounds the work.
_MAX_NAME_WORDS = 6
_MAX_JOINED_PARTS = 4

_EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)+")
_EMOJI_SHORTCODE = re.compile(r":[a-z0-9_+-]+:", re.IGNORECASE)
# Pronouns and notes in brackets are not part of the name: "Ada Lovelace (she/her)".
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_APOSTROPHES = "'’ʼ`"
_TITLES = frozenset({"mr", "mrs", "ms", "mx", "miss", "dr", "prof", "professor", "sir", "dame", "rev", "jr", "sr", "phd", "esq"})
# Mailbox and bridge words that say nothing about who is behind a handle.
_NOT_NAME_WORDS = frozenset({
    "info", "admin", "administrator", "support", "help", "helpdesk", "noreply", "donotreply", "no", "reply",
    "hello", "hi", "contact", "team", "office", "sales", "mail", "email", "root", "postmaster", "webmaster",
    "billing", "accounts", "jobs", "careers", "press", "marketing", "security", "abuse", "notifications",
    "alerts", "bot", "user", "slack", "discord", "telegram", "whatsapp", "signal", "irc", "matrix", "bridge",
})
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z])(?=[A-Z])")
_LETTER_RUNS = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class Handle:
    channel: str  # "email", "slack", "matrix", "cli", "chat", …
    channel_id: str  # the handle there: "ada@example.com", "U024BE7LH", "@ada:matrix.org"
    display_name: str  # may be ""
    entity_name: str  # the name of the entity it belongs to now (may equal display_name)


@dataclass(frozen=True)
class LinkScore:
    score: float  # 0..1; at or above SUGGEST_THRESHOLD, worth a person's review
    reasons: list[str]  # readable, for the reviewer: email, then names, co-occurrence, damping


def normalise_name(name: str) -> str:
    """Casefold, strip accents, drop titles, emails, bracketed notes, punctuation and emoji,
    collapse spaces: "Dr. Ada Lovelace (she/her) 🚀" -> "ada lovelace"."""
    text = _BRACKETED.sub(" ", _EMOJI_SHORTCODE.sub(" ", _EMAIL.sub(" ", name)))
    text = unicodedata.normalize("NFKD", text).casefold()
    # Removed, not spaced: "O'Brien" is one word. After decomposition, so the apostrophe
    # in "ŉ" (-> "ʼn") goes too.
    text = "".join(ch for ch in text if ch not in _APOSTROPHES)
    kept = []
    for ch in text:
        category = unicodedata.category(ch)[0]
        if category == "M":  # accents and other combining marks
            continue
        kept.append(ch if category in "LN" else " ")
    return " ".join(word for word in "".join(kept).split() if word not in _TITLES)


def email_of(channel: str, channel_id: str, display_name: str = "") -> str | None:
    """The first email address in the handle, else in the display name, lowercased. A Matrix
    id ("@ada:matrix.org") has nothing before its "@", so it is not an address."""
    for text in (channel_id, display_name):
        found = _EMAIL.search(text)
        if found:
            return found.group(0).lower()
    return None


def handle_tokens(channel: str, channel_id: str) -> set[str]:
    """Name-like words in a handle: "ada.lovelace@example.com" -> {"ada", "lovelace"},
    "@ada_l:matrix.org" -> {"ada", "l"} (a single letter is kept as an initial),
    "AdaLovelace" -> {"ada", "lovelace"}. Opaque ids ("U024BE7LH", phone numbers, uuids)
    and mailbox words ("support@…") give nothing."""
    local = channel_id.strip()
    if local.lower().startswith("mailto:"):
        local = local[len("mailto:"):]
    email = _EMAIL.search(local)
    if email:  # "ada@example.com", also inside "Ada <ada@example.com>"
        local = email.group(0).rsplit("@", 1)[0].split("+", 1)[0]
    elif local.startswith("@"):
        local = local[1:].split(":", 1)[0]  # Matrix "@ada:server", or a plain "@mention"
    tokens: set[str] = set()
    for segment in re.split(r"[\W_]+", local):
        if any(ch.isdigit() for ch in segment):
            # "ada1815" is a name and a number; "U024BE7LH" or "3fa85f64" is an id.
            if len(_LETTER_RUNS.findall(segment)) != 1:
                continue
            segment = "".join(ch for ch in segment if not ch.isdigit())
        for word in normalise_name(_CAMEL_BOUNDARY.sub(" ", segment)).split():
            if word not in _NOT_NAME_WORDS and not _has_digit(word):
                tokens.add(word)
    return tokens


def jaro_winkler(a: str, b: str) -> float:
    """Jaro-Winkler similarity (standard prefix scale 0.1, prefix up to 4 characters)."""
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    window = max(0, max(len(a), len(b)) // 2 - 1)
    a_matched = [False] * len(a)
    b_matched = [False] * len(b)
    matches = 0
    for i, ch in enumerate(a):
        for j in range(max(0, i - window), min(len(b), i + window + 1)):
            if not b_matched[j] and b[j] == ch:
                a_matched[i] = b_matched[j] = True
                matches += 1
                break
    if not matches:
        return 0.0
    a_seq = [ch for ch, hit in zip(a, a_matched) if hit]
    b_seq = [ch for ch, hit in zip(b, b_matched) if hit]
    transpositions = sum(x != y for x, y in zip(a_seq, b_seq)) / 2
    jaro = (matches / len(a) + matches / len(b) + (matches - transpositions) / matches) / 3
    prefix = 0
    for x, y in zip(a[:4], b[:4]):
        if x != y:
            break
        prefix += 1
    return jaro + prefix * 0.1 * (1 - jaro)


def score_link(a: Handle, b: Handle, *, co_occurrence: float = 0.0) -> LinkScore:
    if a.channel == b.channel and a.channel_id == b.channel_id:
        return LinkScore(1.0, ["same handle"])
    # One canonical order, so the score and the wording of the reasons are symmetric.
    if _sort_key(b) < _sort_key(a):
        a, b = b, a
    reasons: list[str] = []

    email_strength = 0.0
    shared = sorted(_mailboxes(a) & _mailboxes(b))
    if shared:
        email_strength = EMAIL_STRENGTH
        reasons.append(f"same email address {shared[0]}")

    name_strength, name_reason = _best_name_evidence(a, b)
    if name_reason:
        reasons.append(name_reason)

    co = 0.0 if math.isnan(co_occurrence) else min(max(co_occurrence, 0.0), 1.0)
    co_strength = CO_OCCURRENCE_WEIGHT * co
    if co_strength:
        reasons.append(f"appear in the same conversations (co-occurrence {co:.2f})")

    if a.channel == b.channel and a.channel not in _MULTI_ACCOUNT_CHANNELS and (name_strength or co_strength):
        name_strength *= SAME_CHANNEL_FACTOR
        co_strength *= SAME_CHANNEL_FACTOR
        reasons.append(f"both on {a.channel}, where people rarely hold two accounts (name evidence x{SAME_CHANNEL_FACTOR})")

    # The three kinds of evidence are treated as independent witnesses (noisy-OR): each alone
    # gives its own strength as the score, agreement raises it, and none reaches 1 — only the
    # same handle is certain. The name comparisons are not independent of one another (a
    # handle is usually made from the name), so only the strongest of them counts.
    score = 1.0 - (1.0 - email_strength) * (1.0 - name_strength) * (1.0 - co_strength)
    return LinkScore(score, reasons or ["no shared email, name or handle"])


def _sort_key(h: Handle) -> tuple[str, str, str, str]:
    return (h.channel, h.channel_id, h.display_name, h.entity_name)


def _has_digit(word: str) -> bool:
    return any(ch.isnumeric() for ch in word)


def _mailboxes(h: Handle) -> set[str]:
    """Addresses on one side, "+tag" dropped: ada+lists@example.com is ada@example.com's mailbox."""
    found = {email_of(h.channel, h.channel_id), email_of(h.channel, "", h.display_name), email_of(h.channel, "", h.entity_name)}
    mailboxes = set()
    for address in found - {None}:
        local, domain = address.rsplit("@", 1)
        mailboxes.add(f"{local.split('+', 1)[0]}@{domain}")
    return mailboxes


def _name_words(name: str) -> list[str]:
    # A word with digits is an id or a year, not a name ("U024BE7LH", "Ada 1815").
    return [word for word in normalise_name(name).split() if not _has_digit(word)][:_MAX_NAME_WORDS]


def _names(h: Handle) -> list[tuple[str, list[str]]]:
    names: list[tuple[str, list[str]]] = []
    for raw in (h.display_name, h.entity_name):
        words = _name_words(raw)
        if words and all(words != seen for _, seen in names):
            names.append((raw, words))
    return names


def _best_name_evidence(a: Handle, b: Handle) -> tuple[float, str]:
    a_handle = sorted(handle_tokens(a.channel, a.channel_id))[:_MAX_NAME_WORDS]
    b_handle = sorted(handle_tokens(b.channel, b.channel_id))[:_MAX_NAME_WORDS]
    candidates: list[tuple[float, str]] = []
    for a_raw, a_words in _names(a):
        for b_raw, b_words in _names(b):
            match = _match(a_words, b_words)
            strength = _strength(match, NAME_CONFLICT_FACTOR)
            if strength:
                candidates.append((strength, _describe_names(match, a_raw, b_raw, strength)))
    for handle, channel_id, other in ((a_handle, a.channel_id, b), (b_handle, b.channel_id, a)):
        for raw, name in _names(other) if handle else ():
            match = _match(handle, name)
            strength = HANDLE_FACTOR * _strength(match, HANDLE_CONFLICT_FACTOR)
            if strength:
                fits = "only partly fits" if match.conflict else "fits"
                candidates.append((strength, f"handle {channel_id} {fits} name '{raw}' ({strength:.2f})"))
    if a_handle and b_handle:
        match = _match(a_handle, b_handle)
        strength = HANDLE_FACTOR * _strength(match, HANDLE_CONFLICT_FACTOR)
        if strength:
            shares = "share only some name parts" if match.conflict else "share name parts"
            candidates.append((strength, f"handles {shares}: {a.channel_id} ~ {b.channel_id} ({strength:.2f})"))
    if not candidates:
        return 0.0, ""
    return max(candidates, key=lambda c: c[0])  # ties: the first, in the order built above


@dataclass
class _Match:
    whole: list[tuple[str, str, float]]  # (word, word, quality): equal, joined-up or a spelling variant
    initials: int
    left_a: list[str]
    left_b: list[str]
    joined: bool
    variant: bool

    @property
    def conflict(self) -> bool:
        return bool(self.left_a and self.left_b)


def _match(a: list[str], b: list[str]) -> _Match:
    """Pair the words of two names: equal words, a word that is others joined up
    ("adalovelace", "alovelace"), spelling variants, then initials ("a" ~ "ada")."""
    left_a, left_b = sorted(a), sorted(b)
    whole: list[tuple[str, str, float]] = []
    initials = 0
    joined = variant = False
    for word in list(left_a):
        if len(word) > 1 and word in left_b:
            left_a.remove(word)
            left_b.remove(word)
            whole.append((word, word, 1.0))
    for words, pool in ((left_a, left_b), (left_b, left_a)):
        for word in list(words):
            if len(word) < 2:
                continue
            parts = _split_into(word, pool)
            if parts:
                joined = True
                words.remove(word)
                for part, is_whole in parts:
                    pool.remove(part)
                    if is_whole:
                        whole.append((word, part, 1.0))
                    else:
                        initials += 1
    pairs = sorted(
        ((jaro_winkler(x, y), x, y) for x in set(left_a) for y in set(left_b)
         if min(len(x), len(y)) >= _TYPO_MIN_LETTERS),
        reverse=True,
    )
    for similarity, x, y in pairs:
        if similarity < TYPO_MIN_SIMILARITY:
            break
        if x in left_a and y in left_b:
            left_a.remove(x)
            left_b.remove(y)
            # 0.9 similar -> 0.7, 1.0 -> 1.0: "Hansen" and "Hanson" may well be two families.
            whole.append((x, y, 1.0 - 3.0 * (1.0 - similarity)))
            variant = True
    for words, pool in ((left_a, left_b), (left_b, left_a)):
        for word in [w for w in words if len(w) == 1]:
            partner = next((p for p in pool if p[0] == word), None)
            if partner is not None:
                words.remove(word)
                pool.remove(partner)
                initials += 1
    return _Match(whole, initials, left_a, left_b, joined, variant)


def _split_into(word: str, pool: list[str]) -> list[tuple[str, bool]]:
    """The best way to spell `word` as 2+ words of `pool` or their initials, at least one
    word whole, each used once ("alovelace" from ["ada", "lovelace"] -> [("ada", False),
    ("lovelace", True)]), or []."""
    best: tuple[tuple[int, int], list[tuple[str, bool]]] | None = None

    def walk(pos: int, remaining: list[str], parts: list[tuple[str, bool]]) -> None:
        nonlocal best
        if pos == len(word):
            # Initials alone ("ab" for "Ada Bloggs") are an abbreviation, not a name.
            if len(parts) >= 2 and any(is_whole for _, is_whole in parts):
                key = (sum(len(p) for p, is_whole in parts if is_whole), -len(parts))
                if best is None or key > best[0]:
                    best = (key, list(parts))
            return
        if len(parts) == _MAX_JOINED_PARTS:
            return
        for i, candidate in enumerate(remaining):
            if i and candidate == remaining[i - 1]:
                continue  # the same word twice leads to the same spellings
            rest = remaining[:i] + remaining[i + 1:]
            if len(candidate) > 1 and word.startswith(candidate, pos):
                walk(pos + len(candidate), rest, [*parts, (candidate, True)])
            if candidate[0] == word[pos]:
                walk(pos + 1, rest, [*parts, (candidate, False)])

    walk(0, sorted(pool), [])
    return best[1] if best else []


def _strength(match: _Match, conflict_factor: float) -> float:
    # An initial firms up a whole word ("A. Lovelace"); a row of initials ("A. B. C.") says
    # little, so no more initials count than whole words (or one).
    initials = min(match.initials, max(len(match.whole), 1))
    words = len(match.whole) + 0.5 * initials
    letters = sum(min(len(x), len(y)) for x, y, _ in match.whole) + initials
    strength = _interpolate(words) * min(1.0, 0.5 + letters / _FULL_STRENGTH_LETTERS)
    for _, _, quality in match.whole:
        strength *= quality
    if match.conflict:
        strength *= conflict_factor
    elif match.left_a or match.left_b:
        strength *= EXTRA_WORDS_FACTOR
    return strength


def _interpolate(words: float) -> float:
    for (x0, y0), (x1, y1) in zip(_WORDS_STRENGTH, _WORDS_STRENGTH[1:]):
        if words <= x1:
            return y0 + (y1 - y0) * (words - x0) / (x1 - x0)
    return _WORDS_STRENGTH[-1][1]


def _describe_names(match: _Match, a_raw: str, b_raw: str, strength: float) -> str:
    pair = f"'{a_raw}' ~ '{b_raw}' ({strength:.2f})"
    if match.conflict:
        shared = ", ".join(sorted({x for x, _, _ in match.whole})) or "initials"
        return f"names differ, sharing only {shared}: {pair}"
    how = []
    if match.initials:
        how.append("by initials")
    if match.variant:
        how.append("spelling differs")
    if match.joined:
        how.append("words joined up")
    if not how and _name_words(a_raw) != _name_words(b_raw) and not (match.left_a or match.left_b):
        how.append("reordered")
    label = "one name contains the other" if match.left_a or match.left_b else "names match"
    return f"{label}{' (' + ', '.join(how) + ')' if how else ''}: {pair}"
