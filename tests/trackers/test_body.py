"""The Markdown of a capability-gap issue: what it says, the evidence table's escaping and
the cap on GitHub's 65,536 characters. Tables are read back with a CommonMark parser with
GFM tables (markdown-it-py), as GitHub and GitLab would read them."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from trackers import MAX_BODY_CHARS, EvidenceLine, issue_body

START = datetime(2026, 11, 1, 9, 30, tzinfo=timezone.utc)
_MARKDOWN = MarkdownIt("commonmark").enable("table")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _line(n: int, snippet: str = "where is the refund policy?", **overrides) -> EvidenceLine:
    values = {"interaction_id": 1000 + n, "external_id": f"msg-{n}", "occurred_at": START + timedelta(hours=n),
              "channel": "email", "snippet": snippet}
    return EvidenceLine(**{**values, **overrides})


def _body(evidence, **overrides) -> str:
    values = {"description": "A refund policy the agents can quote", "frequency": 7, "category": "knowledge",
              "first_seen": START, "last_seen": START + timedelta(days=3), "evidence": evidence,
              "dashboard_url": "https://mnemo.example.com/gaps/12/"}
    return issue_body(**{**values, **overrides})


def _table_rows(body: str) -> list[list[str]]:
    """Each body row of the evidence table as GFM reads it: the text of every cell."""
    tokens = _MARKDOWN.parse(body)
    rows, row, inside_body = [], None, False
    for token in tokens:
        if token.type == "tbody_open":
            inside_body = True
        elif token.type == "tbody_close":
            inside_body = False
        elif inside_body and token.type == "tr_open":
            row = []
        elif inside_body and token.type == "tr_close":
            rows.append(row)
        elif inside_body and token.type == "inline":
            row.append("".join(child.content for child in token.children or []))
    return rows


def _table_lines(body: str) -> list[str]:
    return [line for line in body.splitlines() if line.startswith("|")]


def test_it_says_what_is_needed_how_often_since_when_and_where_to_look():
    body = _body([_line(1), _line(2, channel="chat", external_id=None)])

    assert body.startswith("**Need:** A refund policy the agents can quote\n")
    assert "- **Asked for:** 7 times" in body
    assert "- **Category:** knowledge" in body
    assert "- **First seen:** 2026-11-01 09:30 UTC" in body
    assert "- **Last seen:** 2026-11-04 09:30 UTC" in body
    assert "[Open this gap in the Mnemo dashboard](<https://mnemo.example.com/gaps/12/>)" in body
    assert body.rstrip().endswith("Opened by Mnemo")
    # Newest first; the interaction id always, the external id when there is one.
    assert _table_rows(body) == [
        ["2026-11-01 11:30 UTC", "chat", "1002", "where is the refund policy?"],
        ["2026-11-01 10:30 UTC", "email", "1001 / msg-1", "where is the refund policy?"],
    ]
    assert "more (older" not in body


def test_without_a_dashboard_or_evidence_it_says_so():
    body = _body([], dashboard_url=None, frequency=1)

    assert "dashboard" not in body
    assert "- **Asked for:** 1 time\n" in body
    assert "No interactions were kept as evidence." in body and "|" not in body
    assert "Opened by Mnemo" in body


def test_times_are_shown_in_utc_and_naive_ones_taken_as_utc():
    paris = timezone(timedelta(hours=1))
    body = _body([_line(0, occurred_at=datetime(2026, 11, 2, 10, 0, tzinfo=paris)),
                  _line(1, occurred_at=datetime(2026, 11, 2, 9, 30))])

    assert [row[0] for row in _table_rows(body)] == ["2026-11-02 09:30 UTC", "2026-11-02 09:00 UTC"]


def test_pipes_and_newlines_stay_inside_their_cell():
    body = _body([_line(1, snippet="refunds | returns\nand\r\nexchanges\u2028too", channel="web|form")])

    assert _table_rows(body) == [["2026-11-01 10:30 UTC", "web|form", "1001 / msg-1",
                                  "refunds | returns and exchanges too"]]
    assert "refunds \\| returns and exchanges too" in body


def test_backticks_and_markup_in_a_snippet_are_shown_as_written_and_mention_nobody():
    snippet = "``ask @alice`` <img src=x> [link](https://evil.example) **bold**"
    body = _body([_line(1, snippet=snippet, external_id="`odd`")])

    assert _table_rows(body)[0][2:] == ["1001 / `odd`", snippet]
    html = _MARKDOWN.render(body)
    assert "<img" not in html and html.count("<a href") == 1  # the dashboard's link only
    assert "<code>" + snippet.replace("<", "&lt;").replace(">", "&gt;") + "</code>" in html


def test_the_need_is_escaped_and_mentions_in_it_are_broken():
    body = _body([], description="Ask @billing-team about *refunds*\n# not a heading <b>")

    first = body.splitlines()[0]
    assert first == "**Need:** Ask @\u2060billing-team about \\*refunds\\* \\# not a heading \\<b\\>"
    html = _MARKDOWN.render(body)
    assert "<em>" not in html and "<b>" not in html and "<h1>" not in html


def test_a_long_snippet_is_cut_at_200_characters():
    body = _body([_line(1, snippet="word " * 100)])

    snippet = _table_rows(body)[0][3]
    assert len(snippet) == 200 and snippet.endswith("…")


def test_a_blank_snippet_is_a_dash():
    assert _table_rows(_body([_line(1, snippet=" \n ")]))[0][3] == "—"


def test_the_body_keeps_the_newest_evidence_within_githubs_limit_and_counts_the_rest():
    evidence = [_line(n, snippet=f"line {n} " + "x" * 300) for n in range(1000)]

    body = _body(evidence)

    rows = _table_rows(body)
    left_out = int(re.search(r"… and (\d+) more \(older", body).group(1))
    assert len(body) <= MAX_BODY_CHARS
    assert len(rows) + left_out == 1000 and 100 < len(rows) < 1000
    assert rows[0][3].startswith("line 999 ") and rows[-1][3].startswith(f"line {1000 - len(rows)} ")
    assert body.rstrip().endswith("Opened by Mnemo")


def test_a_dashboard_url_cannot_break_out_of_its_link():
    body = _body([], dashboard_url="https://mnemo.example.com/gaps/12/?q=a b>c<d")

    assert "(<https://mnemo.example.com/gaps/12/?q=a%20b%3Ec%3Cd>)" in body


_any_text = st.text(st.characters(codec="utf-8"), max_size=400) | st.text("|\\`\n\r @#*<>x", max_size=400)
# Long snippets too, so that many copies of them pass the cap and lines are left out.
_snippet = _any_text | st.text(st.characters(codec="utf-8"), min_size=150, max_size=400)


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.tuples(_snippet, _any_text, st.none() | _any_text), max_size=12),
    copies=st.integers(min_value=1, max_value=150),
    description=_any_text,
    category=_any_text,
)
def test_any_evidence_makes_a_body_within_the_limit_whose_table_rows_all_have_four_cells(
        lines, copies, description, category):
    evidence = [
        EvidenceLine(interaction_id=n, external_id=external_id, occurred_at=START + timedelta(minutes=n),
                     channel=channel, snippet=snippet)
        for n, (snippet, channel, external_id) in enumerate(lines * copies)
    ]

    body = _body(evidence, description=description, category=category)

    assert len(body) <= MAX_BODY_CHARS
    table = _table_lines(body)
    assert all(len(_UNESCAPED_PIPE.split(line)) - 2 == 4 for line in table), table
    rows = _table_rows(body)
    assert all(len(row) == 4 for row in rows)
    assert len(table) == (len(rows) + 2 if evidence else 0)
    left_out = re.search(r"… and (\d+) more \(older", body)
    assert len(rows) + (int(left_out.group(1)) if left_out else 0) == len(evidence)
