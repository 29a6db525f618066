"""What the reader gets of a sent note: its best section's excerpt, and its second section's
when the prompt reaches that one at least half as well (search/excerpts.py), all within the
10,000 characters Claude Code hands a model whole (answers.within_context). Through `recall`
and `explain` over a real SQLite index with the deterministic embedder, and the rules
themselves on made-up sections."""

from __future__ import annotations

from conftest import OPEN, add_note, make_settings
from trilium_recall.explained import print_explained
from trilium_recall.notes.records import SectionHit
from trilium_recall.notes.sections import split_note
from trilium_recall.search.answers import (
    CONTEXT_CHARS,
    TITLE_CHARS,
    Passage,
    RecallRequest,
    RecallResult,
    render_passages,
    within_context,
)
from trilium_recall.search.candidates import Candidate
from trilium_recall.search.excerpts import (
    EXCERPT_CHARS,
    SECOND_SECTION_MARK,
    SECOND_SECTION_SHARE,
    excerpt,
    passage_text,
    second_sections,
)
from trilium_recall.search.null_bank import GenericPrompts
from trilium_recall.search.recall import recall

INTRO = "Restic snapshots of the home server go to the garage disk; a restore is tried monthly."
RESTORE = "To restore a restic snapshot mount the repository and copy the folder back."


def _generic(embedder) -> GenericPrompts:
    prompts = ["fix the failing unit test", "what is the capital of france"]
    return GenericPrompts(prompts, embedder.queries(prompts))


def test_a_note_goes_with_its_second_section_when_the_prompt_reaches_it_as_well(
    store, embedder, tmp_path, capsys
) -> None:
    """A chapter in two sections with the prompt's words in both: the passage holds both in
    the note's order, shown under the first one's heading, the second named under its own;
    `explain` says which section went along and why."""
    sections = [("Backups", INTRO), ("Backups › Restore", RESTORE)]
    add_note(store, embedder, "bk", "Backups", sections)
    add_note(store, embedder, "ck", "Cooking", [("Cooking", "Boil the pasta in salted water.")])
    request = RecallRequest("restic snapshot restore repository")
    found = recall(store, embedder, _generic(embedder), make_settings(tmp_path), request, gate=OPEN)
    [passage] = [p for p in found.passages if p.note_id == "bk"]
    assert passage.heading == "Backups"  # where the text starts
    assert passage.text == f"{INTRO}\n\nSection: Backups › Restore\n{RESTORE}"
    assert found.trace is not None
    [went] = found.trace.to_json()["second_sections"]
    assert (went["note_id"], went["heading"], went["ordinal"]) == ("bk", "Backups", 0)
    assert SECOND_SECTION_SHARE <= went["share"] <= 1
    print_explained(found)
    shown = capsys.readouterr().out
    assert 'SENT 1 also holds its section "Backups" (section 1 of the note)' in shown


def _section(
    section_id: int, note_id: str, score: float, text: str = "", ordinal: int = 0
) -> Candidate:
    hit = SectionHit(
        section_id, "default", note_id, note_id, "other", (), note_id, text, None, ordinal
    )
    return Candidate(hit, None, None, None, None, 0.9, None, (), 0.5, score, 1.0, score)


def test_the_second_section_is_the_notes_next_best_and_only_at_half_the_sent_ones_score() -> None:
    best = _section(1, "a", score=0.5)
    near, weaker = _section(2, "a", score=0.3), _section(3, "a", score=0.28)
    other_best = _section(5, "b", score=0.5)
    far = _section(4, "b", score=0.5 * SECOND_SECTION_SHARE - 0.01)
    unsent = _section(6, "c", score=0.49)
    seconds = second_sections([best, other_best], [best, near, weaker, other_best, far, unsent])
    assert list(seconds) == [("default", "a")]  # b's other section is too weak; c is not sent
    assert seconds[("default", "a")].section is near
    assert seconds[("default", "a")].share == 0.3 / 0.5


def test_the_share_is_of_the_sent_sections_own_score_and_a_note_without_one_goes_alone() -> None:
    """A summary standing in for its source is sent with the source's score: the share is
    read against the summary section's own. A day note found only by its date scores 0."""
    summary, its_other = _section(1, "s", score=0.2), _section(2, "s", score=0.15)
    standing_in = _section(1, "s", score=0.9)  # the same section, sent with another score
    [second] = second_sections([standing_in], [summary, its_other]).values()
    assert second.section is its_other and second.share == 0.15 / 0.2
    day, evening = _section(3, "d", score=0.0), _section(4, "d", score=0.0)
    assert second_sections([day], [day, evening]) == {}


def test_a_second_section_the_first_excerpt_already_holds_is_not_repeated() -> None:
    """Sections of a chapter overlap a little: a second one that is all overlap adds nothing."""
    first = _section(1, "a", 0.5, text=f"{INTRO} {RESTORE}", ordinal=0)
    repeat = _section(2, "a", 0.4, text=f"  {RESTORE}\n", ordinal=3)
    assert passage_text(first, {}, repeat) == ("a", first.hit.text)
    assert passage_text(first, {}, None) == ("a", first.hit.text)


def test_a_second_section_goes_in_the_notes_order_with_a_mark_where_text_is_left_out() -> None:
    best = _section(1, "a", 0.5, text=RESTORE, ordinal=4)
    earlier = _section(2, "a", 0.4, text=INTRO, ordinal=1)
    assert passage_text(best, {}, earlier)[1] == f"{INTRO}\n\n{SECOND_SECTION_MARK}\n\n{RESTORE}"
    following = _section(3, "a", 0.4, text=INTRO, ordinal=5)  # the next piece: nothing left out
    assert passage_text(best, {}, following)[1] == f"{RESTORE}\n{INTRO}"


def test_two_pieces_of_one_long_section_read_as_one_text() -> None:
    """The splitter carries a long section's last lines into its next piece; sent together,
    the two read as the section's own text, whichever piece scored best, whether it was cut
    between lines or inside a paragraph."""
    lines = [f"Step {i}: run restic check, then prune." for i in range(150)]
    sentences = [f"Step {i} runs restic check." for i in range(150)]
    cases = [
        ("".join(f"<p>{line}</p>" for line in lines), "\n".join(lines)),
        ("<p>" + " ".join(sentences) + "</p>", " ".join(sentences)),
    ]
    for html, plain in cases:
        first, following = split_note("Restore", "text", "text/html", html)[:2]
        assert len(first.text) < EXCERPT_CHARS and len(following.text) < EXCERPT_CHARS
        a = _section(1, "a", 0.5, text=first.text, ordinal=first.ordinal)
        b = _section(2, "a", 0.4, text=following.text, ordinal=following.ordinal)
        for best, second in ((a, b), (b, a)):
            _, text = passage_text(best, {}, second)
            assert text.startswith(first.text) and text.endswith(following.text)
            assert text in plain  # nothing said twice, nothing added between the two


def test_an_excerpt_cut_around_its_snippet_opens_on_a_whole_word() -> None:
    """With no sentence start near enough, the excerpt opens at the next word, not inside one
    ("… e fading will not work" read as a typo)."""
    text = " ".join(f"word{i:04d}" for i in range(400))  # no sentence ends; 9 characters a word
    around = (2003, 2030)  # a quarter of the excerpt before it falls inside a word
    assert text[around[0] - EXCERPT_CHARS // 4 - 1] != " "
    cut = excerpt(text, around=around)
    body = cut.removeprefix("… ").removesuffix(" …")
    at = text.find(body)
    assert at > 0 and text[at - 1] == " " and text[around[0] : around[1]] in body


def _passage(note_id: str, text: str) -> Passage:
    return Passage("default", note_id, note_id, "Notes", "other", note_id, text, 0.5, "")


def _pairs(texts: list[tuple[str, str]]) -> list[tuple[Passage, Passage]]:
    return [
        (_passage(str(n), full), _passage(str(n), alone)) for n, (full, alone) in enumerate(texts)
    ]


def test_the_hook_context_stays_whole_for_claude_code_what_matters_least_going_first() -> None:
    """Claude Code hands the model a 2 KB preview of a hook context over 10,000 characters.
    Three passages: the last one's second section goes first. Five: the fourth and fifth,
    which matter least, go before the first three lose anything."""
    long = "w" * 1800
    both = f"{long}\n\n{SECOND_SECTION_MARK}\n\n{long}"
    three = _pairs([(both, long)] * 3)
    sent = within_context(three)
    assert [p.text for p in sent] == [both, both, long]
    assert len(RecallResult("sent", sent).context) <= CONTEXT_CHARS
    five = _pairs([(both, long)] * 2 + [(long, long)] * 3)
    assert [p.text for p in within_context(five)] == [both, both, long]
    many = _pairs([(long, long)] * 10)
    kept = within_context(many)
    assert 1 < len(kept) < 10 and kept == [full for full, _ in many[: len(kept)]]
    assert len(RecallResult("sent", [*kept, many[len(kept)][0]]).context) > CONTEXT_CHARS


def test_the_context_is_counted_as_claude_code_counts_it() -> None:
    """JavaScript counts UTF-16 units: a character outside the BMP (an emoji) counts two."""
    emoji, other = _passage("a", "🗂" * 4900), _passage("b", "a short note " * 8)
    both = RecallResult("sent", [emoji, other]).context
    assert len(both) < CONTEXT_CHARS < len(both.encode("utf-16-le")) // 2
    assert within_context([(emoji, emoji), (other, other)]) == [emoji]


def test_a_search_sends_what_fits_and_explain_names_only_the_second_sections_that_went(
    store, embedder, tmp_path
) -> None:
    """Ten passages asked for, each note with two sections the prompt reaches alike: what goes
    fits the hook's context, the best passages keep their second sections, and the trace
    names a second section for exactly the passages that hold one."""
    for n in range(5):  # five notes, each about 2,400 characters with its second section
        body = " ".join(
            f"Restic restore drill {n} step {i} copies a snapshot back." for i in range(22)
        )
        more = " ".join(
            f"Snapshot {i} of drill {n} comes back by restic restore." for i in range(22)
        )
        add_note(store, embedder, f"n{n}", f"Drill {n}", [("Drill", body), ("Drill › More", more)])
    settings = make_settings(tmp_path, max_passages=10)
    request = RecallRequest("restic restore drill snapshot")
    found = recall(store, embedder, _generic(embedder), settings, request, gate=OPEN)
    assert 1 <= len(found.passages) < 10 and len(found.context) <= CONTEXT_CHARS
    assert found.trace is not None
    with_second = {p.note_id for p in found.passages if "Section: Drill › More" in p.text}
    assert {key[1] for key in found.trace.second_sections} == with_second
    assert found.passages[0].note_id in with_second and len(with_second) < len(found.passages)


def test_two_sections_apart_in_the_note_are_never_joined_as_one_text() -> None:
    """Only neighbouring pieces share carried lines: two sections further apart that happen to
    end and begin alike ("See also: restic docs") keep the mark for what lies between."""
    shared = "See also: the restic documentation."
    a = _section(1, "a", 0.5, text=f"{INTRO}\n{shared}", ordinal=1)
    b = _section(2, "a", 0.4, text=f"{shared}\n{RESTORE}", ordinal=3)
    _, text = passage_text(a, {}, b)
    assert text == f"{INTRO}\n{shared}\n\n{SECOND_SECTION_MARK}\n\n{shared}\n{RESTORE}"


def test_a_long_title_is_shown_cut_in_the_heading_and_the_path() -> None:
    """A web clip's 1,000-character title was printed whole twice over a one-line body."""
    title = "Clipped page " + "very long words " * 62
    passage = Passage("default", "clip", title, "Web", "other", title[:200], "Body.", 0.5, "")
    shown = render_passages([passage])
    head, path = shown.splitlines()[:2]
    assert head == "## " + title[: TITLE_CHARS - 1] + "…"
    assert path == f"Path: Web › {title[: TITLE_CHARS - 1]}…  (area: other)"
    assert len(shown) < 3 * TITLE_CHARS + 100  # heading, path and section line, then the body
    assert shown.endswith("\n\nBody.")
