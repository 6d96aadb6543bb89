"""Which query words find full-text candidates: words too common to scan (by the table's
statistics) are left out of the finding but still rank; nothing changes for small tables."""

import pytest

from core.search import MAX_POSTINGS, TableStats, text_queries


def stats(rows: float, **freqs: float) -> TableStats:
    return TableStats(read_at=0.0, rows=rows, freqs=freqs)


def test_small_tables_find_with_every_word():
    match, rank = text_queries(["caroline", "go", "support"], stats(2_760, go=0.3, caroline=0.2))
    assert match == rank == "'caroline' | 'go' | 'support'"


def test_common_words_rank_but_do_not_find():
    rows = 1_000_000
    match, rank = text_queries(["caroline", "go", "support"], stats(rows, go=0.05, caroline=0.002, support=0.01))
    assert match == "'caroline'" and rank == "'caroline' | 'go' | 'support'"
    assert 0.002 * rows <= MAX_POSTINGS < 0.01 * rows


def test_the_rarest_words_find_while_their_postings_fit_together():
    rows = 100_000
    share = MAX_POSTINGS / rows
    match, _ = text_queries(["a", "b", "c", "d"], stats(rows, a=0.4 * share, b=0.5 * share, c=0.6 * share, d=0.2))
    # 40 % + 50 % of the bound fit in it; adding 60 % would not.
    assert match == "'a' | 'b'"


def test_when_every_word_is_common_all_must_match():
    match, rank = text_queries(["go", "like"], stats(1_000_000, go=0.05, like=0.04))
    assert match == "'go' & 'like'" and rank == "'go' | 'like'"


def test_words_unknown_to_the_statistics_count_as_rare_and_quotes_are_escaped():
    match, _ = text_queries(["o'neil", "go"], stats(1_000_000, go=0.05))
    assert match == "'o''neil'"


@pytest.mark.django_db
def test_the_search_uses_the_tables_own_statistics(workspace, monkeypatch):
    from django.db import connection

    from conversations import services as conversation_services
    from conversations.services import InteractionItem
    from core import search as hybrid

    rare = {3, 17}
    items = [InteractionItem(channel="slack", channel_id="U1", sender_name="Ada",
                             content=f"The weekly standup note {n}" + (" mentions the kayak trip" if n in rare else ""))
             for n in range(40)]
    results = conversation_services.interactions_log(workspace=workspace, items=items)
    kayak = {results[n].id for n in rare}
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE conversations_interaction")
        hybrid._stats.clear()
        lexemes = hybrid.lexemes_of(cursor, "standup kayak")
        search = lambda: set(hybrid.lexical_search(cursor, "conversations_interaction", "i", "i.workspace_id = %s",  # noqa: E731
                                                    [workspace.pk], lexemes))
        assert search() == {r.id for r in results}  # 40 rows: below the bound, every word finds
        monkeypatch.setattr(hybrid, "MAX_POSTINGS", 10)
        hybrid._stats.clear()
        # "standup" is in every row by ANALYZE's count: only the rare word finds now.
        assert search() == kayak
    hybrid._stats.clear()


def _log(workspace, said: list[tuple[str, str]]) -> list[int]:
    from conversations import services as conversation_services
    from conversations.services import InteractionItem

    results = conversation_services.interactions_log(workspace=workspace, items=[
        InteractionItem(channel="chat", channel_id=name, sender_name=name, content=content) for name, content in said])
    return [r.id for r in results]


def _lexical(workspace, query: str, *, narrowed: bool = False) -> list[int]:
    from django.db import connection

    from core import search as hybrid

    hybrid._stats.clear()
    with connection.cursor() as cursor:
        lexemes = hybrid.lexemes_of(cursor, query)
        found = hybrid.lexical_search(cursor, "conversations_interaction", "i", "i.workspace_id = %s",
                                      [workspace.pk], lexemes, narrowed=narrowed)
    hybrid._stats.clear()
    return found


@pytest.mark.django_db
@pytest.mark.parametrize("narrowed", [False, True])
def test_a_word_in_most_found_rows_ranks_after_the_others(workspace, narrowed):
    """Issue 22: the other speaker says "Melanie" again and again, Melanie never does. Her
    one message with the question's other word must come first, not the rows that repeat
    the name (which, by cover density alone, outrank a single other word)."""
    said = [("Caroline", f"Melanie, Melanie, that is lovely news number {n}") for n in range(5)]
    said.append(("Melanie", "Running farther helps me destress"))
    *naming, hers = _log(workspace, said)
    found = _lexical(workspace, "What does Melanie do to destress?", narrowed=narrowed)
    assert found[0] == hers
    assert set(found) == {*naming, hers}


@pytest.mark.django_db
def test_when_every_word_is_common_all_of_them_rank(workspace):
    """Both words in every found row: neither tells the rows apart, so both rank as before
    (more of them first), not the rows' order."""
    once, twice = _log(workspace, [("Ada", "Melanie went running"),
                                   ("Ada", "Melanie went running and Melanie kept running")])
    assert _lexical(workspace, "Melanie running") == [twice, once]
