"""Which technologies a prompt names, and which ones a notebook is about: so the gate can tell a
question about another stack than the notes.

A developer's notebook is asked about everything a developer works with. "how do I sort a
vector in rust" shares its subject (sorting) and its trade's words with a Python notebook's
sorting guide, and no topic signal tells the two apart; that the prompt names a language the
notebook never writes about does (issue 23: on the eval's developer notebook the unrelated
prompts that named another stack outnumbered the answerable ones 26 to 1). Names are matched
as the keyword index splits them, so a notebook's document counts say which it is about.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..index.terms import words

# Languages, runtimes, frameworks, data stores, version control and tools people name in a
# prompt, as single FTS5 tokens (lower case): a git manual asked "git grep, only python files"
# is asked about one of its own; then applications by kind, for the notebooks that are not a
# developer's (a photo editor's manual is asked "krita: ..." as a coding notebook is asked
# "... in rust"). Names that are everyday words (notion, word, eclipse, blender, excel,
# obsidian, handbrake, audacity) and desktop operating systems (a question about any
# notebook's subject may say where it runs) are left out: naming them says nothing about which
# product a question is about. So is Trilium, whose notes these are: "what did I write in
# trilium about …" is a question for any notebook.
NAMES = frozenset(
    """python javascript js typescript nodejs deno rust golang java kotlin scala groovy ruby rails
    php laravel swift perl lua haskell elixir erlang clojure dart flutter julia matlab fortran
    cobol react vue angular svelte django flask fastapi spring csharp dotnet powershell vba
    mysql postgres postgresql sqlite mongodb redis elasticsearch kafka docker kubernetes
    kubectl helm terraform ansible nginx jenkins vscode android ios
    git github gitlab bitbucket svn mercurial

    photoshop lightroom indesign inkscape krita gimp darktable rawtherapee digikam imagemagick
    scribus coreldraw figma canva sketchup zbrush freecad openscad autocad solidworks
    libreoffice powerpoint onenote evernote logseq joplin
    gnucash quickbooks ynab xero kmymoney moneydance hledger beancount
    ableton ffmpeg kdenlive shotcut vlc
    vim neovim emacs intellij pycharm webstorm xcode
    stellarium""".split()
)
# Names that are everyday words too: "a swift reply", "my spring tax installment", "my daughter
# Ruby", a python in a photo, French "la vue", "a kafka novel". Named in a prompt they count only
# beside something technical (`_technical`): code, another technology (or two of these), the
# name written as a label ("rust: …"), or a word of the programming trade.
EVERYDAY_NAMES = frozenset(
    "python ruby swift spring julia vue dart rust java lua rails angular vim kafka react".split()
)
# "node" is Node.js only where it is written as one: node.js, a label, "in node", a version
# ("node 18"), a command ("node --test", "node app.js"), node_modules, or beside another
# technology ("python and node"); "every node of the tree" is not.
_NODE = re.compile(
    r"\bnode(?:\.js\b|\s*:(?!\S)|\s+(?:v?\d+\b|--?[a-z]|\S+\.[cm]?js\b)|_modules)"
    r"|\b(?:in|using|from|upgrading|upgraded|upgrade)\s+node\b"
)
# Names a prompt uses for a technology the list names otherwise ("in python and node").
ALIASES = {"node": "nodejs"}
# Technologies whose questions a notebook about another of them answers: TypeScript is
# JavaScript with types, Node runs it ("fs.readFile in typescript" asks a Node notebook about
# Node; "node 18 to node 20" asks a notebook that writes "Node.js", the words node and js).
FAMILIES = (frozenset({"javascript", "js", "nodejs", "typescript"}),)
# Words of the programming trade; not those everyday prompts use as well ("swim class", "a
# chart of the year", "the test on Friday", "stream").
TRADE_WORDS = frozenset(
    """code coding function functions method methods script scripts programming module modules
    library libraries framework app apps component components compile compiler compiles
    interpreter runtime syntax error errors exception exceptions crash crashes bug bugs debug
    debugger api sdk plugin bindings install installed venv virtualenv pip gem gems npm
    dataclass dict dictionary tuple array arrays vector hashmap struct trait regex async asyncio
    heap mutable null hook hooks deploy server backend frontend developer variable variables
    string strings json yaml http sql query unittest typing import imports lambda closure
    generics pointer repl migration migrations emulator comprehension""".split()
)
# A language named as what something is written in: "… in rust", "using python", "en python"
# (not "with": "dinner with Julia", "a chain covered with rust").
_WRITTEN_IN = re.compile(
    r"\b(?:in|using|en|em|usando)\s+(python|ruby|swift|rust|java|lua|julia|dart)\b"
)
# Code in a prompt: backticks, a call, an arrow or scope, a dotted or snake_case or camelCase
# name, a file name with its extension (two letters before the dot at least: not "e.g.", "p.m.").
_CODE = re.compile(
    r"`|\w\(|=>|::|->|\b[a-z_]\w+\.[a-z_]\w*|\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w*|\b\w{2,}\.[a-z]{1,5}\b"
)
# Names FTS5 cannot keep whole ("c#" is the token "c"): told in a prompt by a pattern, in a
# notebook by the sections whose text holds the literal (index/note_stats.sections_containing).
SYMBOL_NAMES: dict[str, tuple[re.Pattern[str], str]] = {
    "csharp": (re.compile(r"(?<![\w#+])c#(?![\w#])"), "c#"),
    "cpp": (re.compile(r"(?<![\w+])c\+\+(?![\w+])"), "c++"),
    "fsharp": (re.compile(r"(?<![\w#])f#(?![\w#])"), "f#"),
    "dotnet": (re.compile(r"(?<![\w.])\.net\b|\basp\.net\b"), ".net"),
}
_SYMBOL_PATTERNS = {literal: pattern for pattern, literal in SYMBOL_NAMES.values()}
# A notebook is about a technology when this share of its sections names it: a passing mention
# (a Python guide's "JavaScript Object Notation") does not count. In a large notebook a share
# would ask too much: SECTIONS_ENOUGH sections naming it hold material about it however many
# others there are (a lifetime of notes with 200 sections on Rust among 50,000 is about Rust).
NOTEBOOK_SHARE = 0.01
SECTIONS_ENOUGH = 20
MIN_SECTIONS = 2


# A name used as a verb, after its subject or a modal: "how do I react to SIGINT", "should the
# app react when it fails"; "in react, when …", "migrate from react to vue" name React.
VERBS = re.compile(
    r"\b(i|we|you|they|it|app|should|would|could|can|will|does|do|did|to|not|t)\s+react"
    r"(?=\s+(?:to|when|if|quickly|differently)\b)"
)


# A link names where something is hosted, not what it is about: "is
# https://github.com/psf/requests/issues/6000 fixed" asks about a Python library. With a scheme,
# or a host of a common top-level domain and a path ("gitlab.com/org/lib"; "react.js/vue.js"
# is no host).
# Each starts only where no host character precedes it: "a.a.a.…" is read in linear time.
_LINK = re.compile(
    r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]*://\S+"
    r"|(?<![a-z0-9.-])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|co)/\S*"
)


def without_links(text: str) -> str:
    """The text in lower case, its links' hosts and paths left out: "raspi.debian.net" and
    "search.php?q=" name no technology, in a prompt or in a note."""
    return _LINK.sub(" ", text.lower())


def holds_symbol(literal: str, text: str) -> bool:
    """Whether the text names the symbol name whose literal it holds ("c#", ".net") as a prompt
    would (SYMBOL_NAMES' pattern), outside links."""
    return bool(_SYMBOL_PATTERNS[literal].search(without_links(text)))


def named_technologies(prompt: str) -> tuple[str, ...]:
    """The technologies the prompt names: words in prompt order, then symbol names; not the
    hosts and paths of its links."""
    lower = without_links(prompt)
    said = words(VERBS.sub(r"\1", lower))
    node = bool(_NODE.search(lower)) or any(word in NAMES for word in said)
    named = [word for word in said if word in NAMES or (node and word == "node")]
    symbols = [name for name, (pattern, _) in SYMBOL_NAMES.items() if pattern.search(lower)]
    found = list(dict.fromkeys(named + symbols))
    if any(name in EVERYDAY_NAMES for name in found) and not _technical(prompt, found):
        found = [name for name in found if name not in EVERYDAY_NAMES]
    return tuple(dict.fromkeys(ALIASES.get(name, name) for name in found))


def _technical(prompt: str, named: Sequence[str]) -> bool:
    """Whether the prompt reads as about software (see EVERYDAY_NAMES)."""
    if any(name not in EVERYDAY_NAMES for name in named) or len(set(named)) > 1:
        return True  # "react vs vue", "python or ruby for scripting"
    if _CODE.search(prompt):
        return True
    lower = prompt.lower()
    labels = (re.search(rf"\b{name}\s*:(?!\S)", lower) for name in named)
    if any(labels) or _WRITTEN_IN.search(lower):
        return True
    return any(word in TRADE_WORDS for word in words(lower))


def notebook_technologies(
    document_counts: Callable[[Sequence[str]], tuple[int, dict[str, int]]],
    literal_counts: Callable[[Sequence[str]], tuple[int, list[int]]],
    titled: Callable[[Sequence[str]], set[str]],
) -> tuple[str, ...]:
    """The technologies the notebook is about, in name order: words from how many sections hold
    each as written (`document_counts`) or named by a note's title (`titled`: a
    note given to it, however small among the rest), symbol names from the sections (or a
    sample of them) holding their literal (`note_stats.sections_containing`)."""
    names = sorted(NAMES)
    total, counts = document_counts(names)
    in_titles = titled(names)
    held = [name for name in names if notebook_holds(counts[name], total) or name in in_titles]
    read, found = literal_counts([literal for _, literal in SYMBOL_NAMES.values()])
    held += [name for name, n in zip(SYMBOL_NAMES, found, strict=True) if notebook_holds(n, read)]
    return tuple(sorted(held))


def notebook_holds(sections: int, total: int) -> bool:
    """Whether `sections` of `total` naming a thing make the notebook about it (not a passing
    mention: NOTEBOOK_SHARE, at most SECTIONS_ENOUGH, at least MIN_SECTIONS)."""
    return sections >= max(MIN_SECTIONS, min(NOTEBOOK_SHARE * total, SECTIONS_ENOUGH))


def names_another_stack(named: Sequence[str], held: Sequence[str] | None) -> bool:
    """The prompt names technologies and none of them is one the notebook is about. Unknown
    (a calibration from before this signal) counts as not."""
    if held is None or not named:
        return False
    ours = set(held).union(*(family for family in FAMILIES if family & set(held)))
    return not ours & set(named)
