"""Words of everyday English, so a prompt's phrasing is not read as a subject the notes lack.

The gate counts the share of a prompt's keyword weight in words no note holds: a prompt about
what a notebook never mentions ("restic", "FIXME", a product's name) is less likely about it.
A notebook need not hold the everyday words a prompt is phrased in, though: "why did we
disable jit" to notes that say "jit = off", "make sure the call blows up", "a quick and dirty
way to time it" (eval/RESULTS.md, stop 45). Those words are left out of that share.

The list is SCOWL's "small" American English (size 35, Debian's `wamerican-small`
2020.12.07-2), its lower-case words only: a name written with a capital is a proper noun,
which a notebook lacking it may well not be about. Its copyright and permission notice is
`everyday_words.COPYRIGHT`, shipped beside it.
"""

from __future__ import annotations

import functools
import gzip
from importlib import resources

WORDS_FILE = "everyday_words.txt.gz"


@functools.cache
def everyday_words() -> frozenset[str]:
    """The list, read once (about 40,000 words, ~10 ms)."""
    data = resources.files(__package__).joinpath(WORDS_FILE).read_bytes()
    return frozenset(gzip.decompress(data).decode("ascii").split())
