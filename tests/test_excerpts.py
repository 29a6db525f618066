"""What the reader gets of a sent note: its best section's excerpt, and its second section's
when the prompt reaches that one nearly as well (search/excerpts.py). Through `recall` over a
real SQLite index with the deterministic embedder, and the choice itself on made-up scores."""

from __future__ import annotations

from conftest import OPEN, add_note, make_settings
from trilium_recall.notes.records import SectionHit
from trilium_recall.notes.sections import split_note
from trilium_recall.search.answers import (
    CONTEXT_CHARS,
    Passage,
    RecallRequest,
    RecallResult,
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
    store, embedder, tmp_path
) -> None:
    """A chapter split in two: the prompt's words are in both, so the passage holds both, the
    second under its own heading after the mark."""
    sections = [("Backups", INTRO), ("Backups › Restore", RESTORE)]
    add_note(store, embedder, "bk", "Backups", sections)
    add_note(store, embedder, "ck", "Cooking", [("Cooking", "Boil the pasta in salted water.")])
    request = RecallRequest("restic snapshot restore repository")
    found = recall(store, embedder, _generic(embedder), make_settings(tmp_path), request, gate=OPEN)
    [passage] = [p for p in found.passages if p.note_id == "bk"]
    assert passage.heading == "Backups › Restore"  # the best section: its excerpt is the anchor
    # in the note's order, each part under its heading (the one shown above changes twice)
    assert passage.text == f"Section: Backups\n{INTRO}\n\nSection: Backups › Restore\n{RESTORE}"
    assert found.trace is not None  # explain names the section that went along
    [went] = found.trace.to_json()["second_sections"]
    assert (went["note_id"], went["heading"]) == ("bk", "Backups")


def _section(
    section_id: int, note_id: str, score: float, text: str = "", ordinal: int = 0
) -> Candidate:
    hit = SectionHit(
        section_id, "default", note_id, note_id, "other", (), note_id, text, None, ordinal
    )
    return Candidate(hit, None, None, None, None, 0.9, None, (), 0.5, score, 1.0, score)


def test_the_second_section_is_the_notes_next_best_and_only_when_nearly_as_strong() -> None:
    best = _section(1, "a", score=0.5)
    near, weaker = _section(2, "a", score=0.3), _section(3, "a", score=0.28)
    far = _section(4, "b", score=0.5 * SECOND_SECTION_SHARE - 0.01)
    other_best = _section(5, "b", score=0.5)
    unsent = _section(6, "c", score=0.49)
    every = [best, near, weaker, other_best, far, unsent]
    seconds = second_sections([best, other_best], every)
    assert seconds == {("default", "a"): near}  # b's other section is too weak; c is not sent


def test_a_second_section_the_first_excerpt_already_holds_is_not_repeated() -> None:
    """Sections of a chapter overlap a little: a second one that is all overlap adds nothing."""
    first = _section(1, "a", 0.5, text=f"{INTRO} {RESTORE}")
    repeat = _section(2, "a", 0.4, text=f"  {RESTORE}\n")
    assert passage_text(first, {}, repeat) == first.hit.text
    assert passage_text(first, {}, None) == first.hit.text


def test_a_second_section_goes_in_the_notes_order_with_a_mark_where_text_is_left_out() -> None:
    best = _section(1, "a", 0.5, text=RESTORE, ordinal=4)
    earlier = _section(2, "a", 0.4, text=INTRO, ordinal=1)
    assert passage_text(best, {}, earlier) == f"{INTRO}\n\n{SECOND_SECTION_MARK}\n\n{RESTORE}"
    following = _section(3, "a", 0.4, text=INTRO, ordinal=5)  # the next piece: nothing left out
    assert passage_text(best, {}, following) == f"{RESTORE}\n{INTRO}"


def _passage(note_id: str, text: str) -> Passage:
    return Passage("default", note_id, note_id, "Notes", "other", note_id, text, 0.5, "")


def test_the_hook_context_stays_whole_for_claude_code_seconds_going_first() -> None:
    """Claude Code hands the model a 2 KB preview of a hook context over 10,000 characters: a
    second section goes first (the last passage's first), then the last passages."""
    long = "w" * 1800
    choices = [
        (_passage(n, f"{long}\n\n{SECOND_SECTION_MARK}\n\n{long}"), _passage(n, long))
        for n in ("a", "b", "c")
    ]
    sent = within_context(choices)
    assert [p.text == full.text for p, (full, _) in zip(sent, choices, strict=True)] == [
        True,
        True,
        False,
    ]
    assert len(RecallResult("sent", sent).context) <= CONTEXT_CHARS
    many = [(_passage(str(n), long), _passage(str(n), long)) for n in range(10)]
    kept = within_context(many)
    assert 1 < len(kept) < 10 and kept == [full for full, _ in many[: len(kept)]]
    assert len(RecallResult("sent", kept).context) <= CONTEXT_CHARS
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
    """With ten passages asked for, what goes fits the hook's context, and the trace keeps a
    second section only for the passages that carry one."""
    for n in range(10):
        body = " ".join(f"Restic restore drill {n} step {i} copies a snapshot." for i in range(40))
        add_note(
            store, embedder, f"n{n}", f"Drill {n}", [("Drill", body), ("Drill › More", body[::-1])]
        )
    settings = make_settings(tmp_path, max_passages=10)
    request = RecallRequest("restic restore drill snapshot")
    found = recall(store, embedder, _generic(embedder), settings, request, gate=OPEN)
    assert 1 <= len(found.passages) < 10 and len(found.context) <= CONTEXT_CHARS
    assert found.trace is not None
    with_second = {p.note_id for p in found.passages if SECOND_SECTION_MARK in p.text}
    assert {key[1] for key in found.trace.second_sections} == with_second


def test_two_pieces_of_one_long_section_read_as_one_text() -> None:
    """The splitter carries a long section's last lines into its next piece; sent together,
    the two read as one text, those lines once, whichever piece scored best."""
    paragraphs = [f"<p>Step {i}: run restic check, then prune.</p>" for i in range(150)]
    first, following = split_note("Restore", "text", "text/html", "".join(paragraphs))[:2]
    assert len(first.text) < EXCERPT_CHARS and len(following.text) < EXCERPT_CHARS
    carried = following.text.splitlines()[0]
    assert carried in first.text.splitlines()  # what the splitter carried over
    a = _section(1, "a", 0.5, text=first.text, ordinal=first.ordinal)
    b = _section(2, "a", 0.4, text=following.text, ordinal=following.ordinal)
    whole = "\n".join(f"Step {i}: run restic check, then prune." for i in range(150))
    for best, second in ((a, b), (b, a)):
        text = passage_text(best, {}, second)
        assert whole.startswith(text) and text.endswith(following.text.splitlines()[-1])


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
