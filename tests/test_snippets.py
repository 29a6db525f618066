"""Snippets: a section cut into groups of sentences, each led by its note title and heading."""

from __future__ import annotations

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


def test_sentences_are_grouped_with_one_sentence_of_overlap_and_spans_point_at_them() -> None:
    section = Section(0, "Postgres tuning › Memory", TEXT)
    snippets = split_snippets("Postgres tuning", section)
    assert [s.text.split("\n", 1)[0] for s in snippets] == ["Postgres tuning › Memory"] * 2
    first, second = snippets
    assert TEXT[first.start : first.end].startswith("shared_buffers is 8GB.")
    assert TEXT[second.start : second.end].startswith("We disabled jit")  # the overlap
    assert second.end == len(TEXT)
    assert estimate_tokens(TEXT[first.start : first.end]) >= SNIPPET_MIN_TOKENS
    assert "jit" in first.text and "jit" in second.text


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
    for text in ("word " * 400, "京都" * 300, "x" * 3000):
        snippets = split_snippets("T", Section(0, "T", text))
        assert len(snippets) > 5
        for snippet in snippets:
            assert estimate_tokens(text[snippet.start : snippet.end]) <= SNIPPET_MAX_TOKENS
        assert snippets[-1].end == len(text.rstrip()) or snippets[-1].end == len(text)
