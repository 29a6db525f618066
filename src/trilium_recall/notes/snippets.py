"""Snippets: a few sentences of a section, the unit the meaning index embeds.

A whole section (up to ~350 tokens) dilutes the one sentence a prompt asks about. Windows of
about 20 words, each led by the note title and its own heading, found the answering note in the
top 3 for 95-100 % of the answerable eval prompts by meaning alone against 93-98 % for whole
sections, and separated answerable from unrelated prompts better on all three eval corpora
(eval/RESULTS.md). Windows of ~35 words without overlap embed half as many snippets (3.5 a
section on the seven eval corpora against 7.4 for ~20 words overlapping by a sentence) at the
same held-out quality: hit@3 within 0.01 of the old windows at every gate setting, the
gate-open ceiling 0.916 against 0.915 (eval/RESULTS.md, issue 26). A section's cosine is its
best snippet's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .sections import CJK_CHARS, Section, estimate_tokens

# A snippet grows sentence by sentence until it holds this many tokens (~35 words).
SNIPPET_MIN_TOKENS = 48
# A longer "sentence" (a code line run, a list without stops) is cut into pieces of this size.
SNIPPET_MAX_TOKENS = 90
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|(?<=[。！？；])|\n+")
_SPACE = re.compile(r"\s+")
# Where a long run may be cut: between words, between characters of unspaced scripts, and
# every 40 characters of a giant "word" (a hash, a minified line).
_PIECE = re.compile(rf"[{CJK_CHARS}]|[^\s{CJK_CHARS}]{{1,40}}")


@dataclass(frozen=True)
class Snippet:
    """`text` is what gets embedded; `start`/`end` locate its sentences in the section text."""

    start: int
    end: int
    text: str


def snippet_prefix(title: str, heading: str) -> str:
    """The note title and the section's own heading: context a bare sentence lacks. The whole
    trail adds cost (long release-note trails) without measured gain."""
    last = heading.rsplit(" › ", 1)[-1]
    return title if last in ("", title) else f"{title} › {last}"


def split_snippets(title: str, section: Section) -> list[Snippet]:
    """Consecutive sentence groups of at least SNIPPET_MIN_TOKENS; a short tail joins the
    group before it rather than standing alone on a few words."""
    prefix = snippet_prefix(title, section.heading)
    spans = _sentences(section.text)
    if not spans:
        return [Snippet(0, 0, snippet_text(prefix, section.text, 0, 0))]
    groups: list[list[tuple[int, int]]] = [[]]
    size = 0
    for span in spans:
        if size >= SNIPPET_MIN_TOKENS:
            groups.append([])
            size = 0
        groups[-1].append(span)
        size += estimate_tokens(section.text[span[0] : span[1]])
    if len(groups) > 1 and size < SNIPPET_MIN_TOKENS // 2:
        tail = groups.pop()
        groups[-1] += tail
    return [_snippet(prefix, section.text, group) for group in groups]


def snippet_text(prefix: str, text: str, start: int, end: int) -> str:
    """What is embedded for the sentences at `text[start:end]`: the prefix, then their words
    one space apart. An empty span (a section without text) is the prefix alone. The one
    builder of a snippet's text: the sync hashes it, migration m014 hashed stored spans by it."""
    if start == end:
        return prefix
    return f"{prefix}\n{_SPACE.sub(' ', text[start:end]).strip()}"


def _snippet(prefix: str, text: str, group: list[tuple[int, int]]) -> Snippet:
    start, end = group[0][0], group[-1][1]
    return Snippet(start, end, snippet_text(prefix, text, start, end))


def _sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence or line; over-long ones cut at word boundaries."""
    spans: list[tuple[int, int]] = []
    position = 0
    for match in [*_SENTENCE_END.finditer(text), None]:
        end = match.start() if match else len(text)
        if text[position:end].strip():
            spans.extend(_cut_long(text, position, end))
        position = match.end() if match else end
    return spans


def _cut_long(text: str, start: int, end: int) -> list[tuple[int, int]]:
    if estimate_tokens(text[start:end]) <= SNIPPET_MAX_TOKENS:
        return [(start, end)]
    pieces: list[tuple[int, int]] = []
    piece_start, size = start, 0
    for unit in _PIECE.finditer(text, start, end):
        size += estimate_tokens(unit.group())
        if size > SNIPPET_MAX_TOKENS // 2:
            pieces.append((piece_start, unit.end()))
            piece_start, size = unit.end(), 0
    if text[piece_start:end].strip():
        pieces.append((piece_start, end))
    return pieces
