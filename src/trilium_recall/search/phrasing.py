"""Words that phrase a prompt rather than name its subject, so they are not read as a subject
the notes lack.

The gate counts the share of a prompt's keyword weight in words no note holds: a prompt about
what a notebook never mentions ("restic", a product's name) is less likely about it.
A notebook need not hold the words a prompt is phrased in, though: everyday English ("why did
we disable jit" to notes that say "jit = off", "make sure the call blows up", "a quick and
dirty way to time it") and a command's short options run together ("git clean -fdx" to a
manual that documents -f, -d and -x one by one), the calendar ("in May 2024", "every
Sunday"), and what the person quotes: their own data, a search pattern, a branch or file name
("git grep -n 'FIXME'", "error: The branch 'old-experiment' is not fully merged"). Those are
left out of that share (eval/RESULTS.md, stops 45, 47 and 49). Backticks are not quotes here:
they mark code, and a name in code is the subject ("`useEffect` runs twice"). An everyday
word can be a prompt's subject too ("prune the apple tree" to a git manual): it then counts
for nothing, and the other signals decide.

The everyday list is SCOWL's "small" American English (size 35, Debian's `wamerican-small`
2020.12.07-2), its lower-case words only: a name written with a capital is a proper noun,
which a notebook lacking it may well not be about. Its copyright and permission notice is
`everyday_words.COPYRIGHT`, shipped beside it.
"""

from __future__ import annotations

import functools
import gzip
import re
from importlib import resources

from ..index.terms import MAX_PHRASE_CHARS, words
from .dates.words import ENGLISH_MONTHS, ENGLISH_WEEKDAYS, MONTH_ABBREVIATIONS

WORDS_FILE = "everyday_words.txt.gz"
# The calendar: a prompt set on a day, in a month or a year ("how do I enter a transaction in May
# 2024", "reconcile every Sunday") names when, not what; a note need not hold it to answer.
# (The list of everyday words holds lower-case words only, so not "sunday" or "june".)
_WEEKDAYS_SAID = [*ENGLISH_WEEKDAYS, *(f"{day}s" for day in ENGLISH_WEEKDAYS)]
_CALENDAR = frozenset([*_WEEKDAYS_SAID, *ENGLISH_MONTHS, *MONTH_ABBREVIATIONS, "sept"])
_YEAR = re.compile(r"(?:19|20)\d\d")
# A command's short options run together: "git clean -fdx", "tar -xvzf", "rm -rf" (a dash
# autocorrected to an en dash too); not a word set off by dashes ("-sigh-", "–ish—").
_OPTION_BUNDLE = re.compile(r"(?<![\w\-–—])[-–]([A-Za-z]{2,5})(?![\w\-–—])")
# Text in single, double or typographic quotes on one line, paired left to right. A mark inside
# or after a word opens nothing ("don't", "the admins' keys", a 5" screen), nor does one before
# a word close anything ("don’t" in ‘I don’t use it’).
_QUOTED = re.compile(
    r"(?<![\w'])'([^'\n]+)'(?![\w'])|(?<![\w\"])\"([^\"\n]+)\"(?![\w\"])"
    r"|“([^”\n]+)”|‘([^\n]+?)’(?!\w)"
)
QUOTED_CHARS = 80  # longer quoted text is a pasted message of its own, read as the prompt is


@functools.cache
def everyday_words() -> frozenset[str]:
    """The everyday list, read once (about 40,000 words, ~20 ms)."""
    data = resources.files(__package__).joinpath(WORDS_FILE).read_bytes()
    return frozenset(gzip.decompress(data).decode("ascii").split())


def option_bundles(prompt: str) -> set[str]:
    """The words of the prompt that are a command's bundled short options ("fdx" of "-fdx"),
    read in its start as its code is (a pasted log's later lines are not read)."""
    return {match[1].lower() for match in _OPTION_BUNDLE.finditer(prompt[:MAX_PHRASE_CHARS])}


def quoted_words(prompt: str) -> set[str]:
    """The words the prompt quotes, as `words()` splits them, read in its start as its code is."""
    spans = (next(g for g in m.groups() if g) for m in _QUOTED.finditer(prompt[:MAX_PHRASE_CHARS]))
    return {word for span in spans if len(span) <= QUOTED_CHARS for word in words(span)}


def without_phrasing(unknown: list[str], prompt: str) -> list[str]:
    """`unknown` (words no note holds) less the everyday words, the calendar's, option
    bundles and quoted words among them."""
    if not unknown:
        return unknown
    everyday, options, quoted = everyday_words(), option_bundles(prompt), quoted_words(prompt)
    return [
        term
        for term in unknown
        if term not in everyday
        and term not in options
        and term not in quoted
        and term not in _CALENDAR
        and not _YEAR.fullmatch(term)
    ]
