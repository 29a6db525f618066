"""Render CKEditor HTML as readable text: headings, and body lines for sections.py to split.

Lists keep their markers and indent, tables become "a | b" rows under their caption, <pre> code
stays verbatim, an image is its alt text (often a note's only words about a screenshot), and
scripts and includes are dropped. Deeply nested HTML is parsed in chunks (see parse_html).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from selectolax.lexbor import LexborHTMLParser, LexborNode

from ..textclean import INVISIBLE

_MAX_WALK_DEPTH = 100  # deeper HTML subtrees are read flat (keeps Python recursion bounded)
_MAX_INDENT = "  " * 8  # nested list items indent no further than this
_MAX_NESTING = 256  # lexbor parses deep nesting in quadratic time: 20k nested divs took 0.5 s
_CHUNK_CHARS = 1024  # ...so such HTML is parsed in chunks this size (1 MB of <ul><li>: 0.25 s)

_SPACE_RE = re.compile(r"\s+")
_FILE_NAME_RE = re.compile(r".*\.(?:png|jpe?g|gif|webp|svg|bmp|tiff?|heic|avif)", re.IGNORECASE)
_TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)")
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_SKIP = frozenset(
    {"svg", "video", "audio", "iframe", "object", "script", "style"} | {"template", "noscript"}
)
_BLOCK = frozenset(
    {"p", "div", "section", "article", "aside", "header", "footer", "main", "nav", "address"}
    | {"blockquote", "figure", "figcaption", "caption", "dl", "dt", "dd", "hr", "li", "tr"}
    | {"details", "summary"}
)
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta"})

Events = list[tuple[int, str]]  # (heading level 1–6, heading text) or (0, body line)


def collapse_spaces(text: str) -> str:
    return _SPACE_RE.sub(" ", text).strip()


def trim_blank_lines(text: str) -> str:
    lines = text.split("\n")
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


def parse_html(html: str) -> Iterator[LexborHTMLParser]:
    """One lexbor tree, or several chunk trees when the HTML nests too deep to parse in one go."""
    if not _too_deep(html):
        yield LexborHTMLParser(html)
        return
    start = 0
    while start < len(html):  # cut before a "<" so no tag is split
        end = html.rfind("<", start + 1, start + _CHUNK_CHARS)
        end = end if end > start and start + _CHUNK_CHARS < len(html) else start + _CHUNK_CHARS
        yield LexborHTMLParser(html[start:end])
        start = end


def _too_deep(html: str) -> bool:
    """Cheap upper bound on nesting depth — a cost guard only; lexbor does the parsing."""
    if html.count("<") <= _MAX_NESTING:
        return False
    depth = 0
    for match in _TAG_RE.finditer(html):
        if match.group(1):
            depth = max(depth - 1, 0)
        elif match.group(2).lower() not in _VOID:
            depth += 1
            if depth > _MAX_NESTING:
                return True
    return False


def html_events(html: str) -> Events:
    """Headings and readable body lines of a CKEditor text note, in document order."""
    writer = _HtmlText()
    for tree in parse_html(html):
        if tree.body is not None:
            writer.walk(tree.body, 0)
            writer.flush()
    return [(level, INVISIBLE.sub("", text)) for level, text in writer.events]  # as &shy;


class _HtmlText:
    """Walks a lexbor tree into events: headings, and readable body lines."""

    def __init__(self, headings: bool = True) -> None:
        self.events: Events = []
        self._parts: list[str] = []
        self._marker = ""  # list marker ("- ", "2. ") for the next line
        self._indent = ""  # continuation indent inside list items
        self._headings = headings

    def flush(self) -> None:
        line = collapse_spaces("".join(self._parts))
        self._parts.clear()
        if line:
            self.events.append((0, (self._marker or self._indent) + line))
            self._marker = ""

    def walk(self, node: LexborNode, depth: int) -> None:
        for child in node.iter(include_text=True):
            self._visit(child, depth)

    def _visit(self, node: LexborNode, depth: int) -> None:
        tag = node.tag or "-"
        if tag == "-text":
            self._parts.append(node.text_content or "")
        elif tag == "img":
            self._parts.append(" " + _alt_text(node) + " ")
        elif tag.startswith("-") or tag in _SKIP:
            return  # comments, doctype, media, scripts
        elif depth > _MAX_WALK_DEPTH:
            self._parts.append(" " + node.text(deep=True, separator=" ") + " ")
        elif tag == "br":
            self.flush()
        elif tag == "input" and node.attributes.get("type") == "checkbox":
            self._parts.append("[x] " if "checked" in node.attributes else "[ ] ")
        elif tag == "section" and "include-note" in (node.attributes.get("class") or "").split():
            return  # an include is a link, not text
        elif tag == "pre":
            self._pre(node)
        elif tag in ("ul", "ol"):
            self._list(node, tag == "ol", depth)
        elif tag == "table":
            self._table(node, depth)
        elif tag in _HEADINGS and self._headings:
            self.flush()
            self.events.append((_HEADINGS[tag], _inline_text(node, depth)))
        elif tag in _BLOCK or tag in _HEADINGS:
            self.flush()
            self.walk(node, depth + 1)
            self.flush()
        else:
            self.walk(node, depth + 1)

    def _pre(self, node: LexborNode) -> None:
        self.flush()
        code = "".join(
            "\n" if n.tag == "br" else n.text_content or ""
            for n in node.traverse(include_text=True)
            if n.tag in ("-text", "br")
        )
        for line in trim_blank_lines(code).split("\n"):
            self.events.append((0, self._indent + line.rstrip()))  # verbatim, blanks included

    def _list(self, node: LexborNode, ordered: bool, depth: int) -> None:
        self.flush()
        outer = self._indent
        number = _list_start(node)
        for item in node.iter():
            if item.tag != "li":
                self._visit(item, depth + 1)
                continue
            self._marker = outer + (f"{number}. " if ordered else "- ")
            self._indent = (outer + "  ")[: len(_MAX_INDENT)]
            self.walk(item, depth + 1)
            self.flush()
            number += 1
        self._indent, self._marker = outer, ""

    def _table(self, node: LexborNode, depth: int) -> None:
        self.flush()
        for caption in (c for c in node.iter() if c.tag == "caption"):
            if line := _inline_text(caption, depth):
                self.events.append((0, self._indent + line))
        for row in _rows(node):
            cells = [_inline_text(c, depth) for c in row.iter() if c.tag in ("td", "th")]
            if any(cells):
                self.events.append((0, self._indent + " | ".join(cells)))


def _inline_text(node: LexborNode, depth: int) -> str:
    """A heading or table cell as one line."""
    writer = _HtmlText(headings=False)
    writer.walk(node, depth + 1)
    writer.flush()
    return " ".join(line for _, line in writer.events)


def _alt_text(image: LexborNode) -> str:
    """What an image says in words: its alt text, unless that is a file name a web clip or an
    editor filled in ("image.png", "Screenshot 2024-05-01 at 10.02.33.png")."""
    alt = collapse_spaces(image.attributes.get("alt") or "")
    return "" if _FILE_NAME_RE.fullmatch(alt) else alt


def _rows(table: LexborNode) -> Iterator[LexborNode]:
    for child in table.iter():
        if child.tag == "tr":
            yield child
        elif child.tag in ("thead", "tbody", "tfoot"):
            yield from (row for row in child.iter() if row.tag == "tr")


def _list_start(node: LexborNode) -> int:
    start = (node.attributes.get("start") or "1").strip()
    return int(start) if start.isascii() and start.isdigit() and len(start) < 9 else 1
