"""One split: prompt terms, IDF counts and matched terms split exactly where FTS5 splits, and
stemmed where the index stems."""

from __future__ import annotations

import pytest

from conftest import add_note
from trilium_recall.index.terms import (
    FTS_TOKENIZER,
    MAX_PHRASE_TOKENS,
    MAX_PHRASES,
    MAX_TERMS,
    code_phrases,
    fts_query,
    index_term,
    matched_terms,
    prompt_terms,
    tokenize,
    tokenize_option,
    words,
)
from trilium_recall.search.technologies import named_technologies

TEXTS = {
    "snake": "tune shared_buffers and work_mem; effective_cache_size=24GB",
    "accents": "Café crème, naïve Ünïcödé, Straße and STRASSE, Ærøskøbing",
    "cjk": "京都旅行メモ：伏見稲荷は朝7時に行く予定",
    "mixed": "don't re-run x86_64 builds; v2.3.1-rc1 on 127.0.0.1:8080 → ok 👍",
    "cyrillic": "Привет, как настроить резервное копирование? Ελληνικά κείμενα",
}


def test_tokenize_yields_exactly_the_terms_fts5_indexes(store, embedder) -> None:
    for note_id, text in TEXTS.items():
        add_note(store, embedder, note_id, note_id.title(), [(note_id.title(), text)])
    vocab = {row[0] for row in store.db.execute("SELECT term FROM sections_vocab")}
    ours = {t for note_id, text in TEXTS.items() for t in tokenize(f"{note_id.title()} {text}")}
    assert ours == vocab


def test_the_tokenizer_is_the_one_the_keyword_table_was_made_with(store) -> None:
    (sql,) = store.db.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'sections_fts'"
    ).fetchone()
    assert f"tokenize = '{tokenize_option(FTS_TOKENIZER)}'" in sql


def test_snake_case_terms_are_split_and_counted_like_the_index(store, embedder) -> None:
    add_note(store, embedder, "pg", "Postgres", [("Postgres", TEXTS["snake"])])
    terms = prompt_terms("tune shared_buffers")
    assert terms == ["tune", "shared", "buffers"]
    total, counts = store.term_document_counts(terms)
    assert (total, counts) == (1, {"tune": 1, "shared": 1, "buffers": 1})


def test_prompt_terms_fold_case_and_accents_drop_stop_words_and_repeats() -> None:
    assert prompt_terms("How do I tune the Postgres shared_buffers? Café café CAFÉ") == [
        "tune",
        "postgres",
        "shared",
        "buffers",
        "cafe",
    ]
    assert prompt_terms("what's the plan, don't we?") == ["plan"]
    assert prompt_terms("whats the plan, i dont know, cant we?") == ["plan"]  # typed without '
    assert prompt_terms("theyre late, youve seen it, aint it?") == ["late", "seen"]


def test_a_long_prompt_gives_its_first_distinct_terms_only() -> None:
    distinct = [f"word{n}x" for n in range(MAX_TERMS + 6)]
    assert prompt_terms(" ".join(["restoring"] * 500 + distinct)) == (
        ["restoring", *distinct[: MAX_TERMS - 1]]
    )


def test_matched_terms_keep_prompt_order_read_every_text_and_any_form_of_a_word() -> None:
    terms = ["restic", "prune", "snapshot", "restoring"]
    assert matched_terms(terms, "Backups", "Snapshots: restic forget --prune") == (
        "restic",
        "prune",
        "snapshot",
    )
    assert matched_terms(terms, "Restore it") == ("restoring",)
    assert matched_terms(terms) == ()


def test_a_prompt_word_finds_the_other_forms_of_its_stem_in_the_index(store, embedder) -> None:
    add_note(store, embedder, "r", "Restoring", [("Restoring", "Nightly snapshots are pruned")])
    add_note(store, embedder, "o", "Other", [("Other", "Something else entirely")])
    terms = prompt_terms("restore the snapshot, prune snapshots")
    assert terms == ["restore", "snapshot", "prune"]  # one term per stem, as first written
    total, counts = store.term_document_counts(terms)
    assert (total, counts) == (2, {"restore": 1, "snapshot": 1, "prune": 1})
    found = store.keyword_search(fts_query(terms), 5)
    assert [section for section, _ in found][:1] == [
        store.db.execute("SELECT id FROM sections WHERE note_id = 'r'").fetchone()[0]
    ]


def test_a_word_longer_than_the_stemmer_reads_is_its_own_index_term() -> None:
    # FTS5's Porter stemmer leaves tokens of more than 64 bytes as they are (a hex dump,
    # minified code); index_term does the same without keeping them in its cache.
    for length in (63, 64, 65, 200):
        word = "a" * (length - 3) + "ing"
        assert index_term(word) == tokenize(word)[0]
    assert index_term("a" * 197 + "ing") == "a" * 197 + "ing"


def test_words_are_split_like_the_index_but_not_stemmed() -> None:
    text = "Notes on iOS: restoring io.BytesIO buffers"
    assert [index_term(word) for word in words(text)] == tokenize(text)
    assert words(text) == ["notes", "on", "ios", "restoring", "io", "bytesio", "buffers"]
    assert tokenize("ios io") == ["io", "io"]
    # Names are told by words: Python's io module does not make a prompt about iOS.
    assert named_technologies("read bytes with io.BytesIO") == ()
    assert named_technologies("an iOS share sheet") == ("ios",)


def test_fts_query_quotes_every_term_so_operators_stay_text() -> None:
    assert fts_query(["near(", "or", 'a"b']) == '"near(" OR "or" OR "a""b"'


def test_pasted_code_and_quoted_text_become_phrases_split_where_fts5_splits() -> None:
    assert code_phrases("why does os.path.join drop my first arg") == ['"os path join"']
    assert code_phrases("set shared_buffers in postgresql.conf") == [
        '"shared buffers"',
        '"postgresql conf"',
    ]
    assert code_phrases('got KeyError and "permission denied (publickey)"') == [
        '"keyerror"',
        '"permission denied publickey"',
    ]
    assert code_phrases("run `git rebase -i` and pass --no-verify") == [
        '"git rebase i"',
        '"no verify"',
    ]
    assert code_phrases("how do I make a nice picture of it") == []
    assert code_phrases('the error "NEAR(a b) OR *c"') == ['"near a b or c"']  # plain words


def test_a_revision_is_a_name() -> None:
    """ "HEAD~2 vs HEAD^2" searched "head" alone, in a notebook where every page says HEAD."""
    assert code_phrases("HEAD~2 vs HEAD^2, and main~3") == ['"head 2"', '"main 3"']
    assert code_phrases("is x^2 or n~3 faster") == []  # single letters: no name


def test_a_word_quoted_as_code_is_a_name_even_if_a_stop_word() -> None:
    """ "`once` vs `on`" searched "vs", "event", "listeners": the names were dropped as stop
    words, and a note titled "… vs …" came first."""
    assert prompt_terms("`once` vs `on` for event listeners") == [
        "once",
        "on",
        "event",
        "listeners",
    ]
    assert code_phrases("`once` vs `on` for event listeners") == []  # each in nearly every section
    assert prompt_terms("Promise.any vs Promise.all") == ["promise", "any", "all"]
    assert prompt_terms('what does "the quick" mean') == ["quick", "mean"]  # quoted prose


def test_abbreviations_and_stop_words_alone_are_no_code() -> None:
    """ "e.g." matched 124 of the Python notebook's sections as the phrase "e g"."""
    assert code_phrases("use a cache e.g. redis, i.e. in memory, and/or a file") == []
    assert code_phrases("`and` binds tighter than `or` in `re.sub`") == ['"re sub"']
    assert prompt_terms("`and` binds tighter than `or`") == ["and", "binds", "tighter", "or"]


@pytest.mark.parametrize(
    "prompt",
    ["x" * 1_000_000, "a_" * 500_000, "a.b " * 250_000, "KeyErro" * 150_000],
    ids=["one-word", "underscores", "dotted", "camel"],
)
def test_huge_prompts_yield_few_short_phrases(prompt: str) -> None:
    # Once a scan retried every position of a 1 MB word (minutes, and the engine's search
    # threads with it). What is asserted is the output's bound; the pattern's linearity is what
    # lets this test end at all.
    phrases = code_phrases(prompt)
    assert len(phrases) <= MAX_PHRASES
    assert all(len(phrase.split()) <= MAX_PHRASE_TOKENS for phrase in phrases)
