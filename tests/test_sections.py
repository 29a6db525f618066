from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trilium_recall.notes.sections import (
    MAX_SECTION_TOKENS,
    Link,
    Section,
    estimate_tokens,
    extract_links,
    is_markdown,
    split_note,
)

# ~30 tokens each: big enough that a section holding one is not "tiny".
FILL = (
    "Shared buffers hold hot pages in memory, so repeated reads skip the disk; set it to a quarter."
)
FILL2 = (
    "Work memory sizes each sort and hash step separately, for every node of a plan; keep it low."
)


def html(content: str, title: str = "Postgres tuning") -> list[Section]:
    return split_note(title, "text", "text/html", content)


def md(content: str, title: str = "Notes") -> list[Section]:
    return split_note(title, "code", "text/markdown", content)


def test_heading_trail_nests_and_pops():
    content = (
        f"<p>{FILL}</p><h2>Memory</h2><p>{FILL}</p><h3>shared_buffers</h3><p>{FILL}</p>"
        f"<h4>Deep</h4><p>{FILL}</p><h2>Disk</h2><p>{FILL2}</p><h3>fsync</h3><p>{FILL2}</p>"
    )
    assert html(content) == [
        Section(0, "Postgres tuning", FILL),
        Section(1, "Postgres tuning › Memory", FILL),
        Section(2, "Postgres tuning › Memory › shared_buffers", FILL),
        Section(3, "Postgres tuning › Memory › shared_buffers › Deep", FILL),
        Section(4, "Postgres tuning › Disk", FILL2),
        Section(5, "Postgres tuning › Disk › fsync", FILL2),
    ]


def test_skipped_levels_and_h1_pop_everything():
    content = f"<h3>Low</h3><p>{FILL}</p><h1>Top</h1><p>{FILL2}</p><h2>Sub</h2><p>{FILL}</p>"
    assert html(content, "T") == [
        Section(0, "T › Low", FILL),
        Section(1, "T › Top", FILL2),
        Section(2, "T › Top › Sub", FILL),
    ]


def test_lists_tables_code_readable():
    content = (
        f"<p>{FILL}</p>"
        "<ul><li>one<ul><li>nested</li></ul></li><li><strong>two</strong></li></ul>"
        '<ol start="3"><li>three</li><li>four</li></ol>'
        '<ul class="todo-list"><li><label><input type="checkbox" checked="checked">'
        "<span>done</span></label></li><li><label><input type=checkbox><span>open</span>"
        "</label></li></ul>"
        '<figure class="table"><table><thead><tr><th>Setting</th><th>Value</th></tr></thead>'
        "<tbody><tr><td>shared_buffers</td><td><p>25%</p></td></tr><tr><td></td><td></td></tr>"
        "</tbody></table><figcaption>Defaults</figcaption></figure>"
        '<pre><code class="language-python">def f():\n    return 1\n\n# not a heading'
        "</code></pre><p>Line<br>break</p>"
    )
    assert html(content) == [
        Section(
            0,
            "Postgres tuning",
            f"{FILL}\n- one\n  - nested\n- two\n3. three\n4. four\n- [x] done\n- [ ] open\n"
            "Setting | Value\nshared_buffers | 25%\nDefaults\n"
            "def f():\n    return 1\n\n# not a heading\nLine\nbreak",
        )
    ]


def test_images_are_their_alt_text_scripts_includes_dropped_entities_math_kept():
    content = (
        '<p>Caf&eacute; &amp; b&nbsp;&lt;tag&gt; &#x1F600;<img src="a.png" alt="alt text"></p>'
        '<figure class="image"><img src="b.png"></figure><script>evil()</script>'
        "<style>p{}</style><!-- comment -->"
        '<section class="include-note" data-note-id="abcd1234"><p>included</p></section>'
        '<p>Energy <span class="math-tex">\\(E=mc^2\\)</span> and '
        '<a href="#root/abcd1234">a link</a>.</p>'
    )
    text = "Café & b <tag> 😀 alt text\nEnergy \\(E=mc^2\\) and a link."
    assert html(content, "T") == [Section(0, "T", text)]


def test_intro_then_headings_and_tiny_merge():
    content = (
        "<p>Short intro.</p><h2>Memory</h2><h3>shared_buffers</h3>"
        f"<p>{FILL}</p><h3>tiny</h3><p>Small.</p><h3>work_mem</h3><p>{FILL2}</p>"
    )
    assert html(content) == [
        # intro → empty "Memory" → shared_buffers: the ancestors' words stay in the trail
        Section(0, "Postgres tuning › Memory › shared_buffers", f"Short intro.\n{FILL}"),
        # a tiny sibling merges under the common parent, its heading kept in the text
        Section(1, "Postgres tuning › Memory", f"tiny\nSmall.\nwork_mem\n{FILL2}"),
    ]


def test_tiny_last_section_merges_into_previous():
    content = f"<h2>A</h2><p>{FILL}</p><h2>B</h2><p>End.</p>"
    assert html(content, "T") == [Section(0, "T", f"A\n{FILL}\nB\nEnd.")]


def test_tiny_note_is_kept_whole():
    content = "<h2>One</h2><p>a</p><h2>Two</h2><p>b</p><h3>Three</h3>"
    # One+Two merge under "T" (their headings move into the text), then into Three's trail
    assert html(content, "T") == [Section(0, "T › Two › Three", "One\na\nTwo\nb")]


@pytest.mark.parametrize(
    ("content", "text"),
    [
        (  # a table's caption, above its rows
            '<figure class="table"><table><caption>Rack inventory of the Frankfurt colo'
            "</caption><tbody><tr><td>db1</td><td>R740</td></tr></tbody></table></figure>",
            "Rack inventory of the Frankfurt colo\ndb1 | R740",
        ),
        (  # an image named by its file adds nothing
            '<p>Before <img src="a.png" alt="Screenshot 2024-05-01 at 10.02.33.png"> after</p>',
            "Before after",
        ),
        (  # a web clip's responsive image: <picture> holds <source>s and the <img> with the alt
            '<p>Before <picture><source srcset="wide.webp" media="(min-width: 800px)">'
            '<img src="narrow.jpg" alt="Wiring of the relay board"></picture> after</p>',
            "Before Wiring of the relay board after",
        ),
    ],
    ids=["table-caption", "image-file-name", "picture-alt"],
)
def test_what_markup_says_in_words_is_read(content: str, text: str) -> None:
    assert html(content, "T") == [Section(0, "T", text)]


def test_invisible_characters_inside_words_are_dropped():
    """A soft hyphen or a zero-width space (web clips carry them) cut a word in two for the
    keyword index; a zero-width joiner stays (it makes emoji sequences)."""
    content = (
        "<p>The fire&shy;wall lets the con\u00adtroller through; pass\u200bword &#8203;here, "
        "&ZeroWidthSpace;there\ufeff, word\u2060joiner, 👩\u200d💻</p>"
    )
    assert html(content, "No\u00adtes") == [
        Section(
            0,
            "Notes",
            "The firewall lets the controller through; password here, there, wordjoiner, "
            "👩\u200d💻",
        )
    ]
    code = split_note("Script", "code", "text/x-python", "pass\u200bword = 'fire\u00adwall'\n")
    assert code == [Section(0, "Script", "password = 'firewall'")]


def test_a_note_of_neither_title_nor_text_has_no_section():
    """It was sent as a blank passage, for prompts of every kind: an empty snippet is close to
    everything."""
    for content in ("", "<p></p>", "<p>&nbsp;</p>", '<p><img src="x.png"></p>'):
        assert html(content, "") == []
        assert html(content, "\u200b") == []
    assert split_note("", "code", "text/markdown", "\n") == []


def test_heading_only_note_keeps_heading_as_text():
    assert html("<h2>Lonely</h2>", "T") == [Section(0, "T › Lonely", "Lonely")]


def test_title_only_note():
    for content in ["", "   \n\t", "<p></p>", '<p><img src="x.png"></p>', "<figure><img></figure>"]:
        assert html(content, "My title") == [Section(0, "My title", "My title")]
    assert md("", "Md") == [Section(0, "Md", "Md")]
    assert split_note("Code", "code", "application/javascript", "\n\n") == [
        Section(0, "Code", "Code")
    ]


def test_malformed_html():
    content = "<p>Open <b>bold<p>para<ul><li>x<li>y</td></table><h2>Head<div>z"
    assert html(content, "T") == [Section(0, "T › Head z", "Open bold\npara\n- x\n- y")]
    assert html("</p></div><<>>&&;<", "T") == [Section(0, "T", "<<>>&&;<")]


def test_unknown_type_is_empty():
    assert split_note("T", "image", "image/png", "data") == []
    assert split_note("T", "book", "", "") == []
    assert extract_links("render", "", '<a href="#root/abcd1234">x</a>') == []


def test_control_chars_stripped_and_scripts_preserved():
    content = (
        "<h2>Заголовок\x00</h2><p>Привет\x01 мир\x7f 🚀 مرحبا بالعالم 東京は大きい。\ud800</p>"
    )
    assert html(content, "Тест\x00") == [
        Section(0, "Тест › Заголовок", "Привет мир 🚀 مرحبا بالعالم 東京は大きい。")
    ]
    assert md("# 見出し\x00\r\n本文\x08です", "メモ") == [Section(0, "メモ › 見出し", "本文です")]


def test_markdown_headings_ignore_fenced_code():
    content = (
        f"{FILL}\n\n# Setup #\n\n{FILL}\n\n```bash\n# not a heading\necho hi\n```\n\n"
        f"## Details\n{FILL2}\n~~~\n## also code\n~~~\n#hashtag line\n### \n"
        f"# Other\n\n{FILL2}\n"
    )
    assert md(content) == [
        Section(0, "Notes", FILL),
        Section(1, "Notes › Setup", f"{FILL}\n\n```bash\n# not a heading\necho hi\n```"),
        Section(2, "Notes › Setup › Details", f"{FILL2}\n~~~\n## also code\n~~~\n#hashtag line"),
        Section(3, "Notes › Other", FILL2),
    ]


def test_markdown_setext_headings_and_front_matter():
    """ "Title" over "=====" is a heading, as "# Title" is; its underline is no text. A rule
    under a list item or a YAML front matter line is not one."""
    text = (
        f"---\ntitle: Deploy notes\n---\nDeploy\n======\n{FILL}\n\n"
        f"Rollback\n--------\n{FILL2}\n- a list item\n---\nEnd."
    )
    assert md(text, "Ops") == [
        Section(0, "Ops › Deploy", f"---\ntitle: Deploy notes\n---\n{FILL}"),
        Section(1, "Ops › Deploy › Rollback", f"{FILL2}\n- a list item\n---\nEnd."),
    ]


def test_is_markdown():
    assert is_markdown("code", "text/markdown")
    assert is_markdown("code", "text/x-markdown; charset=utf-8")
    assert is_markdown("code", "text/x-gfm")
    assert not is_markdown("code", "application/javascript")
    assert not is_markdown("text", "text/markdown")


def test_code_note_blocks_packed():
    block = "\n".join(f"const value{i} = compute(value{i - 1}, {i});" for i in range(8))
    content = "\n\n".join(f"// block {b}\n{block}" for b in range(12))
    sections = split_note("util.js", "code", "application/javascript", content)
    assert [s.heading for s in sections] == ["util.js"] * len(sections)
    assert 2 <= len(sections) <= 6
    for s in sections:
        assert estimate_tokens(s.text) <= MAX_SECTION_TOKENS
        assert s.text.split("\n")[0].startswith(("// block", "const value"))  # whole lines
    starts = [s.text.index("// block") for s in sections]
    # pieces break at blank lines: after the first, each starts with an overlap of whole lines
    assert starts[0] == 0 and all(start > 0 for start in starts[1:])
    for b in range(12):
        assert any(f"// block {b}\n" in s.text for s in sections)


def test_a_split_code_note_s_pieces_start_at_a_line_and_keep_its_lines():
    """A block bigger than the overlap ended a piece: the next began with its last words run
    together ("} server_0 { listen 010; … }" on one line)."""
    lines = [f"server_{b} {{ listen {b}{i}; proxy_pass http://up_{b}_{i}; }}" for b in range(8)
             for i in range(12)]  # fmt: skip
    blocks = ["\n".join(lines[b * 12 : b * 12 + 12]) for b in range(8)]
    sections = split_note("nginx.conf", "code", "text/plain", "\n\n".join(blocks))
    assert len(sections) > 2
    for section in sections:
        assert all(line in lines for line in section.text.split("\n") if line)


def test_small_code_note_is_one_section():
    code = "SELECT 1;\n\n\nSELECT 2;\n"
    assert split_note("q", "code", "text/x-sql", code) == [
        Section(0, "q", "SELECT 1;\n\n\nSELECT 2;")
    ]


def test_long_section_split_with_overlap():
    words = [f"word{i}" for i in range(1500)]
    sentences = [" ".join(words[i : i + 15]) + "." for i in range(0, 1500, 15)]
    paragraphs = ["<p>" + " ".join(sentences[i : i + 4]) + "</p>" for i in range(0, 100, 4)]
    sections = html("<h2>Long</h2>" + "".join(paragraphs), "T")
    assert len(sections) >= 5
    assert {s.heading for s in sections} == {"T › Long"}
    assert [s.ordinal for s in sections] == list(range(len(sections)))
    for s in sections:
        assert estimate_tokens(s.text) <= MAX_SECTION_TOKENS
    for before, after in itertools.pairwise(sections):
        tail = before.text.split()[-5:]
        assert after.text.split()[:5] != before.text.split()[:5]
        assert " ".join(tail) in after.text  # overlap carried into the next piece
    seen = {w.rstrip(".") for s in sections for w in s.text.split()}
    assert seen == set(words)


def test_giant_word_and_cjk_without_spaces_are_split():
    for content in ["x" * 5000, "東京" * 3000]:
        sections = html(f"<p>{content}</p>", "T")
        assert len(sections) > 1
        assert all(estimate_tokens(s.text) <= MAX_SECTION_TOKENS for s in sections)
        joined = "".join(s.text for s in sections)
        assert joined.count(content[0]) >= content.count(content[0])  # nothing lost


def cpu_seconds(run: Callable[[], object], repeats: int = 1) -> float:
    """The least CPU time of `repeats` runs (CPU time: wall time swings with other jobs)."""
    best = math.inf
    for _ in range(repeats):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def assert_grows_linearly(split: Callable[[int], object], size: int) -> None:
    """`split(size)` takes at most 30 times the CPU of `split(size // 10)`: a tenth of the
    input measured in the same run, so the bound holds on any CPU (a slow ARM board, an
    emulator) and still catches quadratic work, which would take 100 times."""
    tenth = cpu_seconds(lambda: split(size // 10), repeats=3)
    whole = cpu_seconds(lambda: split(size))
    assert whole <= 30 * tenth, (tenth, whole)


def big_note(parts: int) -> str:
    return "".join(
        f"<h2>Part {i}</h2><p>{FILL} {FILL2}</p><ul><li>{FILL}</li><li>item {i}</li></ul>"
        f"<table><tr><td>a{i}</td><td>b</td></tr></table>"
        for i in range(parts)
    )


def test_one_megabyte_note_is_split_in_linear_time_and_capped():
    body = big_note(2600)
    assert len(body) > 1_000_000
    sections = html(body)
    assert 2000 <= len(sections) <= 2600
    assert all(estimate_tokens(s.text) <= MAX_SECTION_TOKENS for s in sections)
    assert_grows_linearly(lambda parts: html(big_note(parts)), 2600)


@pytest.mark.parametrize(
    "nesting",
    [lambda n: "<div>" * n, lambda n: "<ul><li>x" * n, lambda n: "<span>" * n + "<p>a</p>" * n],
    ids=["divs", "list-items", "spans-then-paragraphs"],
)
def test_pathologically_nested_html_does_not_hang(nesting: Callable[[int], str]):
    # Unguarded, lexbor needed ~170 s for 200,000 nested divs: quadratic in the depth.
    sections = html(nesting(100_000), "T")
    assert all(estimate_tokens(s.text) <= MAX_SECTION_TOKENS for s in sections)
    assert_grows_linearly(lambda depth: html(nesting(depth), "T"), 100_000)


def test_one_megabyte_plain_text_and_markdown():
    text = "\n".join(f"line {i}: {FILL}" for i in range(11_000))
    for sections in [
        split_note("big", "code", "text/plain", text),
        md("# Head\n" + text),
        html(text, "big"),
    ]:
        assert 100 < len(sections) < 2000
        assert all(estimate_tokens(s.text) <= MAX_SECTION_TOKENS for s in sections)


def test_html_links_all_forms():
    content = (
        '<p><a class="reference-link" href="#root/aaaa1111/bbbb2222">Ref</a>'
        '<a href="#root/x/bbbb2222?ntxId=abc">again</a>'
        '<a href="#cccc3333">short</a><a href="#root/dddd4444/">slash</a>'
        '<a href="https://example.com/#root/eeee5555">external</a>'
        '<a href="mailto:a@b.c">mail</a><a href="#no">too short</a><a>no href</a></p>'
        '<section class="include-note" data-note-id="ffff6666" data-box-size="small"></section>'
        '<section class="include-note" data-note-id="bad id"></section>'
        '<a href="#root/ffff6666">link to the included note</a>'
    )
    assert extract_links("text", "text/html", content) == [
        Link("bbbb2222", "link"),
        Link("cccc3333", "link"),
        Link("dddd4444", "link"),
        Link("ffff6666", "include"),
        Link("ffff6666", "link"),
    ]


def test_markdown_links():
    content = (
        "See [[aaaa1111]] and [doc](#root/x/bbbb2222) and [[aaaa1111]] again,\n"
        "[q](#root/cccc3333?ntxId=1), [web](https://x.org/#root/dddd4444), [[no]]."
    )
    assert extract_links("code", "text/markdown", content) == [
        Link("aaaa1111", "link"),
        Link("bbbb2222", "link"),
        Link("cccc3333", "link"),
    ]
    assert extract_links("code", "application/javascript", "[[aaaa1111]]") == []


def test_links_empty_and_malformed():
    assert extract_links("text", "text/html", "") == []
    assert extract_links("text", "text/html", '<a href="#root/abcd1234"<<>') == [
        Link("abcd1234", "link")
    ]


HTML_BITS = st.sampled_from(
    [
        *["<h1>", "<h2>", "<h3>", "</h2>", "<p>", "</p>", "<ul>", "<li>", "<ol>", "<table>"],
        *["<tr>", "<td>", "<pre>", "<code>", "</pre>", "<br>", "<img src=x>", "&amp;", "&#0;"],
        *["<div>", "</div>", "```", "# ", "## ", "\x00", "東京。", "word " * 30, "x" * 300, "\n\n"],
    ]
)
HTMLISH = st.lists(st.one_of(HTML_BITS, st.text(max_size=40)), max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(content=HTMLISH, title=st.text(max_size=30), kind=st.sampled_from(["html", "md", "js"]))
def test_never_raises_and_respects_cap(content, title, kind):
    note_type, mime = {
        "html": ("text", "text/html"),
        "md": ("code", "text/markdown"),
        "js": ("code", "application/javascript"),
    }[kind]
    sections = split_note(title, note_type, mime, content)
    # Only a note with nothing to find it by (no title, no text) has no section.
    assert sections or not split_note("t", note_type, mime, content)[0].text.strip("t ")
    assert all(s.text.strip() or s.heading.strip() for s in sections)  # no blank passage
    assert [s.ordinal for s in sections] == list(range(len(sections)))
    for s in sections:
        assert estimate_tokens(s.text) <= MAX_SECTION_TOKENS
        assert "\x00" not in s.text + s.heading
    extract_links(note_type, mime, content)
