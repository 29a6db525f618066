"""The search pipeline over a real SQLite index (FTS5 + vectors) with a deterministic embedder.

The gate's own decisions are tested in test_gate.py; here a permissive or a strict gate is
passed explicitly, so these tests pin the ranking, fusion, summary and session steps.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import OPEN, add_note, make_settings
from trilium_recall.errors import UnknownInstance
from trilium_recall.index import sent_marks
from trilium_recall.notes.records import SectionHit
from trilium_recall.search.answers import RecallRequest, RecallResult, silence_reason
from trilium_recall.search.candidates import FOLDERS_ONLY, Candidate
from trilium_recall.search.excerpts import EXCERPT_CHARS
from trilium_recall.search.gate import FITTED, CandidateOrder
from trilium_recall.search.hybrid import Ranking, gather, in_order, search
from trilium_recall.search.null_bank import TWIN_COSINE, GenericPrompts
from trilium_recall.search.phrasing import (
    everyday_words,
    option_bundles,
    quoted_words,
    without_phrasing,
)
from trilium_recall.search.rankings import distinctive_terms, note_ranking, rrf
from trilium_recall.search.recall import recall

# Passes no prompt on its score, only the strong-keyword rule (3 terms, 60 % of the weight).
KEYWORDS_ONLY = replace(FITTED, bias=-100.0, keyword_terms=3, keyword_coverage=0.6)


@pytest.fixture
def generic(embedder) -> GenericPrompts:
    prompts = ["fix the failing unit test", "what is the capital of france"]
    return GenericPrompts(prompts, embedder.queries(prompts))


def test_weighted_rrf_sums_weight_over_k_plus_rank() -> None:
    fused = rrf([([1, 2, 3], 1.0), ([3, 1], 2.0)], k=5)
    assert fused == pytest.approx({1: 1 / 6 + 2 / 7, 2: 1 / 7, 3: 1 / 8 + 2 / 6})
    assert sorted(fused, key=fused.__getitem__, reverse=True) == [3, 1, 2]


def test_fts5_operators_and_quotes_in_prompt_do_not_break_search(
    store, embedder, generic, tmp_path
) -> None:
    add_note(store, embedder, "n1", "Backups", [("Backups", "restic snapshots every night")])
    settings = make_settings(tmp_path)
    asked = {
        '"NEAR(" OR *': ["near"],
        "restic AND NOT ^*": ["restic"],
        'col:umn "unterminated': ["col", "umn", "unterminated"],
        "(((": [],
        "\x00\x1f": [],
    }
    for prompt, terms in asked.items():
        result = search(store, embedder, generic, settings, prompt, gate=OPEN)
        assert result.trace.keyword.terms == terms, prompt
        found = store.section_hits([i for i, _ in result.trace.keyword.hits])
        assert [h.note_id for h in found.values()] == (["n1"] if "restic" in prompt else [])


def _corpus(store, embedder) -> None:
    # The same words in another order: an equal match for the bag-of-words embedder and bm25,
    # and not one text (only one copy of a text is sent).
    words = "restic backup restore snapshot nightly repository"
    texts = [words, words.replace("snapshot nightly", "nightly snapshot")]
    texts.append(" ".join(reversed(words.split())))
    for (note_id, area), text in zip(
        [("wiki1", "wiki"), ("src1", "sources"), ("jour1", "journal")], texts, strict=True
    ):
        add_note(store, embedder, note_id, "Restic backups", [("Restic backups", text)], area=area)
    add_note(
        store,
        embedder,
        "other1",
        "Cooking",
        [("Cooking", "lasagne recipe with bechamel sauce and pasta sheets")],
    )


def test_area_weight_orders_equal_matches_wiki_then_sources_then_journal(
    store, embedder, generic, tmp_path
) -> None:
    _corpus(store, embedder)
    result = search(
        store, embedder, generic, make_settings(tmp_path), "restic backup restore", gate=OPEN
    )
    assert [(c.hit.note_id, c.weight) for c in result.passages] == [
        ("wiki1", 1.0),
        ("src1", 0.95),
        ("jour1", 0.9),
    ]


def test_custom_area_weights_change_the_order(store, embedder, generic, tmp_path) -> None:
    _corpus(store, embedder)
    settings = make_settings(tmp_path, area_weights="journal=1.5")
    result = search(store, embedder, generic, settings, "restic backup restore", gate=OPEN)
    assert [c.hit.note_id for c in result.passages] == ["jour1", "wiki1", "src1"]


def test_a_prompt_the_gate_rejects_sends_nothing_and_says_why(
    store, embedder, generic, tmp_path
) -> None:
    _corpus(store, embedder)
    strict = replace(FITTED, bias=-100.0)
    result = search(store, embedder, generic, make_settings(tmp_path), "restic", gate=strict)
    assert result.passages == []
    assert result.trace.verdict is not None and not result.trace.verdict.about_notes
    assert {c.reason for c in result.trace.candidates} == {"prompt is not about the notes"}


def test_a_strong_multi_term_keyword_match_passes_a_rejected_prompt(
    store, embedder, generic, tmp_path
) -> None:
    add_note(store, embedder, "k1", "Ops", [("Ops", "zfs scrub weekly on tank pool")])
    for i in range(5):
        add_note(store, embedder, f"p{i}", f"Pool {i}", [(f"Pool {i}", "pool layout notes")])
    settings = make_settings(tmp_path)
    passed = search(store, embedder, generic, settings, "zfs scrub tank", gate=KEYWORDS_ONLY)
    assert [c.hit.note_id for c in passed.passages] == ["k1"]
    assert passed.trace.verdict is not None
    assert passed.trace.verdict.reason == "keywords: 3 terms carry 100% of the weight"
    two_terms = search(store, embedder, generic, settings, "zfs scrub mirror", gate=KEYWORDS_ONLY)
    assert two_terms.passages == []


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


def test_source_hit_is_shown_as_its_wiki_summary(store, embedder, generic, tmp_path) -> None:
    _summary_pair(
        store, embedder, "vendor call about storage pricing and renewal terms discussed at length"
    )
    settings = make_settings(tmp_path, area_weights="sources=2.0")
    result = search(store, embedder, generic, settings, "storage pricing renewal vendor", gate=OPEN)
    assert [(c.hit.note_id, c.stands_for) for c in result.passages] == [("sum1", "raw1")]
    assert result.trace.substitutions == [
        "Vendor call transcript: shown as its summary Vendor call summary"
    ]


def test_source_keeps_its_place_when_it_holds_the_detail(
    store, embedder, generic, tmp_path
) -> None:
    _summary_pair(
        store, embedder, "the discount code was ZX42 valid until march with quota 7 terabytes"
    )
    result = search(
        store,
        embedder,
        generic,
        make_settings(tmp_path),
        "discount code ZX42 quota terabytes",
        gate=OPEN,
    )
    assert [(c.hit.note_id, c.stands_for, c.weight) for c in result.passages] == [
        ("raw1", None, 1.0),
        ("sum1", None, 1.0),
    ]
    assert result.trace.substitutions[0].startswith("Vendor call transcript: kept the source")


def test_at_most_limit_passages_best_section_per_note(store, embedder, generic, tmp_path) -> None:
    for i in range(6):
        add_note(
            store,
            embedder,
            f"n{i}",
            f"Kubernetes note {i}",
            [
                (f"Kubernetes note {i}", f"kubectl rollout restart deployment web-{i}"),
                (f"Kubernetes note {i} › more", f"kubectl rollout restart deployment api-{i}"),
            ],
        )
    result = search(
        store, embedder, generic, make_settings(tmp_path), "kubectl rollout restart", gate=OPEN
    )
    assert len(result.passages) == 3
    assert len({c.hit.note_id for c in result.passages}) == 3
    assert len(result.trace.candidates) == 6  # one per note, though each has two sections


def test_a_text_repeated_in_several_notes_is_sent_once(store, embedder, generic, tmp_path) -> None:
    """Man pages repeat a shared section word for word (git's MERGE STRATEGIES under merge, pull
    and rebase): three copies filled the three places."""
    shared = "ort is the default merge strategy; recursive resolves two heads with a 3-way merge"
    copies = {"merge", "pull", "rebase"}
    for name in sorted(copies):
        title = f"git-{name}: MERGE STRATEGIES"
        add_note(store, embedder, name, title, [(title, shared)])
    own = [("Merge options", "git merge -X ours keeps our side of a conflicting 3-way merge")]
    add_note(store, embedder, "options", "git-merge: OPTIONS", own)
    prompt = "which merge strategy does a 3-way merge, and is ort the default"
    result = search(store, embedder, generic, make_settings(tmp_path), prompt, gate=OPEN)
    sent = [c.hit.note_id for c in result.passages]
    assert len(copies & set(sent)) == 1 and "options" in sent and len(sent) == 2
    assert len([c for c in result.trace.candidates if c.passed]) == 4  # each passed, one is sent


def test_a_long_section_is_sent_as_the_text_around_its_matched_snippet(
    store, embedder, generic, tmp_path
) -> None:
    """The excerpt of a section longer than EXCERPT_CHARS is cut around the snippet that
    matched (where it sits comes with the search's result), not from the section's start."""
    filler = " ".join(f"Step {i} of the kitchen list counts plates and cups." for i in range(60))
    tail = "Restic prune keeps seven daily snapshots and twelve monthly ones."
    add_note(store, embedder, "long", "Household", [("Household", f"{filler} {tail}")])
    request = RecallRequest("restic prune daily monthly snapshots")
    found = recall(store, embedder, generic, make_settings(tmp_path), request, gate=OPEN)
    text = found.passages[0].text
    assert len(f"{filler} {tail}") > EXCERPT_CHARS >= len(text.strip("… "))
    assert tail in text and text.startswith("… ") and "Step 0 " not in text


def test_session_sends_a_note_once_and_other_sessions_still_get_it(
    store, embedder, generic, tmp_path
) -> None:
    _corpus(store, embedder)
    settings = make_settings(tmp_path, max_passages=1)

    def ask(session: str | None, limit: int | None = None) -> list[str]:
        request = RecallRequest("restic backup restore", session_id=session, limit=limit)
        found = recall(store, embedder, generic, settings, request, gate=OPEN)
        return [p.note_id for p in found.passages]

    # The next note is not moved up in its place: asked again, the session gets nothing new.
    assert [ask("s1"), ask("s1"), ask("s2"), ask(None)] == [["wiki1"], [], ["wiki1"], ["wiki1"]]
    # A note the session has not had, among the best, still comes.
    assert [ask("s1", limit=2), ask("s1", limit=2)] == [["src1"], []]


def test_a_folder_keeps_its_place_and_sends_nothing(store, embedder, generic, tmp_path) -> None:
    """A note that is only its title with notes filed under it ("Journal", "2026") sent its
    title as a passage; a leaf that is only its title is sent: where it is filed says when."""
    add_note(store, embedder, "year", "Restic 2026", [("Restic 2026", "Restic 2026")])
    child = [("Restic restore drill", "restic restore drill notes from the 2026 test")]
    add_note(store, embedder, "drill", "Restic restore drill", child, parents=("year",))
    add_note(store, embedder, "task", "Restic 2026 task", [("Restic 2026 task",) * 2])
    add_note(store, embedder, "other", "Restic misc", [("Restic misc", "restic misc 2026")])
    settings = make_settings(tmp_path, max_passages=3)
    result = search(store, embedder, generic, settings, "restic 2026", gate=OPEN)
    folder = next(c for c in result.trace.candidates if c.hit.note_id == "year")
    assert folder.passed and folder.folder and folder.reason.endswith("not sent")
    # Its bare title, closest to the prompt, does not vouch for it: the rest are read.
    signals = result.trace.signals
    assert signals is not None and signals.top_cosine < folder.cosine
    assert folder.to_json()["folder"] is True  # explain --json tells it from a leaf
    sent = [c.hit.note_id for c in result.passages]
    assert "year" not in sent and "task" in sent and len(sent) < 3
    assert store.has_children("default", "year") and not store.has_children("default", "task")
    assert not store.has_children("default", "y_ar") and not store.has_children("default", "YEAR")
    add_note(store, embedder, "sub", "Subtask", [("Subtask", "a step")], parents=("task",))
    assert store.has_children("default", "task")  # read again after a write to the notes


def test_a_silence_says_when_what_passed_was_only_folders(
    store, embedder, generic, tmp_path
) -> None:
    """Doctor and the log said "already sent in this session" of a folder that passed alone."""
    add_note(store, embedder, "year", "Restic 2026", [("Restic 2026", "Restic 2026")])
    child = [("Restic restore drill", "restic restore drill notes from the 2026 test")]
    add_note(store, embedder, "drill", "Restic restore drill", child, parents=("year",))
    found = search(store, embedder, generic, make_settings(tmp_path), "restic 2026", gate=OPEN)
    folder = [c for c in found.trace.candidates if c.folder]
    others = [replace(c, passed=False) for c in found.trace.candidates if not c.folder]
    assert folder and folder[0].passed and others
    only_folders = replace(found.trace, candidates=folder + others)
    silent = RecallResult("silent", trace=only_folders)
    assert silence_reason(silent, 1200) == FOLDERS_ONLY
    sent_before = replace(found.trace, candidates=found.trace.candidates)  # the drill passed too
    reason = silence_reason(RecallResult("silent", trace=sent_before), 1200)
    assert reason == "what passed was already sent in this session"


def test_every_door_s_prompt_is_made_searchable(store, embedder, generic, tmp_path) -> None:
    """A lone surrogate (the CLI's argv, the MCP tool's JSON) failed the embedder's encoder;
    a NUL stops SQLite and FTS5."""
    _corpus(store, embedder)
    request = RecallRequest("restic\ud800 backup\x00restore")
    assert request.prompt == "restic\ufffd backup restore"
    found = recall(store, embedder, generic, make_settings(tmp_path), request, gate=OPEN)
    assert found.passages and found.trace is not None
    assert found.trace.keyword.terms == ["restic", "backup", "restore"]


def test_recall_skips_before_searching_and_searches_what_a_person_wrote(
    store, embedder, generic, tmp_path
) -> None:
    _corpus(store, embedder)
    settings = make_settings(tmp_path)
    skipped = recall(store, embedder, generic, settings, RecallRequest("/compact"))
    assert (skipped.skipped, skipped.passages, skipped.context) == ("slash command", [], "")
    envelope = "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"
    machine = recall(store, embedder, generic, settings, RecallRequest(envelope))
    assert machine.skipped == "machine: task-notification"
    reminder = RecallRequest("<system-reminder>x</system-reminder>\nrestic")
    reminded = recall(store, embedder, generic, settings, reminder)
    assert reminded.trace is not None and reminded.trace.keyword.terms == ["restic"]


def test_unknown_instance_is_a_clear_error(store, embedder, generic, tmp_path) -> None:
    with pytest.raises(UnknownInstance, match="nope"):
        settings = make_settings(tmp_path)
        recall(store, embedder, generic, settings, RecallRequest("restic", instance="nope"))


def test_deadline_passed_returns_nothing_and_marks_nothing(
    store, embedder, generic, tmp_path
) -> None:
    _corpus(store, embedder)
    settings = make_settings(tmp_path)
    asked = RecallRequest("restic backup", session_id="s")
    late = recall(store, embedder, generic, settings, asked, deadline=0.0)
    assert (late.passages, late.context) == ([], "")
    assert sent_marks.already_sent(store, "s", 3600) == set()


def test_a_section_holding_the_prompt_s_code_phrase_ranks_first_and_explain_says_so(
    store, embedder, generic, tmp_path
) -> None:
    """Issue 23, Build 8: `shared_buffers` is the phrase "shared buffers"; a note that only has
    both words apart ranks below the one that holds the identifier."""
    add_note(store, embedder, "apart", "Buffers", [("Buffers", "buffers are shared by workers")])
    add_note(store, embedder, "exact", "Postgres", [("Postgres", "set shared_buffers to 4GB")])
    add_note(store, embedder, "other", "Cache", [("Cache", "the cache is shared too")])
    settings = make_settings(tmp_path)
    result = search(store, embedder, generic, settings, "what should shared_buffers be", gate=OPEN)
    assert result.passages[0].hit.note_id == "exact"
    assert result.trace.keyword.phrases == ['"shared buffers"']
    shown = {c["note_id"]: c for c in result.trace.to_json()["candidates"]}
    assert shown["exact"]["phrase_rank"] == 1 and shown["apart"]["phrase_rank"] is None
    assert result.trace.signals is not None and result.trace.signals.phrase


def test_notes_rank_by_the_bm25_of_their_sections_summed(store, embedder) -> None:
    """Issue 23: a note whose sections match the prompt's words between them outranks a note
    with the single best-matching section."""
    add_note(store, embedder, "whole", "Disk quotas", [("Soft", "a"), ("Hard", "b")])
    add_note(store, embedder, "single", "Limits", [("Limits", "c")])
    hits = store.section_hits(store.section_ids_of("default", ["whole", "single"]))
    soft, hard, single = sorted(hits, key=lambda i: (hits[i].note_id != "whole", i))
    keyword = [(single, -3.0), (soft, -2.0), (hard, -1.5)]  # bm25: lower is better
    assert note_ranking(keyword, hits) == {soft: 1, hard: 1, single: 2}


def test_explain_shows_the_note_ranking_and_the_signals_read_every_section(
    store, embedder, generic, tmp_path
) -> None:
    sections = [("Quota", "user quota limits on home"), ("Grace", "grace period before enforced")]
    add_note(store, embedder, "whole", "Disk quotas", sections)
    add_note(store, embedder, "single", "Quota report", [("Report", "quota report for user")])
    for n in range(20):  # so that every prompt word is rare enough to be searched for
        add_note(store, embedder, f"filler{n}", f"Garden {n}", [("Beds", f"tomato bed {n}")])
    settings = make_settings(tmp_path)
    prompt = "user quota grace period"
    gathered = gather(store, embedder, generic, settings, prompt)
    shown = {c.hit.note_id: c for c in gathered.candidates}
    assert shown["whole"].note_rank == 1 and shown["single"].note_rank == 2
    result = search(store, embedder, generic, settings, prompt, gate=OPEN)
    explained = {c["note_id"]: c["note_rank"] for c in result.trace.to_json()["candidates"]}
    assert (explained["whole"], explained["single"], explained["filler0"]) == (1, 2, None)
    # Every fused section is read, not only each note's best-scoring one.
    assert {c.hit.note_id for c in gathered.sections} >= {"whole", "single"}
    assert len([c for c in gathered.sections if c.hit.note_id == "whole"]) == 2
    assert result.trace.signals is not None
    assert result.trace.signals.top_cosine == max(c.cosine for c in gathered.sections)
    unranked = gather(store, embedder, generic, settings, prompt, ranking=Ranking(note_weight=0))
    assert all(c.note_rank is None for c in unranked.sections)


def test_the_prompt_decision_reads_unknown_words_and_the_fused_top(
    store, embedder, generic, tmp_path
) -> None:
    _corpus(store, embedder)
    settings = make_settings(tmp_path)
    prompt = "what did I write about the restic zyxwvut snapshot restore"
    result = search(store, embedder, generic, settings, prompt, gate=OPEN)
    trace, signals = result.trace, result.trace.signals
    assert signals is not None and "zyxwvut" in trace.keyword.unknown
    assert "restic" not in trace.keyword.unknown
    assert signals.unknown_share == pytest.approx(trace.keyword.coverage(trace.keyword.unknown))
    assert 0 < signals.unknown_share < 1
    best = gather(store, embedder, generic, settings, prompt).candidates
    assert signals.fused_top == pytest.approx(best[0].fused)
    shown = trace.to_json()["prompt"]
    assert "zyxwvut" in shown["unknown_terms"]
    assert shown["fused_top"] == pytest.approx(signals.fused_top, abs=1e-4)
    plain = search(store, embedder, generic, settings, "restore restic snapshot", gate=OPEN)
    assert plain.trace.signals is not None
    assert plain.trace.signals.unknown_share == 0.0
    # A command's bundled options, and the everyday words a prompt is phrased in, are no word
    # a note need hold; a name the notes lack still is.
    flagged = search(store, embedder, generic, settings, "restic restore -qvx snapshot", gate=OPEN)
    assert flagged.trace.keyword.unknown == []
    phrased = "the restic restore blows up, quick and dirty fix for kubectl?"
    assert search(store, embedder, generic, settings, phrased, gate=OPEN).trace.keyword.unknown == [
        "kubectl"
    ]
    # Nor is what the person quotes (their data: a pattern, a branch name); code is a name.
    quoted = "restic restore of the branch 'kubectl', then find \"zyxwvut\" in `qwzx`"
    found = search(store, embedder, generic, settings, quoted, gate=OPEN).trace.keyword
    assert found.unknown == ["qwzx"]
    assert {"kubectl", "zyxwvut"} <= set(found.uncounted)  # shown by `explain` and the page
    # Nor is the calendar: a question set in a month, a year or on a weekday names when.
    dated = "restic restore every Sunday since June 2024, for kubectl"
    found = search(store, embedder, generic, settings, dated, gate=OPEN).trace.keyword
    assert found.unknown == ["kubectl"]
    # An area weight orders the notes; it does not make the prompt more about them.
    weighted = make_settings(tmp_path, area_weights="wiki=2,sources=2,journal=2,other=2")
    heavier = search(store, embedder, generic, weighted, prompt, gate=OPEN).trace.signals
    assert heavier is not None and heavier.fused_top == pytest.approx(signals.fused_top)


def test_everyday_english_holds_common_words_not_names() -> None:
    words = everyday_words()
    assert {"blows", "quick", "dirty", "disable", "payload", "retention"} <= words
    assert not {"kubectl", "restic", "wireguard", "postgres", "fixme", "priya"} & words
    assert all(word.isascii() and word.islower() and word.isalpha() for word in words)


def test_a_word_no_section_holds_never_takes_the_topic_s_place_in_the_keyword_query() -> None:
    counts = {"enter": 50, "transaction": 40, "may": 30, "2024": 0}  # of 100 sections
    assert distinctive_terms(list(counts), counts, 100) == ["may", "transaction"]
    rare = {"hotel": 2, "kyoto": 0, "book": 30}  # two rare ones: searched as they are
    assert distinctive_terms(list(rare), rare, 100) == ["hotel", "kyoto"]
    none_held = {"肉怎": 0, "么做": 0, "红烧": 1, "烧肉": 1}  # of 8 sections: all held "common"
    assert distinctive_terms(list(none_held), none_held, 8) == ["红烧", "烧肉"]
    typos = {"teh": 0, "brwoser": 0, "electron": 30, "build": 40}  # not pairs: as they are
    assert distinctive_terms(list(typos), typos, 100) == ["teh", "brwoser"]


def test_the_calendar_is_no_word_a_note_need_hold() -> None:
    unknown = ["sunday", "june", "sept", "2024", "1999", "kubectl", "2150", "12345"]
    assert without_phrasing(unknown, "…") == ["kubectl", "2150", "12345"]


def test_bundled_short_options_are_told_apart_from_words() -> None:
    assert option_bundles("will `git clean -fdx` delete it? tar -xvzf a.tgz") == {"fdx", "xvzf"}
    assert option_bundles("git clean –fdx, as autocorrect writes it") == {"fdx"}
    assert option_bundles("re-run the e-mail job with --force and -m") == set()
    assert option_bundles("it failed again -sigh- and –ugh— once more") == set()


def test_quoted_text_is_told_apart_from_apostrophes() -> None:
    assert quoted_words("git grep -n 'FIXME' in 'src/app.py'") == {"fixme", "src", "app", "py"}
    assert quoted_words('KeyError: "CONFIG_PATH" and “smart quotes”') == {
        "config",  # split where FTS5 splits
        "path",
        "smart",
        "quotes",
    }
    assert quoted_words("don't know why it's 'broken' — isn't it") == {"broken"}
    assert quoted_words("the user's files and the admins' keys") == set()
    assert quoted_words("run `make test` first") == set()  # backticks mark code, not data
    assert quoted_words('a 5" screen beside a 7" tablet') == set()  # inches
    assert quoted_words("‘I don’t use restic’") == {"i", "don", "t", "use", "restic"}
    # Quotes pair left to right: a long quote (a pasted message) is left out, and its closing
    # mark opens nothing.
    long = "x " * 50
    assert quoted_words(f'error "{long}." when I run kubectl "foo"') == {"foo"}


def test_a_long_table_counts_its_keywords_around_the_matched_row_only(
    store, embedder, generic, tmp_path
) -> None:
    """Issue 23, Build 7: a long list of shortcuts matches a word of almost any prompt."""
    rows = [f"Ctrl+{chr(65 + i % 26)}{i}: tool number {i} toggles panel {i}" for i in range(120)]
    rows[60] = "Ctrl+Shift+J: export the layer as png"
    rows[110] = "Ctrl+K: crop the selection"
    add_note(store, embedder, "table", "Shortcuts", [("Shortcuts", "\n".join(rows))])
    settings = make_settings(tmp_path)
    result = search(store, embedder, generic, settings, "export layer png crop", gate=OPEN)
    table = result.trace.candidates[0]
    assert table.windowed and "crop" not in table.matched_terms
    assert set(table.matched_terms) >= {"export", "layer", "png"}
    assert result.trace.to_json()["candidates"][0]["keywords_counted_in"].startswith("text around")


def _candidate(note_id: str, score: float, cosine: float, coverage: float) -> Candidate:
    hit = SectionHit(len(note_id), "default", note_id, note_id, "other", (), note_id, "text")
    return Candidate(hit, None, None, None, None, cosine, None, (), coverage, score, 1.0, score)


ORDER = CandidateOrder(rank_weight=38.0, cosine_weight=78.0, coverage_weight=4.0)


def test_the_learned_order_lifts_a_clearly_closer_note_among_the_first_ten() -> None:
    """Issue 23, Build 9: RRF counts ranks only, so a note fused 2nd whose snippet is clearly
    closer to the prompt and holds more of its words stays 2nd unless the order reads both."""
    first = _candidate("first", score=0.5, cosine=0.85, coverage=0.2)
    closer = _candidate("closer", score=0.4, cosine=0.90, coverage=0.6)
    assert [c.hit.note_id for c in in_order([closer, first], None)] == ["first", "closer"]
    ordered = in_order([first, closer], ORDER)
    assert [c.hit.note_id for c in ordered] == ["closer", "first"]
    values = [c.order_value for c in ordered]
    assert values[0] == pytest.approx(38 / 7 + 4 * 0.6) and values[0] > values[1]


def test_only_the_first_ten_are_reordered_and_passed_candidates_come_first() -> None:
    ten = [_candidate(f"n{i}", score=1.0 - i / 100, cosine=0.8, coverage=0.1) for i in range(10)]
    eleventh = _candidate("eleventh", score=0.5, cosine=0.95, coverage=1.0)
    ordered = in_order([eleventh, *ten], ORDER)
    assert ordered[-1].hit.note_id == "eleventh" and ordered[-1].order_value is None
    assert [c.hit.note_id for c in ordered[:10]] == [f"n{i}" for i in range(10)]
    passed = replace(ten[9], passed=True)
    assert in_order([*ten[:9], passed], ORDER)[0].hit.note_id == "n9"
    assert ordered[0].to_json()["order_value"] == pytest.approx(38 / 6 + 0.4, abs=1e-3)


def test_a_question_is_searched_the_same_with_or_without_its_mark(
    store, embedder, generic, tmp_path
) -> None:
    _corpus(store, embedder)
    embedded: list[str] = []
    query = embedder.query
    embedder.query = lambda text: embedded.append(text) or query(text)
    settings = make_settings(tmp_path)
    asked = ("how do I restore restic", "how do I restore restic?", "how do I restore restic ?!")
    results = [search(store, embedder, generic, settings, prompt, gate=OPEN) for prompt in asked]
    assert embedded == ["how do I restore restic"] * 3
    ids = [[c.hit.section_id for c in r.passages] for r in results]
    assert ids[0] and ids.count(ids[0]) == 3
    search(store, embedder, generic, settings, "???", gate=OPEN)  # nothing but marks: as written
    assert embedded[-1] == "???"


def test_a_bank_prompt_that_is_the_prompt_s_twin_counts_no_closer_than_an_answer_can(
    store, embedder, generic, tmp_path
) -> None:
    """Asked word for word as a bank prompt, a prompt's margin is read against TWIN_COSINE, not
    1.0: that the question is common says nothing about whether the notes answer it."""
    add_note(store, embedder, "t1", "Tests", [("Tests", "fix the failing unit test with a mock")])
    settings = make_settings(tmp_path)
    twin = search(store, embedder, generic, settings, "fix the failing unit test", gate=OPEN)
    assert twin.trace.generic.cosine == pytest.approx(1.0)
    assert twin.trace.signals is not None and twin.trace.signals.generic_cosine == TWIN_COSINE
    shown = twin.trace.to_json()  # the page shows both: the twin, and what the margin counted
    assert (shown["generic_cosine"], shown["prompt"]["generic_cosine"]) == (1.0, TWIN_COSINE)
    other = search(store, embedder, generic, settings, "mock the clock in a unit test", gate=OPEN)
    assert other.trace.signals is not None
    assert other.trace.signals.generic_cosine == pytest.approx(other.trace.generic.cosine)
    assert other.trace.generic.cosine < TWIN_COSINE
