"""The `gitdocs` corpus: a third developer's notebook, built from the Git 2.39 documentation.

A version-control notebook beside `pydocs` (Python) and `nodedocs` (Node.js): the tool every
coding session touches, whatever its language. Reads the HTML of Debian's `git-doc` 2.39
(`usr/share/doc/git-doc/<page>.html`: the man pages as AsciiDoc renders them, the user manual
as DocBook renders it) unpacked, not installed, into `eval/.index/git-doc/`:

    apt-get download git-doc && dpkg-deb -x git-doc_*.deb eval/.index/git-doc

converts it with pydocs's converter (selectolax), taught the two renderers' blocks, and writes
a notebook folder to `eval/.index/gitdocs_notebook/` (`notebook_folder.py`) by the rules pydocs
follows: one note per page, a page over 3,000 words has its second-level sections (a man page's
SYNOPSIS, OPTIONS, …; the user manual's chapters) of 80 words or more cut out as child notes,
links into the documentation keep only their text, code blocks, examples and tables stay. A man
page's title is its NAME line, a section cut out of it is titled "<command>: <heading>" (its
headings are OPTIONS, EXAMPLES, …), and its "GIT: part of the git(1) suite" footer goes. The
output is deterministic.

    python eval/gitdocs.py [output-folder]    # the note tree (id, title, words) on stdout
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import notebook_folder
from notebook_folder import MAX_WORDS, MIN_SPLIT_WORDS, Note, manifest, words, write_folder
from pydocs import Blocks, Converter, classes, esc, plain
from selectolax.lexbor import LexborHTMLParser, LexborNode

HERE = Path(__file__).resolve().parent
PACKAGE = HERE / ".index" / "git-doc"
DOC = PACKAGE / "usr" / "share" / "doc" / "git-doc"
OUT = HERE / ".index" / "gitdocs_notebook"
PREFIX = "git"
# The user manual and six guides, then 30 commands: first those `git help` lists as the common
# ones, in its groups (start a working area, work on the current change, examine the history and
# state, grow it, collaborate; without init, mv and rm), then the others a developer reaches for.
GUIDES = (
    "user-manual", "gittutorial", "giteveryday", "gitrevisions", "gitignore", "gitattributes",
    "githooks",
)  # fmt: skip
COMMANDS = (
    "clone", "add", "restore", "bisect", "diff", "grep", "log", "show", "status", "branch",
    "commit", "merge", "rebase", "reset", "switch", "tag", "fetch", "pull", "push", "checkout",
    "cherry-pick", "revert", "stash", "clean", "remote", "blame", "reflog", "worktree",
    "submodule", "config",
)  # fmt: skip

# Page furniture: the man page's header (its title and NAME, taken apart), footer, footnote
# block and the user manual's tables of contents.
FURNITURE = {"header", "footer", "footnotes"}
DOCBOOK_BOXES = {"note", "tip", "warning", "important", "caution"}
CHAPTER = re.compile(r"^(?:Chapter \d+|Appendix [A-Z])\.\s+")


def heading_text(node: LexborNode) -> str:
    """A heading's text, without the user manual's "Chapter 3." or "Appendix A."."""
    return CHAPTER.sub("", plain(node), count=1)


class GitConverter(Converter):
    """pydocs's converter for the two renderers of Git's docs. A heading's level follows its
    tag: a man page's h2 (DocBook's h1, hence `offset`) stands at level 2, less `shift`."""

    def __init__(self, offset: int, shift: int = 0, skip: frozenset[int] = frozenset()) -> None:
        super().__init__(shift, skip)
        self.offset = offset

    def node(self, node: LexborNode, out: Blocks, depth: int) -> None:
        tag = node.tag
        if tag.startswith("-"):  # text, comments
            super().node(node, out, depth)
            return
        cls = classes(node)
        if node.mem_id in self.skip or node.attributes.get("id") in FURNITURE or "toc" in cls:
            return
        if tag == "div" and "title" in cls:  # an AsciiDoc block's title ("Example", …)
            text = plain(node)
            if text:
                out.block(f"<p><strong>{esc(text)}</strong></p>")
        elif tag == "div" and "admonitionblock" in cls:
            icon, content = node.css_first("td.icon"), node.css_first("td.content")
            if content is not None:
                self.labelled(plain(icon) if icon is not None else "", content, out, depth)
        elif tag == "div" and cls & DOCBOOK_BOXES:
            title = node.css_first(".title")
            label = plain(title) if title is not None else ""
            self.labelled(label, node, out, depth, skip=title)
        elif tag == "div" and "quoteblock" in cls:
            inner = self.children(node, depth).as_blocks()
            if inner:
                out.block("<blockquote>" + "".join(inner) + "</blockquote>")
        else:
            super().node(node, out, depth)

    def labelled(
        self,
        label: str,
        node: LexborNode,
        out: Blocks,
        depth: int,
        skip: LexborNode | None = None,
    ) -> None:
        """A note or warning: a blockquote led by its label, as pydocs renders Sphinx's."""
        body = Blocks()
        for child in node.iter(include_text=True):
            if skip is None or child.mem_id != skip.mem_id:
                self.node(child, body, depth)
        self.quoted(label, body, out)

    def heading(self, node: LexborNode, out: Blocks, depth: int) -> None:
        text = heading_text(node)
        if text:
            level = min(max(int(node.tag[1]) + self.offset - self.shift, 2), 4)
            out.block(f"<h{level}>{esc(text)}</h{level}>")


def first_heading(section: LexborNode) -> LexborNode:
    return next(n for n in section.traverse() if n.tag in ("h1", "h2", "h3", "h4", "h5", "h6"))


def anchor(heading: LexborNode) -> str:
    """A heading's id (AsciiDoc) or the name of the anchor inside it (DocBook)."""
    named = heading.css_first("a[name]")
    return heading.attributes.get("id") or (named.attributes.get("name") if named else "") or ""


def parts(page: str) -> tuple[str, LexborNode, list[LexborNode], int, set[int]]:
    """(title, body, its second-level sections, heading offset, nodes left out) of one page."""
    tree = LexborHTMLParser((DOC / f"{page}.html").read_text(encoding="utf-8"))
    book = tree.css_first("div.book")
    if book is not None:  # the user manual (DocBook): its chapters and appendices
        h1 = book.css_first("div.titlepage h1")
        sections = [n for n in book.iter() if classes(n) & {"preface", "chapter", "appendix"}]
        return plain(h1), book, sections, 1, {h1.mem_id}
    header, body = tree.css_first("div#header"), tree.css_first("div#content")
    if header is None or body is None:
        raise ValueError(f"{page}: no div#header or div#content")
    name = plain(header.css_first("div.sectionbody"))
    title = re.sub(r"^(\S+) - ", r"\1 — ", name)
    sections = [n for n in body.iter() if "sect1" in classes(n)]
    footer = {n.mem_id for n in sections if plain(first_heading(n)) == "GIT"}
    return title, body, [n for n in sections if n.mem_id not in footer], 0, footer


def page_note(page: str) -> Note:
    """One page; over MAX_WORDS its second-level sections of MIN_SPLIT_WORDS or more become
    child notes, in document order (a man page's titled "<command>: <heading>")."""
    title, body, sections, offset, skip = parts(page)
    whole = GitConverter(offset, skip=frozenset(skip)).body(body, 0)
    if words(whole) <= MAX_WORDS:
        return Note(title, whole, page)
    command = title.split(" — ")[0]
    children: list[tuple[int, Note]] = []
    for section in sections:
        heading = first_heading(section)
        text = GitConverter(offset, 1, frozenset({heading.mem_id})).body(section, 0)
        if words(text) >= MIN_SPLIT_WORDS:
            name = heading_text(heading)
            child_title = name if offset else f"{command}: {name}"
            slug = f"{page}--{anchor(heading) or len(children)}"
            children.append((section.mem_id, Note(child_title, text, slug)))
    rest = GitConverter(offset, skip=frozenset(skip | {m for m, _ in children})).body(body, 0)
    return Note(title, rest, page, [note for _, note in children])


def notebook() -> Note:
    return Note(
        "Git 2.39 documentation",
        "",
        "git-2-39-documentation",
        [
            Note("Guides", "", "guides", [page_note(page) for page in GUIDES]),
            Note("Commands", "", "commands", [page_note(f"git-{name}") for name in COMMANDS]),
        ],
    )


def write_notebook(target: Path = OUT) -> list[tuple[dict, str, int]]:
    """Rewrite `target` from scratch with the Git notebook."""
    return write_folder(target, manifest(notebook(), PREFIX))


if __name__ == "__main__":
    notebook_folder.build_from_argv(sys.argv[1:], OUT, write_notebook)
