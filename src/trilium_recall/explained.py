"""The text `trilium-recall explain` prints (`commands` runs the search): the prompt decision
with each signal's share, this notebook's reference points, and one short block per
candidate with the reason it passed or was dropped."""

from __future__ import annotations

import math

from .search.answers import RecallResult, silence_reason
from .search.candidates import Candidate, SearchTrace, SecondSection
from .search.dates.prompt import as_said
from .search.excerpts import SECOND_SECTION_SHARE
from .search.null_bank import TWIN_COSINE
from .textclean import clip, counted


def print_searched(result: RecallResult) -> None:
    """What `trilium-recall search` prints: the passages, or why none (a skipped prompt says
    which rule skipped it, as explain does)."""
    skipped = result.status == "skipped"
    print(f"Skipped before searching: {result.skipped}" if skipped else result.text)
    if result.status == "silent":  # the notes may hold a match the gate judged off the topic
        print(f"(silent: {silence_reason(result, 0.0)}; `explain` shows why)")


def print_explained(result: RecallResult) -> None:
    """The prompt decision with each signal's share, then one short block per candidate."""
    if result.status == "skipped":
        print_searched(result)
        return
    trace = result.trace
    if trace is None or trace.signals is None or trace.verdict is None:
        print(result.text)  # no search ran: still building, or late
        return
    keyword, signals, verdict = trace.keyword, trace.signals, trace.verdict
    unknown = f" ({', '.join(keyword.unknown)})" if keyword.unknown else ""
    if keyword.uncounted:  # everyday words, the calendar's, options, quoted data
        unknown += f", not counted: {', '.join(keyword.uncounted)}"
    if trace.searched_as is not None:
        print(f'searched as: "{clip(trace.searched_as, 100)}" (what names no topic left out)')
    print(f"terms: {', '.join(keyword.terms) or '(none)'}   keyword query: {keyword.fts_query}")
    if keyword.phrases:
        print(f"code phrases: {' '.join(keyword.phrases)}")
    if keyword.dates:
        said = ", ".join(
            f'"{d["said"]}" = {d["date"]}' + (" (from today)" if d["from_today"] else "")
            for d in as_said(keyword.dates)
        )
        print(f"dates: {said} (matched by the notes filed then)")
    print(
        f"keyword hits: {len(keyword.hits)} ({trace.keyword_ms:.0f} ms)   "
        f"meaning hits: {len(trace.neighbours.hits)} (query embedding {trace.embed_ms:.0f} ms)"
    )
    print(
        f"\nIs the prompt about the notes?  {verdict.reason}\n"
        f"  margin {signals.margin:+.3f} = best snippet {signals.top_cosine:.3f} − closest "
        f"generic prompt {signals.generic_cosine:.3f}{_twin(trace)} − generic level here "
        f"{signals.offset:+.3f}"
        f'\n    closest generic prompt: "{clip(signals.generic_prompt, 70)}"\n'
        f"  agreement {signals.agreement:.0%} of the keyword weight in the best-meaning note · "
        f"best keyword match {signals.coverage:.0%} ({counted(signals.terms, 'term')}) · "
        f"z {signals.zscore:.1f}\n"
        f"  unknown words {signals.unknown_share:.0%}{unknown} · "
        f"fused top {signals.fused_top:.3f}\n"
        f"  score = {_score_parts(verdict.parts)} = {verdict.score:+.2f}"
    )
    _print_reference(trace)
    # Candidates are listed as judged; the passages go in the learned order, so each sent one
    # is marked with its place.
    places = {(p.instance, p.note_id): n for n, p in enumerate(result.passages, start=1)}
    for candidate in trace.candidates[:10]:
        print(_candidate_block(candidate, places.get(candidate.key)))
    for line in trace.substitutions:
        print(f"\nsummary for source: {line}")
    for key, second in trace.second_sections.items():
        print(_second_line(places[key], second))
    count = len(result.passages)
    why = silence_reason(result, 0.0)
    print(f"\n{counted(count, 'passage')} sent" if count else f"\nsilent: {why}")


def _twin(trace: SearchTrace) -> str:
    """Said when the closest generic prompt is the prompt's twin, counted at TWIN_COSINE."""
    raw = trace.generic.cosine
    return f" (a twin at {raw:.3f}, counted as {TWIN_COSINE})" if raw > TWIN_COSINE else ""


def _score_parts(parts: dict[str, float]) -> str:
    """Each signal's share to two decimals, so that the shares shown add up to the total shown:
    each is the step between the running sums rounded (off by at most 0.01), not the share
    rounded alone (eight shares rounded alone missed the total by up to 0.04)."""
    shown, sums, before = [], [], 0.0
    for name, part in parts.items():
        sums.append(part)
        rounded = round(math.fsum(sums), 2)  # the last is the score, as the gate sums it
        shown.append(f"{name} {rounded - before + 0.0:+.2f}")  # + 0.0: never "-0.00"
        before = rounded
    return " + ".join(shown)


def _print_reference(trace: SearchTrace) -> None:
    """This notebook's reference points (search/calibration.py) and the prompt's language."""
    r = trace.reference
    about = "none (shipped default spread)" if r.about_level is None else f"{r.about_level:+.3f}"
    foreign = " (another language than the notes: no keyword agreement asked)"
    held = "not measured" if r.technologies is None else ", ".join(r.technologies) or "none"
    named = ", ".join(trace.technologies) or "none"
    other = " (none of them the notebook's: another stack)" if trace.other_stack else ""
    print(
        f"  this notebook: generic level {r.generic_level:+.3f}, about-level {about} "
        f"({r.reason}); languages {', '.join(r.languages) or 'not told'}; prompt language "
        f"{trace.language or 'not told'}, the closest note's "
        f"{trace.closest_language or 'not told'}{foreign if trace.foreign else ''}\n"
        f"  technologies: the notebook's {held}; the prompt names {named}{other}"
    )


def _second_line(place: int, second: SecondSection) -> str:
    """The section that went along with a sent one, and why: its score as a share of the sent
    section's, at least SECOND_SECTION_SHARE (search/excerpts.py)."""
    hit = second.section.hit
    return (
        f'\nSENT {place} also holds its section "{clip(hit.heading.split(" › ")[-1], 60)}" '
        f"(section {hit.ordinal + 1} of the note): {second.share:.0%} of the sent section's "
        f"score, {SECOND_SECTION_SHARE:.0%} needed"
    )


def _candidate_block(c: Candidate, place: int | None) -> str:
    """One candidate: sent (at `place` among the passages), passed (and not sent: past the
    answer's size, sent before in this session, a folder, or shown as its summary) or dropped,
    its ranks and scores, and why."""
    ranks = f"keyword #{c.keyword_rank or '-'} · meaning #{c.meaning_rank or '-'}"
    if c.phrase_rank:
        ranks += f" · code phrase #{c.phrase_rank}"
    if c.note_rank:
        ranks += f" · note by keywords #{c.note_rank}"
    if c.filed_rank:
        ranks += f" · filed on the day #{c.filed_rank}"
    if c.order_value is not None:
        ranks += f" · learned order {c.order_value:.2f}"
    window = " around the matched snippet (long section)" if c.windowed else ""
    hub = f" (hubness {c.hubness:.3f})" if c.hubness else ""
    label = f"SENT {place}" if place else "pass" if c.passed else "drop"
    return (
        f"\n{label:<6}  {c.hit.title}  ({c.hit.area} × {c.weight:.2f})"
        f"  score {c.score:.4f}\n      {ranks} · fused {c.fused:.4f} · cosine {c.cosine:.3f}{hub}"
        f" · terms{window} {', '.join(c.matched_terms) or '-'} ({c.coverage:.0%})"
        f"\n      {c.reason}"
    )
