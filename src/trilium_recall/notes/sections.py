"""Split a Trilium note into heading-scoped sections, and find the notes it links to.

split_note: clean → events (heading or body line) → sections by heading trail → split long
sections with overlap → merge tiny neighbours → number them. Sizes use estimate_tokens, a cheap
stand-in for the e5 tokenizer. HTML notes are read as text by html_text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..textclean import INVISIBLE
from ..trilium.records import NOTE_ID
from .html_text import Events, collapse_spaces, html_events, parse_html, trim_blank_lines

MAX_SECTION_TOKENS = 350  # e5 reads 512: room for the heading, "passage: " and estimate error
MIN_SECTION_TOKENS = 25  # smaller sections merge into a neighbour
OVERLAP_TOKENS = 40  # carried from the end of one split piece into the next

_CAP_COUNT = MAX_SECTION_TOKENS * 10 // 13  # raw counts whose estimate stays <= the cap
_OVERLAP_COUNT = OVERLAP_TOKENS * 10 // 13
_ATOM_COUNT = _CAP_COUNT - _OVERLAP_COUNT  # any atom fits after a carried overlap
_MAX_HEADING_CHARS = 200  # longer headings are shortened in trails; full text goes to the body

# Scripts written without spaces: each character counts as a token.
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{CJK_CHARS}]|\w{{1,10}}|[^\w\s]")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_MD_LINK_RE = re.compile(rf"\[\[({NOTE_ID.pattern})\]\]|\]\((#[^)\s]*)\)")
_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ATX_RE = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)")
_SETEXT_RE = re.compile(r" {0,3}(?:(=)=*|(-)-*)[ \t]*")
_NOT_PARAGRAPH_RE = re.compile(r" {0,3}(?:[-*+>|]|\d+[.)]|`{3}|~{3}| {4})")
# Coarse to fine: a piece too big at one level is split at the next; (pattern, joiner).
_SPLITTERS = (
    (re.compile(r"\n(?:[ \t]*\n)+"), "\n\n"),  # blank-line blocks
    (re.compile(r"\n"), "\n"),  # lines
    (re.compile(r"(?<=[.!?;:])\s+"), " "),  # sentences
    (re.compile(r"(?<=[。！？；])"), ""),  # CJK sentences (no space after the stop)
    (re.compile(r"\s+"), " "),  # words
)

_MARKDOWN_MIMES = frozenset({"text/markdown", "text/x-markdown", "text/x-gfm"})


@dataclass(frozen=True)
class Section:
    ordinal: int
    heading: str
    text: str


@dataclass(frozen=True)
class Link:
    target_note_id: str
    kind: str


@dataclass(frozen=True)
class _Raw:
    trail: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class _Atom:
    sep: str  # joins the atom to the one before it
    text: str
    count: int


def estimate_tokens(text: str) -> int:
    """≈ e5 tokens: words (in ≤10-char pieces), punctuation marks and CJK characters, × 1.3."""
    return (_count(text) * 13 + 9) // 10


def is_markdown(note_type: str, mime: str) -> bool:
    return note_type == "code" and mime.split(";")[0].strip().lower() in _MARKDOWN_MIMES


def split_note(title: str, note_type: str, mime: str, content: str) -> list[Section]:
    title = collapse_spaces(_clean(title))
    content = _clean(content)
    if note_type == "text":
        raws = _build(title, html_events(content))
    elif is_markdown(note_type, mime):
        raws = _build(title, _markdown_events(content))
    elif note_type == "code":
        raws = [_Raw((_short(title),), trim_blank_lines(content))]
    else:
        return []
    if not any(raw.text.strip() or len(raw.trail) > 1 for raw in raws):
        if not title:
            return []  # nothing to find it by: a blank passage was sent as an answer
        raws = [_Raw((_short(title),), title)]  # title-only note: still findable by its title
    raws = _merge_tiny([piece for raw in raws for piece in _split_long(raw)])
    return [
        Section(i, " › ".join(p for p in raw.trail if p), raw.text or raw.trail[-1])
        for i, raw in enumerate(raws)
    ]


def extract_links(note_type: str, mime: str, content: str) -> list[Link]:
    content = _clean(content)
    if note_type == "text":
        found = _html_links(content)
    elif is_markdown(note_type, mime):
        found = _markdown_links(content)
    else:
        return []
    return list(dict.fromkeys(found))  # dedupe, keeping first appearance


# --- text helpers ---


def _count(text: str) -> int:
    return len(_TOKEN_RE.findall(text))


def _clean(text: str) -> str:
    text = INVISIBLE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return _CONTROL_RE.sub("", text)


def _short(heading: str) -> str:
    if len(heading) <= _MAX_HEADING_CHARS:
        return heading
    cut = heading[:_MAX_HEADING_CHARS]
    return (cut.rsplit(" ", 1)[0] or cut) + "…"


# --- sections from events ---


def _build(title: str, events: Events) -> list[_Raw]:
    out: list[_Raw] = []
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    for level, text in events:
        if level == 0:
            body.append(text)
            continue
        if not text:
            continue
        _emit(out, title, stack, body)
        body = [text] if len(text) > _MAX_HEADING_CHARS else []  # keep every heading word
        while stack and stack[-1][0] >= level:
            stack.pop()  # a new h2 closes the previous h2 and everything under it
        stack.append((level, _short(text)))
    _emit(out, title, stack, body)
    return out


def _emit(out: list[_Raw], title: str, stack: list[tuple[int, str]], body: list[str]) -> None:
    text = trim_blank_lines("\n".join(body))
    if stack or text:  # headed sections stay even when empty: their heading words count
        out.append(_Raw((_short(title), *(h for _, h in stack)), text))


def _split_long(raw: _Raw) -> list[_Raw]:
    count = _count(raw.text)
    if count <= _CAP_COUNT:
        return [raw]
    atoms: list[_Atom] = []
    _atoms(raw.text, "", 0, atoms, count)
    return [_Raw(raw.trail, text) for text in _pack(atoms)]


def _atoms(text: str, sep: str, level: int, out: list[_Atom], count: int) -> None:
    if count <= _ATOM_COUNT:
        out.append(_Atom(sep, text, count))
        return
    if level == len(_SPLITTERS):  # one giant word: cut it (a char counts at most once)
        for i in range(0, len(text), _ATOM_COUNT):
            chunk = text[i : i + _ATOM_COUNT]
            out.append(_Atom(sep if i == 0 else "", chunk, _count(chunk)))
        return
    pattern, joiner = _SPLITTERS[level]
    parts = [p for p in pattern.split(text) if p.strip()]
    if len(parts) == 1:
        _atoms(parts[0], sep, level + 1, out, count)
        return
    for i, part in enumerate(parts):
        _atoms(part, sep if i == 0 else joiner, level + 1, out, _count(part))


def _pack(atoms: list[_Atom]) -> list[str]:
    """Greedily fill pieces up to the cap; each new piece starts with the previous one's tail."""
    pieces: list[str] = []
    current: list[_Atom] = []
    total, fresh = 0, False  # fresh: current holds more than the carried overlap
    for atom in atoms:
        if fresh and total + atom.count > _CAP_COUNT:
            pieces.append(_join_atoms(current))
            current = _overlap(current)
            total, fresh = sum(a.count for a in current), False
        current.append(atom)
        total += atom.count
        fresh = True
    if fresh:
        pieces.append(_join_atoms(current))
    return pieces


def _join_atoms(atoms: list[_Atom]) -> str:
    return atoms[0].text + "".join(a.sep + a.text for a in atoms[1:])


def _overlap(atoms: list[_Atom]) -> list[_Atom]:
    tail: list[_Atom] = []
    total = 0
    for atom in reversed(atoms):  # whole trailing lines/sentences first...
        if total + atom.count > _OVERLAP_COUNT:
            break
        tail.insert(0, atom)
        total += atom.count
    if tail:
        return [_Atom("", tail[0].text, tail[0].count), *tail[1:]]
    lines: list[str] = []
    for line in reversed(atoms[-1].text.split("\n")[1:]):  # ...else its last whole lines: a
        count = _count(line)  # piece of code starts at a line, its lines kept apart
        if total + count > _OVERLAP_COUNT:
            break
        lines.insert(0, line)
        total += count
    if lines:
        return [_Atom("", "\n".join(lines), total)]
    words: list[str] = []
    for word in reversed(atoms[-1].text.split()):  # ...else the last words of the last one
        count = _count(word)
        if total + count > _OVERLAP_COUNT:
            break
        words.insert(0, word)
        total += count
    return [_Atom("", " ".join(words), total)] if words else []


def _merge_tiny(raws: list[_Raw]) -> list[_Raw]:
    """Fold each tiny section into the next one under the same parent, else into the previous."""
    pending = list(raws)
    out: list[_Raw] = []
    for i, raw in enumerate(pending):
        if estimate_tokens(raw.text) < MIN_SECTION_TOKENS:
            nxt = pending[i + 1] if i + 1 < len(pending) else None
            if nxt and nxt.trail[: len(raw.trail) - 1] == raw.trail[:-1]:
                merged = _join(raw, nxt, keep_later=True)
                if estimate_tokens(merged.text) <= MAX_SECTION_TOKENS:
                    pending[i + 1] = merged
                    continue
            if out:
                merged = _join(out[-1], raw, keep_later=False)
                if estimate_tokens(merged.text) <= MAX_SECTION_TOKENS:
                    out[-1] = merged
                    continue
        out.append(raw)
    return out


def _join(a: _Raw, b: _Raw, keep_later: bool) -> _Raw:
    """Merge a and b under their common heading; headings it drops move into the text."""
    if keep_later and b.trail[: len(a.trail)] == a.trail:
        return _Raw(b.trail, _lines(a.text, b.text))  # a's heading is in b's trail already
    n = 0
    while n < min(len(a.trail), len(b.trail)) and a.trail[n] == b.trail[n]:
        n += 1
    label_a, label_b = " › ".join(a.trail[n:]), " › ".join(b.trail[n:])
    return _Raw(a.trail[:n], _lines(label_a, a.text, label_b, b.text))


def _lines(*parts: str) -> str:
    return "\n".join(p for p in parts if p)


# --- markdown ---


def _markdown_events(text: str) -> Events:
    lines = text.split("\n")
    matter = _front_matter(lines)  # YAML lines: "key: value" over "---" is no heading
    events: Events = [(0, line) for line in lines[:matter]]
    fence = ""
    for line in lines[matter:]:
        opener = _FENCE_RE.match(line)
        if fence:  # inside ``` … ```: a "#" line is code, not a heading
            if opener and _closes(fence, opener.group(1), line[opener.end() :]):
                fence = ""
        elif opener:
            fence = opener.group(1)
        elif heading := _ATX_RE.match(line):
            events.append((len(heading.group(1)), _atx_text(line[heading.end() :])))
            continue
        elif (under := _SETEXT_RE.fullmatch(line)) and events and _paragraph(events[-1]):
            events[-1] = (1 if under.group(1) == "=" else 2, events[-1][1].strip())
            continue  # "Title" over "=====": a heading, its underline no text
        events.append((0, line))
    return events


def _front_matter(lines: list[str]) -> int:
    """How many lines a YAML front matter block at the top takes, its "---" lines included."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    end = next((i for i, line in enumerate(lines[1:], 1) if line.rstrip() in ("---", "...")), 0)
    return end + 1 if end else 0


def _paragraph(event: tuple[int, str]) -> bool:
    """A body line a setext underline makes a heading: not blank, not a list item, quote,
    table row or fence (under those, "---" is a rule or a cell)."""
    level, line = event
    return level == 0 and bool(line.strip()) and not _NOT_PARAGRAPH_RE.match(line)


def _closes(fence: str, candidate: str, rest: str) -> bool:
    return candidate[0] == fence[0] and len(candidate) >= len(fence) and not rest.strip()


def _atx_text(rest: str) -> str:
    rest = rest.strip()
    bare = rest.rstrip("#")
    if bare != rest and (not bare or bare[-1] in " \t"):  # optional closing "###"
        rest = bare.strip()
    return rest


def _markdown_links(text: str) -> list[Link]:
    links = []
    for match in _MD_LINK_RE.finditer(text):
        target = match.group(1) or _href_target(match.group(2))
        if target:
            links.append(Link(target, LINK))
    return links


# --- HTML links ---

# The kinds of link a note's text makes; its relations bear their own names (plan.py).
LINK, INCLUDE = "link", "include"
TEXT_LINK_KINDS = frozenset({LINK, INCLUDE})


def _html_links(html: str) -> list[Link]:
    links = []
    for tree in parse_html(html):
        for node in tree.css("a[href], section.include-note"):
            if node.tag == "a":
                target, kind = _href_target(node.attributes.get("href") or ""), LINK
            else:
                note_id = node.attributes.get("data-note-id") or ""
                target, kind = note_id if NOTE_ID.fullmatch(note_id) else None, INCLUDE
            if target:
                links.append(Link(target, kind))
    return links


def _href_target(href: str) -> str | None:
    """Note id at the end of "#root/a/b/noteId?ntxId=x"; external links (http…) have none."""
    href = href.strip()
    if not href.startswith("#"):
        return None
    segment = href[1:].split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return segment if NOTE_ID.fullmatch(segment) else None
