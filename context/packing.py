"""Token-budgeted context packs (DESIGN.md "Context packs"): sections filled in trust order,
each within its share of the budget, with the promise that the token count of the rendered
text never exceeds the budget.

- Sections are filled in order; within a section items are taken in the order given (the
  caller sorts them by score). An item that does not fit is dropped with reason "budget" and
  the next, possibly smaller, items are still tried.
- A section's unused budget flows to the next section, and from there on down with whatever
  that section leaves, so an empty trusted-state section lends its 20 % to identity, then
  preferences, and so on. Nothing flows upwards: a lower-trust section never crowds out a
  higher one.
- A key is served once; a later item with a key already in the pack is dropped as
  "duplicate". Items with blank text are dropped as "empty".
- An item that says what it covers (`covers`: the messages it states, in its own words or
  quoted) adds nothing when items already in the pack cover every one of them: dropped as
  "covered" (issue 22 part 3: a turn an episode in the pack quotes). Only what is in the pack
  covers: an item dropped for budget covers nothing, so a short turn can still carry the
  evidence a long episode that did not fit would have.

Tokenizers are not additive: the count of two lines joined may differ from the sum of their
counts (a BPE merge across the join, a counter that rounds). Each item is charged its
marginal cost, measured against the line before it; the whole text is measured at the end
and, should it still be over the budget, the last items are taken out until it fits. The
empty text is taken to hold no tokens.

A pack is offered hundreds of candidates and most cannot fit, while a real tokenizer costs
about as much per call as the rest of packing. Two shortcuts, both from the counter:
- `lower_bound(text)`: a cheap count that is never above the real one (WordPiece: the
  whitespace-separated words). An item whose bound is over what is left by more than
  JOIN_SLACK tokens (what a join can save at most) cannot fit: dropped for budget, unmeasured.
- `additive`: the counter is exactly additive over the separator (count(a + sep + b) =
  count(a) + count(sep) + count(b); WordPiece over whitespace, bytes always). Then a line's
  marginal cost is its own count plus the separator's, each line counted once.
The final measure of the whole text stays, so the promise holds even if a counter claims
either wrongly; only the pack's fullness would suffer."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SectionSpec:
    name: str
    share: float  # of the total budget, 0..1


# DESIGN.md: trust order and shares.
DEFAULT_SECTIONS: tuple[SectionSpec, ...] = (
    SectionSpec("trusted_state", 0.20),
    SectionSpec("identity", 0.05),
    SectionSpec("preference", 0.05),
    SectionSpec("entities", 0.15),
    # Conversation summary and recent turns, facts, episodes, procedures, raw interactions.
    SectionSpec("retrieval", 0.55),
)

SECTION_TITLES: Mapping[str, str] = {
    "trusted_state": "Trusted state",
    "identity": "Identity",
    "preference": "Preferences",
    "entities": "Entities and relationships",
    "retrieval": "Relevant memories and conversation",
}


SEPARATOR = "\n"  # between lines of a pack


def default_header(name: str) -> str:
    return "## " + SECTION_TITLES.get(name, name.replace("_", " ").capitalize())


@dataclass(frozen=True)
class PackItem:
    key: Hashable  # e.g. ("memory", 12); served at most once per pack
    section: str
    text: str  # the rendered line, e.g. "[2023-05-08] Caroline: …"
    score: float
    payload: Mapping[str, Any] = field(default_factory=dict, compare=False)  # carried through untouched
    covers: frozenset[Hashable] = field(default=frozenset(), compare=False)  # e.g. the message ids it states


@dataclass(frozen=True)
class PackedSection:
    name: str
    budget_tokens: int  # its own share of the total
    inflow_tokens: int  # budget left unused by the sections above
    tokens_used: int  # the marginal cost of its header and items
    items: tuple[PackItem, ...]
    dropped: tuple[tuple[PackItem, str], ...]  # (item, "budget" | "duplicate" | "covered" | "empty")

    @property
    def available_tokens(self) -> int:
        return self.budget_tokens + self.inflow_tokens


@dataclass(frozen=True)
class Pack:
    sections: tuple[PackedSection, ...]
    tokens_used: int  # count_tokens(text): never more than total_budget
    text: str
    total_budget: int


def budgets(total: int, specs: Sequence[SectionSpec] = DEFAULT_SECTIONS,
            overrides: Mapping[str, float | int] | None = None) -> dict[str, int]:
    """Tokens per section. An override is a share when it is a float (0.25) and a token count
    when it is an int (300). Token counts are set aside first and the shares divide what is
    left, rounded down; what rounding (or shares adding up to less than 1) leaves over goes
    to the last section, the one that can always use more."""
    if isinstance(total, bool) or not isinstance(total, int) or total < 0:
        raise ValueError(f"the total budget must be a non-negative integer, got {total!r}")
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"section names repeat: {names}")
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise ValueError(f"no such section: {', '.join(unknown)} (sections: {', '.join(names)})")
    for name, value in overrides.items():
        _check_value(name, value)
    fixed = {name: value for name, value in overrides.items() if isinstance(value, int)}
    shares = {spec.name: float(overrides.get(spec.name, spec.share)) for spec in specs if spec.name not in fixed}
    for name, share in shares.items():
        _check_value(name, share)
    if sum(shares.values()) > 1 + 1e-9:
        listed = ", ".join(f"{name} {share:g}" for name, share in shares.items())
        raise ValueError(f"section shares add up to {sum(shares.values()):g}, more than 1 ({listed})")
    if sum(fixed.values()) > total:
        raise ValueError(f"section token counts add up to {sum(fixed.values())}, more than the total of {total}")
    rest = total - sum(fixed.values())
    # The epsilon absorbs float error (0.29 * 100 = 28.999…), never a whole token.
    allotted = {name: fixed[name] if name in fixed else math.floor(shares[name] * rest + 1e-9) for name in names}
    if names:
        allotted[names[-1]] += total - sum(allotted.values())
    return allotted


def pack(items_by_section: Mapping[str, Sequence[PackItem]], *, total_budget: int,
         specs: Sequence[SectionSpec] = DEFAULT_SECTIONS, count_tokens: Callable[[str], int],
         header: Callable[[str], str] = default_header, separator: str = SEPARATOR,
         overrides: Mapping[str, float | int] | None = None,
         lower_bound: Callable[[str], int] | None = None, additive: bool = False) -> Pack:
    """Fill the sections in the order of `specs`; see the module docstring for the rules.
    `header(name)` renders a section's header line ("" for none); it is written only above a
    section that has items, and charged to that section."""
    allotted = budgets(total_budget, specs, overrides)
    _check_items(items_by_section, allotted)
    writer = _Writer(count_tokens, separator, lower_bound=lower_bound, additive=additive)
    drafts: list[_Draft] = []
    taken: set[Hashable] = set()
    covered: set[Hashable] = set()
    inflow = 0
    for spec in specs:
        draft = _Draft(spec.name, allotted[spec.name], inflow)
        for item in items_by_section.get(spec.name, ()):
            _offer(draft, item, writer, header, taken, covered)
        drafts.append(draft)
        inflow = draft.budget + draft.inflow - draft.used
    tokens = _trim_to_budget(drafts, writer, total_budget)
    sections = tuple(draft.freeze() for draft in drafts)
    return Pack(sections, tokens, writer.text(), total_budget)


# What joining two lines can save at most, in tokens, for the lower-bound screen.
JOIN_SLACK = 2


@dataclass
class _Placed:
    item: PackItem
    cost: int
    lines: int  # 2 when it brought its section's header


@dataclass
class _Draft:
    name: str
    budget: int
    inflow: int
    used: int = 0
    placed: list[_Placed] = field(default_factory=list)
    dropped: list[tuple[PackItem, str]] = field(default_factory=list)

    def freeze(self) -> PackedSection:
        return PackedSection(self.name, self.budget, self.inflow, self.used,
                             tuple(placed.item for placed in self.placed), tuple(self.dropped))


class _Writer:
    """The rendered lines so far, and the marginal cost of appending more."""

    def __init__(self, count_tokens: Callable[[str], int], separator: str, *,
                 lower_bound: Callable[[str], int] | None = None, additive: bool = False):
        self._count = count_tokens
        self._separator = separator
        self._lower_bound = lower_bound
        self._additive = additive
        self._separator_tokens = count_tokens(separator) if additive and separator else 0
        self._lines: list[str] = []
        self._last_line_tokens = 0

    def cannot_fit(self, lines: list[str], left: int) -> bool:
        """Surely over `left` by the counter's lower bound (module docstring), unmeasured."""
        if self._lower_bound is None:
            return False
        return sum(self._lower_bound(line) for line in lines) - JOIN_SLACK > left

    def cost(self, lines: list[str]) -> int:
        """Tokens that appending `lines` adds, measured across the join with the last line:
        join effects are local to the boundary for real tokenizers, and measuring a window
        rather than the whole text keeps packing linear in the text's length."""
        if self._additive:
            joins = len(lines) if self._lines else len(lines) - 1
            return sum(self._count(line) for line in lines) + joins * self._separator_tokens
        block = self._separator.join(lines)
        if not self._lines:
            return max(self._count(block), 0)
        previous = self._lines[-1]
        joined = self._count(previous + self._separator + block)
        return max(joined - self._last_line_tokens, 0)

    def append(self, lines: list[str]) -> None:
        self._lines.extend(lines)
        if not self._additive:
            self._last_line_tokens = self._count(self._lines[-1])

    def remove_last(self, count: int) -> None:
        del self._lines[-count:]
        if not self._additive:
            self._last_line_tokens = self._count(self._lines[-1]) if self._lines else 0

    def text(self) -> str:
        return self._separator.join(self._lines)

    def measure(self) -> int:
        text = self.text()
        return self._count(text) if text else 0


def _offer(draft: _Draft, item: PackItem, writer: _Writer, header: Callable[[str], str],
           taken: set[Hashable], covered: set[Hashable]) -> None:
    if not item.text.strip():
        draft.dropped.append((item, "empty"))
        return
    if item.key in taken:
        draft.dropped.append((item, "duplicate"))
        return
    if item.covers and item.covers <= covered:
        draft.dropped.append((item, "covered"))
        return
    title = header(draft.name) if not draft.placed else ""
    lines = [title, item.text] if title else [item.text]
    if writer.cannot_fit(lines, draft.budget + draft.inflow - draft.used):
        draft.dropped.append((item, "budget"))
        return
    cost = writer.cost(lines)
    if cost > draft.budget + draft.inflow - draft.used:
        draft.dropped.append((item, "budget"))
        return
    writer.append(lines)
    draft.placed.append(_Placed(item, cost, len(lines)))
    draft.used += cost
    taken.add(item.key)
    covered |= item.covers


def _trim_to_budget(drafts: list[_Draft], writer: _Writer, total_budget: int) -> int:
    """Measure the whole text; while it is over the budget (marginal costs are measured on a
    window, so a counter that is not local can add up differently), take out the last item."""
    tokens = writer.measure()
    while tokens > total_budget:
        draft = next(draft for draft in reversed(drafts) if draft.placed)
        placed = draft.placed.pop()
        writer.remove_last(placed.lines)
        draft.used -= placed.cost
        draft.dropped.append((placed.item, "budget"))
        tokens = writer.measure()
    return tokens


def _check_value(name: str, value: float | int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"section {name}: expected a share (float) or a token count (int), got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"section {name}: a token count cannot be negative, got {value}")
    elif not 0 <= value <= 1:
        raise ValueError(f"section {name}: a share is between 0 and 1, got {value!r}"
                         " (pass an int for a number of tokens)")


def _check_items(items_by_section: Mapping[str, Sequence[PackItem]], allotted: Mapping[str, int]) -> None:
    for name, items in items_by_section.items():
        if name not in allotted:
            raise ValueError(f"no such section: {name} (sections: {', '.join(allotted)})")
        for item in items:
            if item.section != name:
                raise ValueError(f"item {item.key!r} belongs to section {item.section} but was passed under {name}")
