"""Chinese, Japanese and Korean notes in the keyword index: a run of such characters is read as
its overlapping pairs on both sides (index/terms.cjk_pairs). Before, FTS5 kept a whole run as
one token, and a notebook in Chinese or Japanese answered only prompts that were a title."""

from __future__ import annotations

from pathlib import Path

import apsw

from conftest import OPEN, HashEmbedder, add_note, make_settings
from trilium_recall.index.store import Store
from trilium_recall.index.terms import cjk_pairs, prompt_terms, words
from trilium_recall.index.vectors import VectorIndex
from trilium_recall.search.hybrid import search
from trilium_recall.search.null_bank import GenericPrompts
from trilium_recall.search.rankings import keyword_hits

BRAISED = "红烧肉"
BRAISED_TEXT = "五花肉切块，焯水后加冰糖炒色，再加老抽和料酒小火炖一个小时。"
MOVING = "引っ越し"
MOVING_TEXT = "転出届は引っ越しの14日前までに市役所に出す。転入届は引っ越し後14日以内。"


def test_a_run_of_cjk_characters_is_read_as_its_pairs_and_other_text_as_it_is() -> None:
    assert words("加冰糖炒色") == ["加冰", "冰糖", "糖炒", "炒色"]
    assert words("冰糖 and rock sugar") == ["冰糖", "and", "rock", "sugar"]
    assert cjk_pairs(cjk_pairs(BRAISED_TEXT)) == cjk_pairs(BRAISED_TEXT)  # pairs stay pairs
    assert cjk_pairs("restore a restic backup") == "restore a restic backup"
    assert prompt_terms("红烧肉怎么做？") == ["红烧", "烧肉", "肉怎", "么做"]  # no "怎么": how
    assert prompt_terms("味噌汁の作り方は？") == ["味噌", "噌汁"]  # no hiragana: grammar


def _notebook(store: Store, embedder: HashEmbedder) -> None:
    add_note(store, embedder, "braised00001", BRAISED, [("", BRAISED_TEXT)])
    add_note(store, embedder, "moving000001", MOVING, [("", MOVING_TEXT)])
    add_note(store, embedder, "bikeTyres001", "Bike tyres", [("", "Road tyres at 5.5 bar.")])


def test_a_word_inside_a_cjk_sentence_is_found_and_pairs_no_note_holds_are_not_unknown(
    store: Store, embedder: HashEmbedder
) -> None:
    _notebook(store, embedder)
    sugar = keyword_hits(store, "冰糖")
    assert [store.section_hits([sid])[sid].note_id for sid, _ in sugar.hits] == ["braised00001"]
    asked = keyword_hits(store, "转出届はいつまでに出す？")
    assert asked.hits and all(
        store.section_hits([sid])[sid].note_id == "moving000001" for sid, _ in asked.hits
    )
    dish = keyword_hits(store, "红烧肉怎么做？")
    assert dish.hits  # the query is made of the pairs the notes hold, not of those none holds


def test_pairs_no_note_holds_are_not_unknown_in_notes_of_their_language(
    store: Store, embedder: HashEmbedder, tmp_path: Path
) -> None:
    """ "肉怎" and "么做" span two words: counted unknown they made the question look off-topic.
    Among English notes they count, as any foreign word does."""
    _notebook(store, embedder)
    generic = GenericPrompts(["how do I sort a list"], embedder.queries(["how do I sort a list"]))
    settings = make_settings(tmp_path)
    dish = search(store, embedder, generic, settings, "红烧肉怎么做？", gate=OPEN).trace
    assert dish.closest_language == "cjk" and not dish.foreign
    assert dish.keyword.unknown == [] and {"肉怎", "么做"} <= set(dish.keyword.uncounted)
    english = Store(tmp_path / "english.sqlite3", VectorIndex(HashEmbedder.dim))
    try:
        text = "The road tyres of the bike are at 5.5 bar, and the spare is in the shed with it."
        add_note(english, embedder, "bikeTyres001", "Bike tyres", [("", text)])
        asked = search(english, embedder, generic, settings, "红烧肉怎么做？", gate=OPEN).trace
    finally:
        english.close()
    assert asked.foreign and {"肉怎", "么做"} <= set(asked.keyword.unknown)


def test_an_index_written_before_reads_its_cjk_text_as_pairs_once_migrated(
    tmp_path: Path, embedder: HashEmbedder
) -> None:
    path = tmp_path / "recall.sqlite3"
    store = Store(path, VectorIndex(HashEmbedder.dim))
    _notebook(store, embedder)
    store.close()
    db = apsw.Connection(str(path))  # as m020's index held it: the runs whole
    with db:
        for rowid, title, body in db.execute(
            "SELECT s.id, n.title, s.text FROM sections s JOIN notes n USING (instance, note_id)"
        ).fetchall():
            db.execute(
                "UPDATE sections_fts SET title = ?, body = ? WHERE rowid = ?", (title, body, rowid)
            )
        db.execute("PRAGMA user_version = 20")
    db.close()
    store = Store(path, VectorIndex(HashEmbedder.dim))
    try:
        (body,) = store.db.execute(
            "SELECT body FROM sections_fts WHERE body MATCH ?", ('"冰糖"',)
        ).fetchone()
        assert "冰糖" in body.split()
        english = store.db.execute("SELECT body FROM sections_fts WHERE title = 'Bike tyres'")
        assert english.fetchone()[0] == "Road tyres at 5.5 bar."  # other text left as it was
    finally:
        store.close()
