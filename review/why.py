"""Why an item is in the queue, in plain words (issue 21 part 2): which rule proposed it
and what that rule looks for, or the model's own reason, or which agent remembered it
through the API; and what its confidence means. Pure: no Django, so it is tested on its
own (tests/review/test_why.py). The sentences belong to the layers that own the rules
(memory.extraction.RULES, entities.extraction.RULES, gaps.rules.RULES…); they reach the
queue through the kinds' `rules` (review.registry), never by importing the layers."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

# Provenance prefixes stored before a rule's name ("rule:profile.location.live_in").
_RULE_PREFIX = "rule:"
_MODEL_PREFIXES = ("model:", "llm:")
_PERSON_PREFIX = "user:"


@dataclass(frozen=True)
class Why:
    """`source` is rule | model | agent | person | unknown; `text` is the sentence shown."""

    source: str
    text: str
    rule: str = ""


def rule_sentence(rule: str, sentences: Mapping[str, str]) -> str | None:
    """The sentence for `rule`, else for the nearest family it belongs to: a rule named
    `profile.location.live_in` is explained by `profile.location`, `graduation:template`
    by `graduation` when it has no line of its own."""
    name = rule.removeprefix(_RULE_PREFIX)
    while name:
        if name in sentences:
            return sentences[name]
        cut = max(name.rfind("."), name.rfind(":"))
        name = name[:cut] if cut > 0 else ""
    return None


def explain(*, rule: str, sentences: Mapping[str, str], reason: str = "", proposer: str = "") -> Why:
    """Why the item was proposed. `reason` is a model's own words, `proposer` the agent (or
    key) whose API call proposed it."""
    name = rule.removeprefix(_RULE_PREFIX)
    if rule.startswith(_MODEL_PREFIXES):
        model = rule.split(":", 1)[1] or "a language model"
        said = f": “{reason.strip()}”" if reason.strip() else " (it gave no reason)"
        return Why("model", f"proposed by the language model {model}{said}", rule)
    if rule == "api" or (proposer and not rule):
        return Why("agent", f"remembered by {proposer or 'an agent'} through the API", rule)
    if rule.startswith(_PERSON_PREFIX):
        return Why("person", f"entered by {rule.removeprefix(_PERSON_PREFIX)}", rule)
    sentence = rule_sentence(rule, sentences)
    if sentence:
        return Why("rule", _phrase(name, sentence), rule)
    if reason.strip():
        return Why("rule" if rule else "unknown", reason.strip(), rule)
    return Why("unknown", f"proposed by {name}" if name else "no rule or model recorded", rule)


def _phrase(name: str, sentence: str) -> str:
    """A rule's sentence after its name. Owners write them in one of four shapes: what the
    message does ("says where they live now"), what the rule does ("notices …"), a full
    sentence ("The agent said …"), or the cue itself ("“I like X”")."""
    sentence = sentence.strip().rstrip(".")
    if re.match(r"^(says|names|states|tells)\b", sentence):
        return f"rule {name}: the message {sentence}"
    if re.match(r"^(notices|finds|flags|sums|keeps|looks|was)\b", sentence):
        return f"rule {name} {sentence}"
    if sentence[:1].isupper():
        return f"rule {name}: {sentence}"
    return f"rule {name} looks for {sentence}"


# What a confidence means here: the rules give 0.9+ to plain first-person statements, 0.8
# to the usual wordings, 0.6–0.7 to wordings that are often something else ("I'm in X" may
# be a trip); the trust policy's default line for approving without review is 0.9.
_BANDS = (
    (0.9, "high", "a plain, direct statement; items this sure may skip review under the trust policy"),
    (0.75, "good", "a usual wording for this; usually right, worth a glance"),
    (0.55, "fair", "a wording that often means something else; check the highlighted words"),
    (0.0, "low", "a guess; approve only if the message clearly says it"),
)


def confidence_words(confidence: float) -> tuple[str, str]:
    """(band, what the number means), e.g. (fair, "a wording that often means …")."""
    for floor, band, meaning in _BANDS:
        if confidence >= floor:
            return band, meaning
    return _BANDS[-1][1], _BANDS[-1][2]
