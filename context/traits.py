"""Questions about what a person is like (issue 22 part 2): "what might X enjoy…", "would X
be considered…", "what are X's hobbies?". Their answer is rarely said in the question's
words: it is inferred from what the person said about themselves (what they like, do,
feel and plan), found by meaning. Their name is no help to the full-text ranker there
(without_names), so recall leaves it out of the words it matches
(context.retrieval.query_lexemes). Pure: no Django, no I/O.

A question is about traits when it asks for an inference ("would", "might", "likely", "be
considered") or names a trait, a liking or a habit ("personality", "hobbies", "enjoy",
"favourite"). Whether it is about a person, and which, the caller knows from the entities
the query names."""

from __future__ import annotations

import re

# Asking for an inference rather than a record: the answer is a judgement drawn from evidence.
_INFERENCE = re.compile(
    r"\b(?:would|might|could|(?:would|might|could)n['’]t|likely|unlikely|probably|possibly|considered|consider)\b",
    re.IGNORECASE)
# Naming what a person is like, likes or usually does.
_TRAIT = re.compile(
    r"\b(?:personality|traits?|attributes?|character|characteri[sz]e[sd]?|hobb(?:y|ies)|"
    r"interests?|interested|enjoys?|likes?|loves?|prefers?|preferences?|favou?rites?|fan|passions?|"
    r"passionate|values|beliefs?|political|religious|habits?|(?:kind|type|sort) of person)\b",
    re.IGNORECASE)


def trait_question(query: str) -> bool:
    """True when the query asks what someone is like, likes or would do (module docstring)."""
    return bool(_INFERENCE.search(query) or _TRAIT.search(query))


def without_names(lexemes: list[str], name_lexemes: list[str]) -> list[str]:
    """The query's words less those of the names of the people it is about. In a question
    about what someone is like, their name finds the messages that address them or mention
    them in passing (a two-person chat says it in every other turn) rather than what they
    said about themselves; the entity dimension of the score already credits what is by or
    about them. A query of nothing but names keeps them."""
    names = set(name_lexemes)
    kept = [lexeme for lexeme in lexemes if lexeme not in names]
    return kept or lexemes
