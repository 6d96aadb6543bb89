"""Which query words find full-text candidates: words too common to scan (by the table's
statistics) are left out of the finding but still rank; nothing changes for small tables."""

from context.retrieval import MAX_POSTINGS, _TableStats, text_queries


def stats(rows: float, **freqs: float) -> _TableStats:
    return _TableStats(read_at=0.0, rows=rows, freqs=freqs)


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
    match, _ = text_queries(["a", "b", "c", "d"], stats(rows, a=0.02, b=0.025, c=0.03, d=0.2))
    # 2,000 + 2,500 fit in the bound; adding 3,000 would not.
    assert match == "'a' | 'b'"


def test_when_every_word_is_common_all_must_match():
    match, rank = text_queries(["go", "like"], stats(1_000_000, go=0.05, like=0.04))
    assert match == "'go' & 'like'" and rank == "'go' | 'like'"


def test_words_unknown_to_the_statistics_count_as_rare_and_quotes_are_escaped():
    match, _ = text_queries(["o'neil", "go"], stats(1_000_000, go=0.05))
    assert match == "'o''neil'"
