"""What the reader gets of a sent note: the excerpt of its best section, cut around the snippet
that matched, and of its second-best section when that one scores at least half as well.

A note is indexed as sections of at most ~350 tokens (notes/sections.py), so a manual's chapter
is several sections in a row, and the one that scores best is often the one that *names* the
subject while the answer sits in the next (GnuCash's storage overview, and the recommended
format a section later). Over the eval's labelled answers (eval/answer_reach.py, ten corpora,
held out), the text sent held the answer for 81 % of the sent notes that hold one with the best
section alone, and 93 % with the second at half the best's score or more, for 58 % more
characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..notes.html_text import collapse_spaces
from .candidates import Candidate, SecondSection

EXCERPT_CHARS = 1200
# A note's second section goes along when its fused score is at least this share of the sent
# section's. Chosen on a first look at five corpora; over all ten (eval/answer_reach.py's
# sweep) 0.5 keeps nearly all that always sending two gains (the answer held for 92.6 % of
# the sent notes, against 93.0 %) for 341 fewer characters an answer.
SECOND_SECTION_SHARE = 0.5
# The line between the two excerpts of one passage.
SECOND_SECTION_MARK = "[…]"

# Shorter shared text where two excerpts meet is chance, not the splitter's carried lines.
MIN_OVERLAP_CHARS = 20

Spans = dict[int, tuple[int, int]]
_SPACE = re.compile(r"\s+")


def second_sections(
    sent: Sequence[Candidate], sections: Sequence[Candidate]
) -> dict[tuple[str, str], SecondSection]:
    """For each sent note, its best other section among `sections` (every fused section) when
    that one scores at least SECOND_SECTION_SHARE of the sent section's own score. Both are
    read from `sections`, fused and weighted alike: a summary standing in for its source, or a
    source ranked as wiki, is sent with a score that is not its section's. A note found only
    by its date has no score to share: it goes alone."""
    of_note: dict[tuple[str, str], list[Candidate]] = {}
    for section in sections:
        of_note.setdefault(section.key, []).append(section)
    seconds = {}
    for candidate in sent:
        own = of_note.get(candidate.key, [])
        first = next((s for s in own if s.hit.section_id == candidate.hit.section_id), None)
        others = [s for s in own if s.hit.section_id != candidate.hit.section_id]
        if first is None or first.score <= 0 or not others:
            continue
        best = max(others, key=lambda s: s.score)
        share = best.score / first.score
        if share >= SECOND_SECTION_SHARE:
            seconds[candidate.key] = SecondSection(best, share)
    return seconds


def passage_text(
    candidate: Candidate, spans: Spans, second: Candidate | None = None
) -> tuple[str, str]:
    """The heading a passage shows and its text: the excerpt of the sent section; with a second
    section, both in the note's order, the heading the first one's. The next piece of a long
    section continues the text (the lines the splitter carried over said once); a `[…]` line
    marks text left out between them; a part under another heading than the one before it is
    named."""
    text = _excerpt_of(candidate, spans)
    if second is None:
        return candidate.hit.heading, text
    more = _excerpt_of(second, spans)
    (first, head), (last, tail) = sorted(
        ((candidate, text), (second, more)), key=lambda part: part[0].hit.ordinal
    )
    continued = False
    if last.hit.ordinal == first.hit.ordinal + 1 and not head.endswith(" …"):
        tail, continued = _without_overlap(head, tail)  # where they meet, nothing left out
    added = head if first is second else tail
    if collapse_spaces(added.strip("… ")) in collapse_spaces(text):
        return candidate.hit.heading, text  # the sent section says it already
    if continued:  # one text cut in two by the splitter: put back together
        return first.hit.heading, head.rstrip() + tail
    renamed = last.hit.heading != first.hit.heading
    later = f"Section: {last.hit.heading}\n{tail}" if renamed else tail
    skipped = last.hit.ordinal > first.hit.ordinal + 1 or head.endswith(" …") or tail[:2] == "… "
    joint = f"\n\n{SECOND_SECTION_MARK}\n\n" if skipped else "\n\n" if renamed else "\n"
    return first.hit.heading, head + joint + later


def _without_overlap(head: str, tail: str) -> tuple[str, bool]:
    """The later excerpt less the lines it shares with the earlier where they meet, and
    whether there were any: the splitter carries the last lines of a long section's piece
    into the next (OVERLAP_TOKENS), and the two would say them twice."""
    before, after = head.rstrip(), tail.lstrip("\n")
    cut = _overlap_at(before, after)
    return (after[cut:], True) if cut else (tail, False)


def _overlap_at(before: str, after: str) -> int:
    """How many characters `after` starts with that `before` ends with (0 under
    MIN_OVERLAP_CHARS)."""
    opening = after[:MIN_OVERLAP_CHARS]
    if len(opening) < MIN_OVERLAP_CHARS:
        return 0
    at = before.find(opening, max(0, len(before) - len(after)))
    while at != -1:
        if after.startswith(before[at:]):
            return len(before) - at
        at = before.find(opening, at + 1)
    return 0


def _excerpt_of(candidate: Candidate, spans: Spans) -> str:
    return excerpt(candidate.hit.text, around=spans.get(candidate.snippet_id or -1))


def excerpt(text: str, limit: int = EXCERPT_CHARS, around: tuple[int, int] | None = None) -> str:
    """At most `limit` characters, cut at sentence or word boundaries; when `around` (a span of
    the text) is given, the excerpt keeps that span — the snippet that matched the prompt."""
    if len(text) <= limit:
        return text
    start = 0
    if around is not None and around[1] > limit:
        start = max(0, min(around[0] - limit // 4, len(text) - limit))
        boundary = max(text.rfind(". ", 0, start + 1), text.rfind("\n", 0, start + 1))
        if boundary >= 0 and start - boundary < limit // 4 and boundary + 1 + limit >= around[1]:
            start = boundary + 1  # a sentence's start, when the snippet still fits after it
        elif start > 0 and not text[start - 1].isspace():
            space = _SPACE.search(text, start, around[0])
            start = space.end() if space else start  # a word's start, never the middle of one
    head = text[start : start + limit]
    if start + len(head) == len(text):  # the text's end: nothing to cut
        return ("… " if start > 0 else "") + head.strip()
    reach = around[1] - start if around is not None else 0  # a cut keeps the snippet whole
    cut = max(head.rfind(". "), head.rfind("\n"))
    if cut < limit // 2 or cut + 1 < reach:
        cut = head.rfind(" ")
    body = head[: cut + 1 if cut > 0 and cut + 1 >= reach else limit].strip()
    return ("… " if start > 0 else "") + body + " …"
