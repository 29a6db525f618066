"""Snippets: a section cut into groups of sentences, each led by its note title and heading."""

from __future__ import annotations

import itertools

from trilium_recall.notes.sections import Section, estimate_tokens
from trilium_recall.notes.snippets import (
    SNIPPET_MAX_TOKENS,
    SNIPPET_MIN_TOKENS,
    snippet_prefix,
    split_snippets,
)

TEXT = (
    "shared_buffers is 8GB. work_mem is 64MB because sorts spilled to disk. We disabled jit "
    "because short OLTP queries paid the compile time. effective_cache_size is 24GB.\n"
    "maintenance_work_mem is 1GB for index builds on the bookings table, which took forty "
    "minutes before."
)


def test_sentences_are_grouped_without_overlap_and_spans_cover_the_section() -> None:
    text = " ".join([TEXT] * 3)
    snippets = split_snippets("Postgres tuning", Section(0, "Postgres tuning › Memory", text))
    assert len(snippets) > 1
    assert {s.text.split("\n", 1)[0] for s in snippets} == {"Postgres tuning › Memory"}
    assert snippets[0].start == 0 and snippets[-1].end == len(text)
    for before, after in itertools.pairwise(snippets):
        assert before.end <= after.start  # no sentence is embedded twice
        assert not text[before.end : after.start].strip()  # and none is left out
    for snippet in snippets[:-1]:
        assert estimate_tokens(text[snippet.start : snippet.end]) >= SNIPPET_MIN_TOKENS
    assert sum(s.text.count("We disabled jit") for s in snippets) == 3


def _sentences_of(tokens: int) -> str:
    """Whole sentences whose token estimates add up to at least `tokens`, as the splitter counts."""
    sentences: list[str] = []
    while sum(map(estimate_tokens, sentences)) < tokens:
        sentences.append(f"Vacuum ran on table {len(sentences)} overnight.")
    return " ".join(sentences)


def test_a_short_tail_joins_the_snippet_before_it_and_a_long_one_stands_alone() -> None:
    full = _sentences_of(SNIPPET_MIN_TOKENS)
    short_tail = split_snippets("T", Section(0, "T", f"{full} Done."))
    assert len(short_tail) == 1 and short_tail[0].text.endswith("Done.")
    tail = _sentences_of(SNIPPET_MIN_TOKENS // 2 + 1)
    long_tail = split_snippets("T", Section(0, "T", f"{full} {tail}"))
    assert [s.text.split("\n", 1)[1] for s in long_tail] == [full, tail]


def test_prefix_is_the_title_and_the_section_s_own_heading() -> None:
    assert snippet_prefix("Release notes", "Release notes › v0.90 › Bug fixes") == (
        "Release notes › Bug fixes"
    )
    assert snippet_prefix("Garden", "Garden") == "Garden"
    assert snippet_prefix("Garden", "") == "Garden"


def test_an_empty_or_tiny_section_is_one_snippet() -> None:
    assert [s.text for s in split_snippets("Inbox", Section(0, "Inbox", ""))] == ["Inbox"]
    tiny = split_snippets("Todo", Section(0, "Todo", "buy milk"))
    assert [(s.start, s.end, s.text) for s in tiny] == [(0, 8, "Todo\nbuy milk")]


def test_long_runs_without_stops_are_cut_in_every_script() -> None:
    # a run is cut into pieces of at most half SNIPPET_MAX_TOKENS; a snippet holds the pieces
    # that reach SNIPPET_MIN_TOKENS, and the last one perhaps a short tail besides
    bound = SNIPPET_MAX_TOKENS + SNIPPET_MIN_TOKENS // 2
    for text in ("word " * 400, "京都" * 300, "x" * 3000):
        snippets = split_snippets("T", Section(0, "T", text))
        assert len(snippets) >= estimate_tokens(text) // bound > 1
        for snippet in snippets:
            assert estimate_tokens(text[snippet.start : snippet.end]) <= bound
        assert snippets[-1].end == len(text.rstrip()) or snippets[-1].end == len(text)
