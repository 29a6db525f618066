"""The `pydocs` corpus: a developer's notebook built from the Python 3.11 documentation.

Reads the Sphinx HTML that Debian's `python3.11-doc` installs and writes a notebook folder
(`notebook.json` + `notes/<id>-<slug>.html`, the manifest `FakeTrilium.load_notebook_dir` reads)
to `eval/.index/pydocs_notebook/`. The rules follow ../shared/corpora/README.md: one note per
page, a page over 3,000 words has its h2 sections of 80 words or more cut out as child notes,
navigation, tables of contents, sidebars and images are dropped, code blocks and tables kept,
links into the documentation keep only their text. The output is deterministic.

    python eval/pydocs.py [output-folder]    # the note tree (id, title, words) on stdout
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import notebook_folder
from notebook_folder import MAX_WORDS, MIN_SPLIT_WORDS, Note, manifest, words, write_folder
from selectolax.lexbor import LexborHTMLParser, LexborNode

HERE = Path(__file__).resolve().parent
DOC = Path("/usr/share/doc/python3.11/html")
OUT = HERE / ".index" / "pydocs_notebook"
PREFIX = "pyd"
# The 30 module pages, in the order of the Library Reference's own contents
# (asyncio-task where asyncio stands).
MODULES = (
    "exceptions", "string", "re", "datetime", "collections", "enum", "itertools", "functools",
    "pathlib", "os.path", "tempfile", "shutil", "sqlite3", "csv", "hashlib", "os", "io", "time",
    "argparse", "logging", "threading", "concurrent.futures", "subprocess", "asyncio-task",
    "json", "urllib.request", "typing", "unittest", "dataclasses", "contextlib",
)  # fmt: skip

# Page furniture and pictures: nothing a note would hold.
DROP_TAGS = {"script", "style", "img", "hr", "nav", "svg", "form", "input", "button"}
DROP_CLASSES = {"headerlink", "sidebar", "toctree-wrapper", "footnote-reference", "label"}
DROP_CLASSES |= {"backrefs"}
# Boxes that become a blockquote led by their label.
BOXES = {"admonition", "topic", "versionadded", "versionchanged", "deprecated"}
BOXES |= {"deprecated-removed", "impl-detail", "citation"}
TITLE_CLASSES = {"admonition-title", "topic-title"}
INLINE = {"em": "em", "i": "em", "cite": "em", "dfn": "em", "strong": "strong", "b": "strong"}
INLINE |= {"sub": "sub", "sup": "sup"}
CODE_TAGS = {"code", "kbd", "samp", "tt", "var"}
NUMBER = re.compile(r"^\d+(?:\.\d+)*\.\s+(?=\S)")


# ---------------------------------------------------------------- HTML → note body


def esc(text: str) -> str:
    return html.escape(text, quote=False)


def classes(node: LexborNode) -> set[str]:
    return set((node.attributes.get("class") or "").split())


def plain(node: LexborNode) -> str:
    """Visible text of a node, whitespace collapsed, without the "¶" permalinks."""
    return re.sub(r"\s+", " ", node.text(deep=True).replace("¶", "")).strip()


def heading_text(node: LexborNode) -> str:
    return NUMBER.sub("", plain(node), count=1)


def has_text(s: str) -> bool:
    return bool(re.sub(r"<[^>]+>", "", s).strip())


def tidy(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


class Blocks:
    """Output of converting nodes: a sequence of inline runs and finished blocks."""

    def __init__(self) -> None:
        self.items: list[tuple[bool, str]] = []  # (is_block, html)

    def inline(self, s: str) -> None:
        if not s:
            return
        if self.items and not self.items[-1][0]:
            self.items[-1] = (False, self.items[-1][1] + s)
        else:
            self.items.append((False, s))

    def block(self, s: str) -> None:
        if s:
            self.items.append((True, s))

    def extend(self, other: Blocks) -> None:
        for is_block, s in other.items:
            (self.block if is_block else self.inline)(s)

    def only_inline(self) -> bool:
        return not any(is_block for is_block, _ in self.items)

    def inline_html(self) -> str:
        return tidy("".join(s for _, s in self.items))

    def as_blocks(self) -> list[str]:
        """Inline runs wrapped in paragraphs; empty runs dropped."""
        out = []
        for is_block, s in self.items:
            if is_block:
                out.append(s)
            elif has_text(s):
                out.append(f"<p>{tidy(s)}</p>")
        return out


class Converter:
    """Sphinx page body → Trilium-style HTML. `depth` is the nesting of `<section>`s (the page's
    top section is 1); a heading's level is its depth less `shift`, between h2 and h4."""

    def __init__(self, shift: int = 0, skip: frozenset[int] = frozenset()) -> None:
        self.shift = shift
        self.skip = skip  # mem_ids of what is left out: the title, sections cut out as notes

    def body(self, node: LexborNode, depth: int) -> str:
        out = self.children(node, depth)
        return "\n".join(out.as_blocks())

    def children(self, node: LexborNode, depth: int) -> Blocks:
        out = Blocks()
        for child in node.iter(include_text=True):
            self.node(child, out, depth)
        return out

    def node(self, node: LexborNode, out: Blocks, depth: int) -> None:
        tag = node.tag
        if tag == "-text":
            out.inline(esc(node.text_content or ""))
            return
        cls = classes(node)
        if tag.startswith("-") or tag in DROP_TAGS or cls & DROP_CLASSES:
            return
        if node.mem_id in self.skip:
            return
        if tag == "section":
            out.extend(self.children(node, depth + 1))
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.heading(node, out, depth)
        elif tag == "pre":
            code = (node.text(deep=True) or "").strip("\n")
            if code.strip():
                out.block(f"<pre><code>{esc(code)}</code></pre>")
        elif tag == "figure":  # a picture goes; a caption that says something stays
            for caption in node.css("figcaption"):
                if len(plain(caption).split()) >= 8:
                    out.extend(self.paragraphs(caption, depth))
        elif tag == "p" and "rubric" in cls:
            out.block(f"<p><strong>{esc(plain(node))}</strong></p>")
        elif cls & BOXES:
            self.box(node, out, depth)
        elif tag == "div" and "line-block" in cls:
            lines = [esc(plain(line)) for line in node.css("div.line")]
            out.block("<p>" + "<br>".join(line for line in lines if line) + "</p>")
        elif tag in ("ul", "ol"):
            out.block(self.listing(node, tag, depth))
        elif tag == "dl":
            self.definitions(node, out, depth)
        elif tag == "table":
            out.block(self.table(node, depth))
        elif tag == "blockquote":
            inner = self.children(node, depth).as_blocks()
            if inner:
                out.block("<blockquote>" + "".join(inner) + "</blockquote>")
        elif tag in ("p", "div", "aside", "main", "article", "figcaption", "li", "dd", "dt"):
            out.extend(self.paragraphs(node, depth))
        else:
            self.inline(node, tag, out, depth)

    def heading(self, node: LexborNode, out: Blocks, depth: int) -> None:
        text = heading_text(node)
        if text:
            level = min(max(depth - self.shift, 2), 4)
            out.block(f"<h{level}>{esc(text)}</h{level}>")

    def inline(self, node: LexborNode, tag: str, out: Blocks, depth: int) -> None:
        if tag == "br":
            out.inline("<br>")
            return
        if tag in CODE_TAGS:
            text = esc(re.sub(r"\s+", " ", node.text(deep=True)))
            out.inline(f"<code>{text}</code>" if text.strip() else text)
            return
        inner = self.children(node, depth)
        if not inner.only_inline():
            out.extend(inner)  # a block inside an inline element: keep the blocks
            return
        content = "".join(s for _, s in inner.items)
        href = node.attributes.get("href") or ""
        if not has_text(content):
            out.inline(" " if content else "")
        elif tag == "a" and re.match(r"https?://", href):
            out.inline(f'<a href="{html.escape(href)}">{content}</a>')
        elif tag in INLINE:
            out.inline(f"<{INLINE[tag]}>{content}</{INLINE[tag]}>")
        else:  # span, abbr, links inside the documentation: their text
            out.inline(content)

    def paragraphs(self, node: LexborNode, depth: int) -> Blocks:
        """A block container: inline runs become paragraphs, blocks pass through."""
        out = Blocks()
        for block in self.children(node, depth).as_blocks():
            out.block(block)
        return out

    def box(self, node: LexborNode, out: Blocks, depth: int) -> None:
        """Note, See also, Abstract, Changed in version …: a blockquote led by its label."""
        label = ""
        body = Blocks()
        for child in node.iter(include_text=True):
            if child.tag == "p" and classes(child) & TITLE_CLASSES:
                label = plain(child)
            else:
                self.node(child, body, depth)
        self.quoted(label, body, out)

    @staticmethod
    def quoted(label: str, body: Blocks, out: Blocks) -> None:
        """`body` as a blockquote led by its `label` (bold, before the first paragraph's text)."""
        blocks = body.as_blocks()
        if not blocks:
            return
        if label and blocks[0].startswith("<p>"):
            blocks[0] = f"<p><strong>{esc(label)}:</strong> {blocks[0][3:]}"
        elif label:
            blocks.insert(0, f"<p><strong>{esc(label)}</strong></p>")
        out.block("<blockquote>" + "".join(blocks) + "</blockquote>")

    def listing(self, node: LexborNode, tag: str, depth: int) -> str:
        items = []
        for li in node.iter():
            inner = self.item(li, depth)
            if has_text(inner):
                items.append(f"<li>{inner}</li>")
        return f"<{tag}>" + "".join(items) + f"</{tag}>" if items else ""

    def item(self, node: LexborNode, depth: int) -> str:
        """A list item's or table cell's content; a lone paragraph as plain inline text."""
        sub = self.children(node, depth)
        if sub.only_inline():
            return sub.inline_html()
        blocks = sub.as_blocks()
        if len(blocks) == 1 and blocks[0].startswith("<p>"):
            return blocks[0][3:-4]
        return "".join(blocks)

    def definitions(self, node: LexborNode, out: Blocks, depth: int) -> None:
        """An API entry (`dt.sig`): its signature in code, then its description. Any other
        list of terms (field lists, glossaries): a bulleted list with the term in bold."""
        terms = [dt for dt in node.iter() if dt.tag == "dt"]
        if any("sig" in classes(dt) for dt in terms):
            for child in node.iter():
                if child.tag == "dt":
                    out.block(f"<p><code>{esc(plain(child))}</code></p>")
                else:
                    out.extend(self.paragraphs(child, depth))
            return
        items: list[tuple[list[str], list[str]]] = []
        for child in node.iter():
            if child.tag == "dt":
                term = self.children(child, depth).inline_html().rstrip(":").strip()
                if items and not items[-1][1]:
                    items[-1][0].append(term)
                else:
                    items.append(([term], []))
            elif child.tag == "dd":
                if not items:
                    items.append(([], []))
                items[-1][1].extend(self.children(child, depth).as_blocks())
        rendered = [definition(terms, desc) for terms, desc in items]
        rendered = [item for item in rendered if item]
        if rendered:
            out.block("<ul>" + "".join(rendered) + "</ul>")

    def table(self, node: LexborNode, depth: int) -> str:
        head: list[str] = []
        body: list[str] = []
        for part in node.iter():
            for tr in part.iter() if part.tag in ("thead", "tbody") else [part]:
                if tr.tag != "tr":
                    continue
                cells = [self.cell(td, depth) for td in tr.iter() if td.tag in ("td", "th")]
                if any(has_text(c) for c in cells):
                    (head if part.tag == "thead" else body).append(
                        "<tr>" + "".join(cells) + "</tr>"
                    )
        if not head and not body:
            return ""
        table = "<table>" + ("<thead>" + "".join(head) + "</thead>" if head else "")
        return f'<figure class="table">{table}<tbody>{"".join(body)}</tbody></table></figure>'

    def cell(self, td: LexborNode, depth: int) -> str:
        inner = self.item(td, depth)
        attrs = ""
        for name in ("colspan", "rowspan"):
            value = td.attributes.get(name)
            if value and value != "1":
                attrs += f' {name}="{int(value)}"'
        return f"<{td.tag}{attrs}>{inner}</{td.tag}>"


def definition(terms: list[str], desc: list[str]) -> str:
    head = ", ".join(t for t in terms if has_text(t))
    desc = [d for d in desc if has_text(d)]
    if len(desc) == 1 and desc[0].startswith("<p>") and head:
        return f"<li><strong>{head}</strong>: {desc[0][3:-4]}</li>"
    if head:
        return f"<li><p><strong>{head}</strong></p>{''.join(desc)}</li>"
    return f"<li>{''.join(desc)}</li>" if desc else ""


# ---------------------------------------------------------------- pages → notes


def page_note(path: Path, slug: str) -> Note:
    """One documentation page; over MAX_WORDS its h2 sections of MIN_SPLIT_WORDS or more
    become child notes, in document order."""
    tree = LexborHTMLParser(path.read_text(encoding="utf-8"))
    main = tree.css_first("div.body") or tree.css_first("div[role=main]")
    if main is None:
        raise ValueError(f"{path}: no div.body")
    h1 = main.css_first("h1")
    title = heading_text(h1)
    whole = Converter(skip=frozenset({h1.mem_id})).body(main, 0)
    if words(whole) <= MAX_WORDS:
        return Note(title, whole, slug)
    children: list[tuple[int, Note]] = []
    for section, depth in h2_sections(main):
        heading = first_heading(section)
        text = Converter(shift=depth - 1, skip=frozenset({heading.mem_id})).body(section, depth)
        if words(text) >= MIN_SPLIT_WORDS:
            section_slug = f"{slug}--{section.attributes.get('id') or len(children)}"
            children.append((section.mem_id, Note(heading_text(heading), text, section_slug)))
    skip = frozenset({h1.mem_id, *(mem_id for mem_id, _ in children)})
    rest = Converter(skip=skip).body(main, 0)
    return Note(title, rest, slug, [note for _, note in children])


def h2_sections(main: LexborNode) -> list[tuple[LexborNode, int]]:
    """The sections under the page's top one (depth 2), then the page's other top sections
    (depth 1: urllib.request's urllib.response), which stand at the same level."""
    tops = [node for node in main.iter() if node.tag == "section"]
    nested = [(node, 2) for node in tops[0].iter() if node.tag == "section"]
    return nested + [(node, 1) for node in tops[1:]]


def first_heading(section: LexborNode) -> LexborNode:
    return next(n for n in section.iter() if n.tag in ("h1", "h2", "h3", "h4", "h5", "h6"))


def links_only(note: Note) -> bool:
    """A page that only lists other pages (an index): no sections, no text outside its lists."""
    return not note.children and not has_text(
        re.sub(r"<(ul|ol)>.*?</\1>", "", note.html, flags=re.S)
    )


def howto_pages(doc: Path) -> list[str]:
    """The HOWTO pages in the order of their index, then any it does not list, by name."""
    index = LexborHTMLParser((doc / "howto" / "index.html").read_text(encoding="utf-8"))
    listed = [a.attributes.get("href") or "" for a in index.css("div.body li.toctree-l1 > a")]
    pages = [name for name in dict.fromkeys(listed) if (doc / "howto" / name).is_file()]
    others = sorted(p.name for p in (doc / "howto").glob("*.html") if p.name != "index.html")
    return pages + [name for name in others if name not in pages]


def notebook(doc: Path = DOC) -> Note:
    howtos = [
        page_note(doc / "howto" / name, f"howto-{Path(name).stem}") for name in howto_pages(doc)
    ]
    library = [page_note(doc / "library" / f"{name}.html", f"library-{name}") for name in MODULES]
    return Note(
        "Python 3.11 documentation",
        "",
        "python-3-11-documentation",
        [
            Note("HOWTOs", "", "howtos", [note for note in howtos if not links_only(note)]),
            Note("Library reference", "", "library-reference", library),
        ],
    )


# ---------------------------------------------------------------- the notebook folder


def write_notebook(target: Path = OUT, doc: Path = DOC) -> list[tuple[dict, str, int]]:
    """Rewrite `target` from scratch with the Python notebook."""
    return write_folder(target, manifest(notebook(doc), PREFIX))


if __name__ == "__main__":
    notebook_folder.build_from_argv(sys.argv[1:], OUT, write_notebook)
