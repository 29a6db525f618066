"""Decide, from the note tree, whether a note is indexed, why not, its area, and its paths.

Pure functions over `trilium.Note` objects: no I/O, so the sync engine and the tests share them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..areas import AREA_RANK
from ..config import Settings
from ..textclean import clip
from ..trilium.records import Note
from .records import text_hash

ROOT = "root"
HIDDEN_ROOT = "_hidden"
INDEXABLE_TYPES = ("text", "code")
# Every type Trilium 0.93 to 0.105 knows (specs, demo.zip, ETAPI-NEWEST.md); any other is new to
# us and skipped as "unknown type", so the page shows it apart from the ones skipped by design.
KNOWN_TYPES = frozenset(
    {"render", "file", "image", "search", "relationMap", "book", "noteMap", "mermaid", "webView",
     "shortcut", "doc", "contentWidget", "launcher", "canvas", "mindMap", "geoMap", "aiChat",
     "spreadsheet", "llmChat", *INDEXABLE_TYPES}
)  # fmt: skip
BREADCRUMB = " › "  # between the titles of a path, as the index stores paths
MAX_PATHS = 8  # clones can multiply paths; a handful is plenty for display and rules
# Chains walked before the paths are ranked and cut to MAX_PATHS: a wiki page cloned under
# many day notes keeps its wiki path however its parents are listed.
MAX_CHAINS = 64
CRUMBS = 16  # levels of a breadcrumb shown; deeper ones keep their top and their end
CRUMB_CHARS = 200  # of each title in a breadcrumb (a web clip's title may be a page long)
# Under the #calendarRoot note, or a day/month/year note of a journal kept elsewhere.
JOURNAL_LABELS = ("calendarRoot", "dateNote", "monthNote", "yearNote")
# The labels Trilium's journal dates its day and month notes with ("2026-10-21", "2026-10").
CALENDAR_LABELS = ("dateNote", "monthNote")
_CALENDAR_VALUE = re.compile(r"(?:19|20)\d\d-(?:0[1-9]|1[0-2])(?:-(?:0[1-9]|[12]\d|3[01]))?")


@dataclass(frozen=True)
class Verdict:
    """How one note is treated by the index."""

    area: str
    paths: tuple[str, ...]
    skip_reason: str | None
    calendar: str | None = None  # the journal labels' dates: "2026-10-21", "2026-10,2026-11"


@dataclass(frozen=True)
class Rules:
    plumbing_titles: frozenset[str]
    wiki_titles: frozenset[str]
    sources_titles: frozenset[str]

    @classmethod
    def from_settings(cls, settings: Settings) -> Rules:
        return cls(
            frozenset(t.casefold() for t in settings.plumbing_titles),
            frozenset(t.casefold() for t in settings.wiki_titles),
            frozenset(t.casefold() for t in settings.sources_titles),
        )


def ancestor_chains(note_id: str, tree: Mapping[str, Note]) -> list[list[Note]]:
    """Every chain from the note's parent up to (not including) root, nearest first.

    A chain that reaches a note missing from `tree` (e.g. a hidden parent the listing left
    out) stops there; a chain through `_hidden` keeps that note so callers can see it.

    Depth first, on a stack of its own and one chain cut back as it returns: a tree 2,000
    levels deep passed Python's recursion limit, and copying the chain at every level made a
    deep note's walk quadratic. (No nested function either: one that calls itself is a
    reference cycle, freed only by the garbage collector, whose collections held the
    interpreter for up to 0.7 s at 100,000 notes; bench/RESULTS.md.)
    """
    chains: list[list[Note]] = []
    chain: list[Note] = []
    seen = {note_id}  # the note and the chain's notes: a parent among them is a cycle
    ids: list[str] = []  # the chain's note ids, as `seen` holds them
    todo = _steps(note_id, 0, tree, seen)  # (a parent to go up to, or None: a chain ends)
    while todo and len(chains) < MAX_CHAINS:
        parent, length = todo.pop()
        seen.difference_update(ids[length:])
        del chain[length:], ids[length:]
        if parent is None:
            chains.append(chain.copy())
            continue
        chain.append(tree.get(parent) or _hidden_stub())
        ids.append(parent)
        seen.add(parent)
        todo += _steps(parent, length + 1, tree, seen)
    return chains


def _steps(
    current: str, length: int, tree: Mapping[str, Note], seen: set[str]
) -> list[tuple[str | None, int]]:
    """What walking up from `current` (the chain `length` long) does next, last first (a
    stack): go up to each parent in turn, or end the chain at root, at a parent the listing
    left out, or at a note without parents."""
    note = tree.get(current)
    parents = [p for p in (note.parent_note_ids if note else ()) if p not in seen]
    live = [p for p in parents if p != "none"]
    if not live or current == ROOT:
        return [(None, length)]
    steps: list[tuple[str | None, int]] = [
        (parent, length) if parent != ROOT and (parent in tree or parent == HIDDEN_ROOT)
        else (None, length)
        for parent in live
    ]  # fmt: skip
    return steps[::-1]


def classify(note: Note, tree: Mapping[str, Note], rules: Rules) -> Verdict:
    chains = ancestor_chains(note.note_id, tree)
    areas = [_area(note, chain, rules) for chain in chains]
    area = min(areas, key=AREA_RANK.__getitem__)
    paths = _paths(chains, areas)
    return Verdict(area, paths, _skip_reason(note, chains, rules), _calendar(note, chains))


def _paths(chains: list[list[Note]], areas: list[str]) -> tuple[str, ...]:
    """Each breadcrumb once, the one a passage shows first: in the area the note is weighted
    as (a wiki page cloned under a journal day is shown where the wiki files it), outside the
    hidden tree, the shortest, then by name."""
    crumbs = [_breadcrumb(chain) for chain in chains]
    order = sorted(
        range(len(chains)),
        key=lambda i: (AREA_RANK[areas[i]], _through_hidden(chains[i]), len(chains[i]), crumbs[i]),
    )
    return tuple(dict.fromkeys(crumbs[i] for i in order))[:MAX_PATHS]


def _through_hidden(chain: list[Note]) -> bool:
    return any(member.note_id == HIDDEN_ROOT for member in chain)


def _calendar(note: Note, chains: list[list[Note]]) -> str | None:
    """The dates the journal files the note under, comma-separated: on each of its paths its
    own `#dateNote`/`#monthNote`, else its nearest ancestor's (a note kept under a day note is
    that day's; a clone under two day notes is both days'). The title need not say it: a
    `#datePattern` can title day notes "Wed 21" or "Standup"."""
    dated = {label for chain in chains if (label := _nearest_calendar_label([note, *chain]))}
    return ",".join(sorted(dated)) or None


def _nearest_calendar_label(lineage: list[Note]) -> str | None:
    for member in lineage:
        for name in CALENDAR_LABELS:
            value = (member.own_label(name) or "").strip()
            if _CALENDAR_VALUE.fullmatch(value):
                return value
    return None


def _skip_reason(note: Note, chains: list[list[Note]], rules: Rules) -> str | None:
    if note.note_id == ROOT or note.note_id.startswith("_"):
        return "hidden"
    if all(_through_hidden(chain) for chain in chains):
        return "hidden"
    if note.has_label("archived"):
        return "archived"
    if note.is_protected:
        return "protected"
    # Only an own #template: notes made from a template inherit its labels through ~template.
    if note.own_label("template") is not None or _is_plumbing(note, chains, rules):
        return "plumbing"
    if note.type not in INDEXABLE_TYPES:
        return "type" if note.type in KNOWN_TYPES else "unknown type"
    return None


def _is_plumbing(note: Note, chains: list[list[Note]], rules: Rules) -> bool:
    """Inside a `Locks`/`Templates`/`Views` subtree that sits under a wiki root."""
    for chain in chains:
        lineage = [note, *chain]
        for depth, member in enumerate(lineage):
            if member.title.casefold() in rules.plumbing_titles and any(
                _is_wiki_root(above, rules) for above in lineage[depth + 1 :]
            ):
                return True
    return False


def _is_wiki_root(note: Note, rules: Rules) -> bool:
    return note.title.casefold() in rules.wiki_titles or note.own_label("wikiLayer") is not None


def _area(note: Note, chain: list[Note], rules: Rules) -> str:
    lineage = [note, *chain]
    for member in lineage:
        chosen = member.own_label("recallArea")
        if chosen in AREA_RANK:
            return chosen
    if any(member.own_label(name) is not None for member in lineage for name in JOURNAL_LABELS):
        return "journal"
    for member in lineage:
        layer = member.own_label("wikiLayer")
        if layer is not None:
            return "sources" if layer.casefold() == "raw" else "wiki"
        title = member.title.casefold()
        if title in rules.sources_titles:
            return "sources"
        if title in rules.wiki_titles:
            return "wiki"
    return "other"


def _breadcrumb(chain: list[Note]) -> str:
    """The path from the top, each title cut to CRUMB_CHARS; a path deeper than CRUMBS levels
    keeps its top two and the levels nearest the note (where a journal files it), with "…" for
    the rest: a tree 2,000 levels deep gave each note a path of 2,000 titles."""
    # A protected ancestor's title is "[protected]" on the wire: it is left out of the path.
    titles = [clip(n.title, CRUMB_CHARS) for n in reversed(chain) if not n.is_protected]
    if len(titles) > CRUMBS:
        titles = [*titles[:2], "…", *titles[3 - CRUMBS :]]
    return BREADCRUMB.join(titles)


def _hidden_stub() -> Note:
    return Note(HIDDEN_ROOT, "Hidden", "text", "text/html", False, None, "", (), (), ())


def attribute_fingerprint(note: Note) -> str:
    """Changes whenever an own or inherited label/relation changes (dates do not)."""
    facts = sorted((a.note_id, a.type, a.name, a.value, a.is_inheritable) for a in note.attributes)
    return text_hash(json.dumps(facts))[:16]  # JSON is ASCII: the same digits as ever
