"""The `nodedocs` corpus: a second developer's notebook, built from the Node.js 18 API docs.

A JavaScript notebook beside `pydocs` (Python), so that the coding case has two corpora and
either can be held out with the other still among the fitted ones. Reads the Markdown sources
of Debian's `nodejs-doc` 18 (`usr/share/doc/nodejs/api/<page>.md.gz`) unpacked, not installed,
into `eval/.index/nodejs-doc/` (installing it would remove a NodeSource `nodejs` package, which
ships other docs at the same path):

    apt-get download nodejs-doc && dpkg-deb -x nodejs-doc_*.deb eval/.index/nodejs-doc

renders them with markdown-it-py (installed with rich) and writes a notebook folder to
`eval/.index/nodedocs_notebook/` (`notebook_folder.py`) by the rules pydocs follows: one note
per page, a page over 3,000 words has its `##` sections of 80 words or more cut out as child
notes, links into the documentation keep only their text, code blocks and tables stay. The
output is deterministic.

    python eval/nodedocs.py [output-folder]    # the note tree (id, title, words) on stdout
"""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

import notebook_folder
from markdown_it import MarkdownIt
from notebook_folder import MAX_WORDS, MIN_SPLIT_WORDS, Note, manifest, words, write_folder

HERE = Path(__file__).resolve().parent
PACKAGE = HERE / ".index" / "nodejs-doc"
DOC = PACKAGE / "usr" / "share" / "doc" / "nodejs" / "api"
OUT = HERE / ".index" / "nodedocs_notebook"
PREFIX = "njs"
# Thirty pages a Node.js developer reads most, grouped as the docs' own index groups them.
PAGES = (
    "errors", "process", "globals", "modules", "esm", "packages", "cli", "events", "fs",
    "path", "os", "buffer", "stream", "http", "https", "net", "dns", "url", "child_process",
    "worker_threads", "cluster", "timers", "readline", "util", "crypto", "zlib",
    "async_context", "assert", "test", "console",
)  # fmt: skip

COMMENT = re.compile(r"<!--.*?-->", re.S)
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# A link into the documentation (relative or an anchor) keeps only its text; anchors go.
INTERNAL_LINK = re.compile(r'<a href="(?!https?://)[^"]*">(.*?)</a>', re.S)
ANCHOR = re.compile(r'<a (?:id|name)="[^"]*">\s*</a>')
# A reference link's target, given once at the page's end: every cut-out section needs them.
LINK_DEFINITION = re.compile(r"^\[[^\]]+\]:\s+\S+", re.M)
MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable("table")


def lines_outside_code(text: str) -> list[tuple[str, bool]]:
    """(line, inside a fenced code block?) for each line."""
    out, fenced = [], False
    for line in text.split("\n"):
        if FENCE.match(line):
            out.append((line, True))
            fenced = not fenced
        else:
            out.append((line, fenced))
    return out


def split_h2(text: str) -> tuple[str, str, list[tuple[str, str]]]:
    """(title, text before the first `##`, [(heading, body)] of each `##` section)."""
    title, head, sections = "", [], []
    for line, fenced in lines_outside_code(text):
        match = None if fenced else HEADING.match(line)
        if match and len(match.group(1)) == 1 and not title:
            title = match.group(2)
        elif match and len(match.group(1)) == 2:
            sections.append((match.group(2), []))
        else:
            (sections[-1][1] if sections else head).append(line)
    return title, "\n".join(head), [(h, "\n".join(body)) for h, body in sections]


def render(text: str, shift: int, links: str) -> str:
    """Markdown → note HTML; a heading of `#`×n becomes h(n − shift), kept between h2 and h4;
    `links` are the page's link reference definitions."""
    lines = []
    for line, fenced in lines_outside_code(text):
        match = None if fenced else HEADING.match(line)
        if match:
            level = min(max(len(match.group(1)) - shift, 2), 4)
            line = "#" * level + " " + match.group(2)
        lines.append(line)
    body = MARKDOWN.render("\n".join(lines) + "\n\n" + links)
    body = ANCHOR.sub("", body)
    return INTERNAL_LINK.sub(r"\1", body).strip()


def plain_title(heading: str) -> str:
    """A heading's text without Markdown's code ticks and escapes."""
    return re.sub(r"\\(.)", r"\1", heading.replace("`", "")).strip()


def page_note(page: str) -> Note:
    """One page; over MAX_WORDS its `##` sections of MIN_SPLIT_WORDS or more become child
    notes, in document order."""
    source = COMMENT.sub("", gzip.decompress((DOC / f"{page}.md.gz").read_bytes()).decode())
    title, head, sections = split_h2(source)
    links = "\n".join(
        line
        for line, fenced in lines_outside_code(source)
        if not fenced and LINK_DEFINITION.match(line)
    )
    whole = render(head + "".join(f"\n## {h}\n{body}" for h, body in sections), 0, links)
    if words(whole) <= MAX_WORDS:
        return Note(plain_title(title), whole, page)
    kept, children = head, []
    for n, (heading, body) in enumerate(sections):
        text = render(body, 1, links)
        if words(text) >= MIN_SPLIT_WORDS:
            children.append(Note(plain_title(heading), text, f"{page}--{n}"))
        else:
            kept += f"\n## {heading}\n{body}"
    return Note(plain_title(title), render(kept, 0, links), page, children)


def notebook() -> Note:
    pages = [page_note(page) for page in PAGES]
    return Note("Node.js 18 documentation", "", "node-js-18-documentation", pages)


def write_notebook(target: Path = OUT) -> list[tuple[dict, str, int]]:
    """Rewrite `target` from scratch with the Node.js notebook."""
    return write_folder(target, manifest(notebook(), PREFIX))


if __name__ == "__main__":
    notebook_folder.build_from_argv(sys.argv[1:], OUT, write_notebook)
