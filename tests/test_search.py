"""The search pipeline over a real SQLite index (FTS5 + vectors) with a deterministic embedder."""

from __future__ import annotations

import pytest

from conftest import add_note, make_settings
from trilium_recall.errors import UnknownInstance
from trilium_recall.recall import recall
from trilium_recall.search import fts_query, gate, prompt_terms, rrf, search


def test_rrf_sums_reciprocal_ranks_and_orders_by_fused_score() -> None:
    fused = rrf([[1, 2, 3], [3, 1]], k=60)
    assert fused == pytest.approx({1: 1 / 61 + 1 / 62, 2: 1 / 62, 3: 1 / 63 + 1 / 61})
    assert sorted(fused, key=fused.__getitem__, reverse=True) == [1, 3, 2]


def test_prompt_terms_drop_stop_words_and_fold_case_and_accents() -> None:
    assert prompt_terms("How do I tune the Postgres shared_buffers? Café café") == [
        "tune",
        "postgres",
        "shared_buffers",
        "cafe",
    ]


def test_fts_query_quotes_every_term_so_operators_stay_text() -> None:
    assert fts_query(["near(", "or", 'a"b']) == '"near(" OR "or" OR "a""b"'


def test_fts5_operators_and_quotes_in_prompt_do_not_break_search(store, embedder, tmp_path) -> None:
    add_note(store, embedder, "n1", "Backups", [("Backups", "restic snapshots every night")])
    settings = make_settings(tmp_path, gate_min_cosine=0.99)
    for prompt in ['"NEAR(" OR *', "restic AND NOT ^*", 'col:umn "unterminated', "(((", "\x00\x1f"]:
        result = search(store, embedder, settings, prompt)
        assert result.trace.terms == prompt_terms(prompt)
        found = store.section_hits([i for i, _ in result.trace.keyword])
        assert [h.note_id for h in found.values()] == (["n1"] if "restic" in prompt else [])
    assert search(store, embedder, settings, 'restic" OR "*').trace.keyword


def _corpus(store, embedder) -> None:
    add_note(
        store,
        embedder,
        "wiki1",
        "Restic backups",
        [("Restic backups", "restic backup restore snapshot nightly repository")],
        area="wiki",
    )
    add_note(
        store,
        embedder,
        "src1",
        "Restic backups raw",
        [("Restic backups raw", "restic backup restore snapshot nightly repository")],
        area="sources",
    )
    add_note(
        store,
        embedder,
        "jour1",
        "Monday",
        [("Monday", "restic backup restore snapshot nightly repository")],
        area="journal",
    )
    add_note(
        store,
        embedder,
        "other1",
        "Cooking",
        [("Cooking", "lasagne recipe with bechamel sauce and pasta sheets")],
    )


def test_area_weight_orders_equal_matches_wiki_then_sources_then_journal(
    store, embedder, tmp_path
) -> None:
    _corpus(store, embedder)
    settings = make_settings(tmp_path, gate_min_cosine=0.5)
    result = search(store, embedder, settings, "restic backup restore snapshot", limit=3)
    assert [c.hit.note_id for c in result.passages] == ["wiki1", "src1", "jour1"]
    weights = [c.weight for c in result.passages]
    assert weights == [1.0, 0.85, 0.7]


def test_custom_area_weights_change_the_order(store, embedder, tmp_path) -> None:
    _corpus(store, embedder)
    settings = make_settings(tmp_path, gate_min_cosine=0.5, area_weights="journal=1.5")
    result = search(store, embedder, settings, "restic backup restore snapshot", limit=3)
    assert result.passages[0].hit.note_id == "jour1"


def test_gate_is_silent_on_an_unrelated_prompt(store, embedder, tmp_path) -> None:
    _corpus(store, embedder)
    settings = make_settings(tmp_path, gate_min_cosine=0.5)
    result = search(store, embedder, settings, "what is the capital of australia")
    assert result.passages == []
    assert all(not c.passed for c in result.trace.candidates)


def test_gate_passes_a_strong_multi_term_keyword_match_despite_low_cosine(
    store, embedder, tmp_path
) -> None:
    add_note(
        store,
        embedder,
        "k1",
        "Ops",
        [("Ops", "zfs scrub " + " ".join(f"filler{i}" for i in range(60)))],
    )
    for i in range(5):
        add_note(
            store, embedder, f"pool{i}", f"Pool {i}", [(f"Pool {i}", "pool layout notes and more")]
        )
    settings = make_settings(tmp_path, gate_min_cosine=0.9)
    result = search(store, embedder, settings, "zfs scrub")
    assert [c.hit.note_id for c in result.passages] == ["k1"]
    assert result.passages[0].cosine < 0.9
    assert result.passages[0].reason == "keywords: 2 terms, 100% of the prompt's weight"
    one_rare_term = search(store, embedder, settings, "zfs mirror vdev")
    assert one_rare_term.passages == []


def test_gate_rules(tmp_path) -> None:
    settings = make_settings(
        tmp_path,
        gate_min_cosine=0.845,
        gate_min_zscore=2.4,
        gate_keyword_coverage=0.5,
        gate_keyword_terms=2,
    )
    assert gate(0.86, 2.5, (), 0.0, settings)[0] is True  # meaning
    assert gate(0.86, 1.0, (), 0.0, settings)[0] is False  # high cosine that does not stand out
    assert gate(0.70, -1.0, ("a", "b"), 0.6, settings)[0] is True  # keywords alone
    assert gate(0.70, -1.0, ("a",), 0.9, settings)[0] is False  # one term is not several
    assert gate(0.80, 2.1, ("a", "b"), 0.4, settings)[0] is True  # both moderately, agreeing
    assert gate(0.80, 2.1, ("a", "b"), 0.4, settings, "meaning")[0] is False
    assert gate(0.86, 2.5, (), 0.0, settings, "keyword")[0] is False


def _summary_pair(store, embedder, source_text: str) -> None:
    add_note(
        store,
        embedder,
        "raw1",
        "Vendor call transcript",
        [("Vendor call transcript", source_text)],
        area="sources",
    )
    add_note(
        store,
        embedder,
        "sum1",
        "Vendor call summary",
        [("Vendor call summary", "vendor call about storage pricing and renewal terms")],
        area="wiki",
        links=[("raw1", "derivedFrom")],
    )


def test_source_hit_is_shown_as_its_wiki_summary(store, embedder, tmp_path) -> None:
    _summary_pair(
        store, embedder, "vendor call about storage pricing and renewal terms discussed at length"
    )
    settings = make_settings(tmp_path, gate_min_cosine=0.3, area_weights="sources=2.0")
    result = search(store, embedder, settings, "storage pricing renewal vendor", limit=3)
    assert [c.hit.note_id for c in result.passages] == ["sum1"]
    assert result.passages[0].stands_for == "raw1"


def test_source_keeps_its_place_when_it_holds_the_detail(store, embedder, tmp_path) -> None:
    _summary_pair(
        store, embedder, "the discount code was ZX42 valid until march with quota 7 terabytes"
    )
    settings = make_settings(tmp_path, gate_min_cosine=0.3)
    result = search(store, embedder, settings, "discount code ZX42 quota terabytes", limit=3)
    assert result.passages[0].hit.note_id == "raw1"
    assert result.passages[0].stands_for is None
    assert any("kept the source" in line for line in result.trace.substitutions)


def test_at_most_limit_passages_best_section_per_note(store, embedder, tmp_path) -> None:
    for i in range(6):
        add_note(
            store,
            embedder,
            f"n{i}",
            f"Kubernetes note {i}",
            [
                (f"Kubernetes note {i}", "kubectl rollout restart deployment"),
                (f"Kubernetes note {i} › more", "kubectl rollout restart deployment again"),
            ],
        )
    settings = make_settings(tmp_path, gate_min_cosine=0.3)
    result = recall(store, embedder, settings, "kubectl rollout restart deployment")
    assert len(result.passages) == 3
    assert len({p.note_id for p in result.passages}) == 3


def test_session_sends_a_note_once_and_other_sessions_still_get_it(
    store, embedder, tmp_path
) -> None:
    _corpus(store, embedder)
    settings = make_settings(tmp_path, gate_min_cosine=0.5, max_passages=1)
    first = recall(store, embedder, settings, "restic backup restore", session_id="s1")
    again = recall(store, embedder, settings, "restic backup restore", session_id="s1")
    other = recall(store, embedder, settings, "restic backup restore", session_id="s2")
    no_session = recall(store, embedder, settings, "restic backup restore")
    assert [p.note_id for p in first.passages] == ["wiki1"]
    assert [p.note_id for p in again.passages] == ["src1"]
    assert [p.note_id for p in other.passages] == ["wiki1"]
    assert [p.note_id for p in no_session.passages] == ["wiki1"]


def test_recall_skips_before_searching_and_formats_context(store, embedder, tmp_path) -> None:
    _corpus(store, embedder)
    settings = make_settings(tmp_path, gate_min_cosine=0.5, max_passages=1)
    skipped = recall(store, embedder, settings, "/compact")
    assert (skipped.skipped, skipped.passages, skipped.context) == ("slash command", [], "")
    result = recall(store, embedder, settings, "restic backup restore")
    assert result.context.startswith("Passages from the user's Trilium notes")
    assert "[1] Notes › Restic backups (wiki)" in result.context
    assert "Source: http://trilium.test/#root/wiki1" in result.context
    assert result.passages[0].url == "http://trilium.test/#root/wiki1"


def test_unknown_instance_is_a_clear_error(store, embedder, tmp_path) -> None:
    settings = make_settings(tmp_path)
    with pytest.raises(UnknownInstance, match="nope"):
        recall(store, embedder, settings, "restic", instance="nope")


def test_deadline_passed_returns_nothing_and_marks_nothing(store, embedder, tmp_path) -> None:
    _corpus(store, embedder)
    settings = make_settings(tmp_path, gate_min_cosine=0.5)
    late = recall(store, embedder, settings, "restic backup", session_id="s", deadline=0.0)
    assert late.passages == [] and late.context == ""
    assert store.already_sent("s", 3600) == set()
