"""Context packs: sections in trust order within their budgets, unused budget flowing down,
each key served once, and the rendered text never over the token budget, whatever the
token counter (additive, rounding, or non-additive across line joins)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from context.packing import (
    DEFAULT_SECTIONS, PackItem, SectionSpec, budgets, default_header, pack,
)
from core.providers.tokens import ByteTokenCounter, WordPieceTokenCounter

SECTION_NAMES = [spec.name for spec in DEFAULT_SECTIONS]


def words(text: str) -> int:
    return len(text.split())


def thirds(text: str) -> int:
    return len(text) // 3 + 1 if text else 0


def lumpy(text: str) -> int:
    """Whitespace runs are tokens (joining two lines can merge them: fewer tokens) and every
    40 characters cost one more (joining can cross a boundary: more tokens)."""
    return len(re.findall(r"\w+|[^\w\s]+|\s+", text)) + len(text) // 40


COUNTERS = [words, thirds, lumpy]


def item(key, section: str = "retrieval", text: str | None = None, score: float = 0.5, **payload) -> PackItem:
    return PackItem(key=key, section=section, text=text if text is not None else f"item {key}", score=score,
                    payload=payload)


def section(result, name):
    return next(s for s in result.sections if s.name == name)


# --- budgets ------------------------------------------------------------------------------


def test_the_default_shares_follow_the_design():
    assert budgets(1000) == {"trusted_state": 200, "identity": 50, "preference": 50, "entities": 150,
                             "retrieval": 550}


def test_rounding_leftovers_go_to_the_last_section():
    assert budgets(99) == {"trusted_state": 19, "identity": 4, "preference": 4, "entities": 14, "retrieval": 58}


def test_overrides_are_shares_when_floats_and_token_counts_when_ints():
    assert budgets(1000, overrides={"trusted_state": 0.0, "identity": 0.25}) == {
        "trusted_state": 0, "identity": 250, "preference": 50, "entities": 150, "retrieval": 550}
    # Token counts come off the top; the shares divide the remaining 700.
    assert budgets(1000, overrides={"identity": 300}) == {
        "trusted_state": 140, "identity": 300, "preference": 35, "entities": 105, "retrieval": 420}


@pytest.mark.parametrize("overrides, message", [
    ({"identity": 0.5}, "shares add up to 1.45, more than 1"),
    ({"identity": -0.1}, "a share is between 0 and 1"),
    ({"identity": 2.0}, "pass an int for a number of tokens"),
    ({"identity": -5}, "a token count cannot be negative"),
    ({"identity": 600, "entities": 500}, "token counts add up to 1100, more than the total of 1000"),
    ({"nonsense": 0.1}, "no such section: nonsense"),
    ({"identity": True}, "expected a share (float) or a token count (int)"),
])
def test_impossible_budgets_are_refused_with_a_clear_message(overrides, message):
    with pytest.raises(ValueError) as error:
        budgets(1000, overrides=overrides)
    assert message in str(error.value)


def test_a_negative_total_or_a_repeated_section_is_refused():
    with pytest.raises(ValueError, match="non-negative integer"):
        budgets(-1)
    with pytest.raises(ValueError, match="repeat"):
        budgets(100, [SectionSpec("a", 0.5), SectionSpec("a", 0.5)])


@given(st.integers(0, 100_000), st.lists(st.floats(0, 1), min_size=1, max_size=6))
def test_budgets_never_add_up_to_more_than_the_total(total, raw_shares):
    scale = max(sum(raw_shares), 1.0)
    specs = [SectionSpec(f"s{i}", share / scale) for i, share in enumerate(raw_shares)]
    allotted = budgets(total, specs)
    assert sum(allotted.values()) == total
    assert all(tokens >= 0 for tokens in allotted.values())


# --- packing ------------------------------------------------------------------------------


def test_sections_come_in_trust_order_under_their_headers():
    result = pack({
        "retrieval": [item(1, text="[2023-05-08] Caroline: I went to a support group.")],
        "trusted_state": [item(2, "trusted_state", text="deploy freeze: until Monday")],
        "identity": [item(3, "identity", text="Caroline is a counsellor.")],
    }, total_budget=200, count_tokens=words)
    assert result.text == "\n".join([
        "## Trusted state", "deploy freeze: until Monday",
        "## Identity", "Caroline is a counsellor.",
        "## Relevant memories and conversation", "[2023-05-08] Caroline: I went to a support group.",
    ])
    assert [s.name for s in result.sections] == SECTION_NAMES
    assert result.tokens_used == words(result.text)
    assert section(result, "preference").items == ()


def test_an_item_that_does_not_fit_is_dropped_and_a_smaller_one_after_it_still_fits():
    big = item(1, text="one two three four five six seven eight nine ten")
    small = item(2, text="tiny")
    result = pack({"retrieval": [big, small]}, total_budget=10, count_tokens=words,
                  specs=[SectionSpec("retrieval", 1.0)])
    retrieval = section(result, "retrieval")
    assert retrieval.items == (small,)
    assert retrieval.dropped == ((big, "budget"),)
    assert result.text == "## Relevant memories and conversation\ntiny"


def test_unused_budget_flows_down_to_the_next_sections():
    identity_items = [item(i, "identity", text="alpha beta gamma delta") for i in range(10)]
    result = pack({"identity": identity_items}, total_budget=100, count_tokens=words)
    identity = section(result, "identity")
    assert identity.budget_tokens == 5 and identity.inflow_tokens == 20  # trusted state was empty
    # The header (2 words) and five items of 4 words use 22 of the 25 tokens available.
    assert len(identity.items) == 5 and identity.tokens_used == 22 > identity.budget_tokens
    assert section(result, "preference").inflow_tokens == 3
    # Nothing was used below identity, so the last section has all the rest.
    assert section(result, "retrieval").available_tokens == 100 - 22


def test_a_lower_section_never_takes_budget_from_a_higher_one():
    result = pack({
        "trusted_state": [item(1, "trusted_state", text="a " * 15)],
        "retrieval": [item(2, text="b " * 10)],
    }, total_budget=100, count_tokens=words)
    trusted = section(result, "trusted_state")
    assert trusted.budget_tokens == 20 and trusted.inflow_tokens == 0
    assert [i.key for i in trusted.items] == [1]


def test_a_key_is_served_once_and_blank_items_are_skipped():
    first = item(("memory", 1), "identity", text="Caroline is a counsellor.")
    again = item(("memory", 1), text="Caroline is a counsellor.")
    blank = item(("memory", 2), text="   ")
    result = pack({"identity": [first], "retrieval": [again, blank]}, total_budget=500, count_tokens=words)
    assert section(result, "retrieval").dropped == ((again, "duplicate"), (blank, "empty"))
    assert result.text.count("Caroline is a counsellor.") == 1


def test_the_payload_is_carried_through_untouched():
    payload_item = item(7, kind="memory", sources=[101, 102])
    result = pack({"retrieval": [payload_item]}, total_budget=100, count_tokens=words)
    assert section(result, "retrieval").items[0].payload == {"kind": "memory", "sources": [101, 102]}


def test_a_header_of_nothing_writes_no_header_line():
    result = pack({"retrieval": [item(1), item(2)]}, total_budget=100, count_tokens=words, header=lambda name: "")
    assert result.text == "item 1\nitem 2"


def test_nothing_to_pack_gives_an_empty_text():
    result = pack({}, total_budget=0, count_tokens=thirds)
    assert result.text == "" and result.tokens_used == 0
    assert all(s.items == () and s.dropped == () for s in result.sections)


def test_an_item_filed_under_the_wrong_or_an_unknown_section_is_refused():
    with pytest.raises(ValueError, match="belongs to section identity but was passed under retrieval"):
        pack({"retrieval": [item(1, "identity")]}, total_budget=100, count_tokens=words)
    with pytest.raises(ValueError, match="no such section: gossip"):
        pack({"gossip": [item(1, "gossip")]}, total_budget=100, count_tokens=words)


def test_when_the_whole_text_counts_more_than_its_lines_the_last_items_are_taken_out():
    # Each line break after the first costs a token, which a window of two lines never sees.
    def lines_cost_extra(text: str) -> int:
        return len(text.split()) + max(text.count("\n") - 1, 0)

    items = [item(i, text=f"word{i}") for i in range(20)]
    result = pack({"retrieval": items}, total_budget=20, specs=[SectionSpec("retrieval", 1.0)],
                  count_tokens=lines_cost_extra)
    retrieval = section(result, "retrieval")
    assert lines_cost_extra(result.text) <= 20 == result.total_budget
    assert result.tokens_used == lines_cost_extra(result.text)
    # Charged by windows, fifteen items seemed to fit; measured whole, eight do (5 header
    # words, 8 items, 7 extra line breaks).
    kept = [i.key for i in retrieval.items]
    assert kept == list(range(8))
    trimmed = [dropped.key for dropped, reason in retrieval.dropped if reason == "budget"]
    assert sorted(trimmed) == list(range(len(kept), 20))


def test_separators_are_charged_to_the_items_they_join():
    # Under a byte counter every line break is a token: charging each item its line alone
    # would overfill the budget and leave the final check to trim it back.
    def utf8_bytes(text: str) -> int:
        return len(text.encode())

    items = [item(n, text=f"item-{n:04d}") for n in range(30)]
    result = pack({"retrieval": items}, total_budget=99, specs=[SectionSpec("retrieval", 1.0)],
                  count_tokens=utf8_bytes, header=lambda name: "")
    retrieval = section(result, "retrieval")
    assert len(retrieval.items) == 10  # ten 9-byte lines and nine line breaks: 99 bytes
    assert retrieval.tokens_used == result.tokens_used == utf8_bytes(result.text) == 99


# --- properties ---------------------------------------------------------------------------

texts = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60),
    st.lists(st.sampled_from(["Caroline", "went", "to", "the", "support", "group", "—", "2023-05-08", ":", "!!"]),
             max_size=12).map(" ".join),
)


@st.composite
def sections_of_items(draw):
    keys = st.integers(0, 30)
    return {
        name: [PackItem(key=draw(keys), section=name, text=draw(texts), score=0.0)
               for _ in range(draw(st.integers(0, 8)))]
        for name in draw(st.lists(st.sampled_from(SECTION_NAMES), unique=True))
    }


@given(sections_of_items(), st.integers(0, 400), st.sampled_from(COUNTERS), st.sampled_from(["\n", " ", ""]))
@settings(max_examples=300)
def test_the_text_never_exceeds_the_budget_and_every_item_is_accounted_for(given_items, budget, count, separator):
    result = pack(given_items, total_budget=budget, count_tokens=count, separator=separator)
    assert result.tokens_used == (count(result.text) if result.text else 0) <= budget
    served = [i.key for s in result.sections for i in s.items]
    assert len(served) == len(set(served))
    assert [s.name for s in result.sections] == SECTION_NAMES
    for packed in result.sections:
        offered = given_items.get(packed.name, [])
        # In the order given, each offered item either served or dropped once.
        assert [i for i in offered if any(i is kept for kept in packed.items)] == list(packed.items)
        assert sorted(map(id, offered)) == sorted(map(id, list(packed.items) + [d for d, _ in packed.dropped]))
        assert all(reason in {"budget", "duplicate", "empty"} for _, reason in packed.dropped)
        assert all(reason == "empty" for dropped, reason in packed.dropped if not dropped.text.strip())
    expected_lines = [line for s in result.sections if s.items
                      for line in [default_header(s.name), *(i.text for i in s.items)]]
    assert result.text == separator.join(expected_lines)


@given(sections_of_items(), st.integers(0, 300))
@settings(max_examples=300)
def test_an_item_is_dropped_for_budget_only_when_it_did_not_fit(given_items, budget):
    # With an additive counter the marginal cost of an item is exact (its words, plus the
    # header's when it would have opened its section) and no item is ever trimmed.
    result = pack(given_items, total_budget=budget, count_tokens=words)
    assert sum(s.tokens_used for s in result.sections) == result.tokens_used
    served_keys = {i.key for s in result.sections for i in s.items}
    inflow = 0
    for packed in result.sections:
        assert packed.inflow_tokens == inflow  # what the section above left, passed on
        inflow = packed.available_tokens - packed.tokens_used
        assert all(dropped.key in served_keys for dropped, reason in packed.dropped if reason == "duplicate")
        offered = given_items.get(packed.name, [])
        first_served = next((index for index, i in enumerate(offered) if packed.items and i is packed.items[0]), None)
        left_at_the_end = packed.available_tokens - packed.tokens_used
        for dropped, reason in packed.dropped:
            if reason != "budget":
                continue
            opened_section = first_served is None or offered.index(dropped) < first_served
            cost = words(dropped.text) + (words(default_header(packed.name)) if opened_section else 0)
            assert cost > left_at_the_end


@given(sections_of_items(), st.sampled_from(COUNTERS))
def test_with_a_huge_budget_nothing_is_dropped_for_budget(given_items, count):
    result = pack(given_items, total_budget=10**7, count_tokens=count)
    assert all(reason != "budget" for s in result.sections for _, reason in s.dropped)


@st.composite
def identity_overflowing_its_share(draw):
    """Identity items needing more than identity's 5 % but no more than 5 % + 20 %."""
    sizes = draw(st.lists(st.integers(1, 20), min_size=1, max_size=10))
    needed = 2 + sum(sizes)  # "## Identity" is two words
    # 8 tokens of slack for rounding each share down.
    total = draw(st.integers(4 * needed + 8, 20 * needed - 1))
    items = [PackItem(key=n, section="identity", text=" ".join(["w"] * size), score=0.0) for n, size in enumerate(sizes)]
    return items, needed, total


@given(identity_overflowing_its_share())
def test_an_empty_higher_section_lets_a_lower_one_use_more_than_its_share(case):
    items, needed, total = case
    identity = section(pack({"trusted_state": [], "identity": items}, total_budget=total, count_tokens=words),
                       "identity")
    assert identity.items == tuple(items)
    assert identity.tokens_used == needed > identity.budget_tokens


def test_packs_hold_under_the_real_wordpiece_counter():
    counter = WordPieceTokenCounter()
    lines = [f"[2023-05-{day:02d}] Caroline: I went to the LGBTQ+ support group — it was powerful!!" for day in range(1, 29)]
    for budget in (0, 17, 64, 100, 257):
        result = pack({"retrieval": [item(n, text=line) for n, line in enumerate(lines)]},
                      total_budget=budget, count_tokens=counter.count)
        assert counter.count(result.text) <= budget


# --- the counter's shortcuts: a lower bound and additivity ----------------------------------

@given(sections_of_items(), st.integers(0, 300), st.sampled_from(["\n", " "]))
@settings(max_examples=300)
def test_with_an_additive_counter_the_shortcuts_change_nothing(given_items, budget, separator):
    exact = pack(given_items, total_budget=budget, count_tokens=words, separator=separator)
    quick = pack(given_items, total_budget=budget, count_tokens=words, separator=separator,
                 lower_bound=words, additive=True)
    assert quick == exact


@given(sections_of_items(), st.integers(0, 400), st.sampled_from(COUNTERS), st.sampled_from(["\n", " ", ""]))
@settings(max_examples=300)
def test_a_counter_claiming_wrongly_still_never_exceeds_the_budget(given_items, budget, count, separator):
    # words is no lower bound of thirds, and neither lumpy nor "" joins are additive.
    result = pack(given_items, total_budget=budget, count_tokens=count, separator=separator,
                  lower_bound=words, additive=True)
    assert result.tokens_used == (count(result.text) if result.text else 0) <= budget
    accounted = sum(len(s.items) + len(s.dropped) for s in result.sections)
    assert accounted == sum(len(items) for items in given_items.values())


def test_an_item_far_over_what_is_left_is_dropped_without_being_measured():
    measured = []

    def counting(text):
        measured.append(text)
        return words(text)

    big = item("big", text=" ".join(["w"] * 50))
    small = item("small", text="a b")
    result = pack({"retrieval": [small, big]}, total_budget=20, count_tokens=counting, lower_bound=words)
    assert section(result, "retrieval").dropped == ((big, "budget"),)
    assert not any(big.text in text for text in measured)


@pytest.mark.parametrize("counter", [WordPieceTokenCounter(), ByteTokenCounter()], ids=["wordpiece", "bytes"])
def test_the_real_counters_shortcuts_hold(counter):
    lines = ["Caroline: I went to the LGBTQ+ support group — it was powerful!!", "[8 May 2023] 12 € café",
             "## Entities and relationships", "- Caroline works at Acme Robotics", "naïve   spacing\there"]
    for line in lines:
        assert counter.lower_bound(line) <= counter.count(line)
    assert counter.is_additive("\n")
    for a in lines:
        for b in lines:
            assert counter.count(a + "\n" + b) == counter.count(a) + counter.count("\n") + counter.count(b)
    budget = 40
    result = pack({"retrieval": [item(n, text=line) for n, line in enumerate(lines * 5)]}, total_budget=budget,
                  count_tokens=counter.count, lower_bound=counter.lower_bound, additive=True)
    assert counter.count(result.text) == result.tokens_used <= budget


_WORDPIECE = WordPieceTokenCounter()


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80))
@settings(max_examples=500)
def test_the_wordpiece_lower_bound_is_never_above_the_count(text):
    assert _WORDPIECE.lower_bound(text) <= _WORDPIECE.count(text)


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
@settings(max_examples=500)
def test_the_wordpiece_lower_bound_of_ascii_text_counts_every_word(text):
    """ASCII text takes a shortcut (a plain split): the same bound as the general rule."""
    from core.providers.tokens import _COUNTED_WORD

    bound = _WORDPIECE.lower_bound(text)
    flat = text.replace("\n", " ").replace("\t", " ").replace("\r", " ")
    assert bound == (len(_COUNTED_WORD.findall(flat)) if flat.isprintable() else 0)
    assert bound <= _WORDPIECE.count(text)


# --- coverage (issue 22 part 3): a line adds nothing when the pack already states its messages


def covering(key, covers, text=None, section="retrieval", score=0.5) -> PackItem:
    return PackItem(key=key, section=section, text=text or f"item {key}", score=score, covers=frozenset(covers))


def _reasons(result) -> dict:
    return {i.key: reason for s in result.sections for i, reason in s.dropped}


def _packed(result) -> list:
    return [i.key for s in result.sections for i in s.items]


def test_a_turn_an_item_in_the_pack_already_states_is_dropped_as_covered():
    episode = covering("episode", {1, 2, 3, 4, 5}, text="On 8 May Caroline and Melanie talked: a b c d e")
    result = pack({"retrieval": [episode, covering("turn 3", {3}), covering("turn 9", {9})]}, total_budget=100,
                  count_tokens=words)
    assert _packed(result) == ["episode", "turn 9"]
    assert _reasons(result) == {"turn 3": "covered"}


def test_an_item_dropped_for_budget_covers_nothing():
    """The long episode does not fit; the short turn it quotes still carries the evidence."""
    episode = covering("episode", {1, 2, 3}, text=" ".join(["word"] * 50))
    result = pack({"retrieval": [episode, covering("turn 2", {2}, text="the turn")]}, total_budget=20,
                  count_tokens=words)
    assert _packed(result) == ["turn 2"]
    assert _reasons(result) == {"episode": "budget"}


def test_coverage_needs_every_message_and_crosses_sections():
    preference = covering("pref", {7}, section="preference")
    partly = covering("partly", {7, 8})  # states message 8 too: it adds evidence
    again = covering("again", {7, 8})  # now every message is in the pack
    nothing = covering("nothing", set())  # states no message (an entity card): never "covered"
    result = pack({"preference": [preference], "retrieval": [partly, again, nothing]}, total_budget=200,
                  count_tokens=words)
    assert _packed(result) == ["pref", "partly", "nothing"]
    assert _reasons(result) == {"again": "covered"}


@given(st.lists(st.tuples(st.frozensets(st.integers(0, 8), max_size=3), st.integers(1, 12)), max_size=25),
       st.integers(0, 60))
@settings(max_examples=300)
def test_no_packed_line_is_covered_by_the_lines_before_it(specs, budget):
    items = [covering(n, covers, text=" ".join(["w"] * length)) for n, (covers, length) in enumerate(specs)]
    result = pack({"retrieval": items}, total_budget=budget, count_tokens=words)
    stated: set = set()
    for packed in result.sections[-1].items:
        assert not packed.covers or not packed.covers <= stated
        stated |= packed.covers
    for dropped, reason in result.sections[-1].dropped:
        if reason == "covered":
            assert dropped.covers <= stated
