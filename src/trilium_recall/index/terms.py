"""Words as the keyword index sees them: SQLite FTS5's own tokenizers, nothing else.

The index splits with unicode61 and stems with FTS5's Porter stemmer, so "novels" finds
"novel" and "restoring" finds "restore" (held out over nine corpora, hit@3 0.763 -> 0.782:
eval/RESULTS.md, stop 37). Two views of a text, both split exactly where FTS5 splits (a `\\w+`
split kept `shared_buffers` whole while FTS5 indexes `shared` and `buffers`: a count of 0 and a
maximal IDF for a common word):

- `words()`: as written (case and accents folded). Prompt terms are words, so `explain` shows
  what the person typed and FTS5 stems each term of a query itself; language marker words and
  technology names are told by words, not stems ("ios" and Python's "io" share a stem).
- `tokenize()`: as the index holds them (stemmed). A word's document count and whether a
  section matched it are read through `index_term()`. Stemming a stem again can change it
  ("licens" -> "licen"), so a stem is never sent as a query.
"""

from __future__ import annotations

import functools
import math
import re
import threading
from collections.abc import Collection, Sequence

import apsw

# Must equal the `tokenize =` option of the sections_fts table (m015_stemmed_keywords); a test
# checks it. WORD_TOKENIZER is the same split without the stemmer.
FTS_TOKENIZER = ("porter", ("unicode61", "remove_diacritics", "2"))
WORD_TOKENIZER = ("unicode61", ("remove_diacritics", "2"))
STEMMED_BYTES = 64  # FTS5's Porter stemmer leaves longer tokens as they are
MAX_TERMS = 24
MAX_PHRASES = 6
MAX_PHRASE_CHARS = 4000  # code is looked for in the prompt's start: a pasted log's head says enough
MAX_PHRASE_TOKENS = 8  # a longer "identifier" is a run of text, not a name to match as a phrase
# What a developer pastes: `quoted code`, "quoted text", dotted or underscored identifiers
# (os.path.join, shared_buffers, std::vector), CamelCase names (KeyError), --flags and paths.
# An identifier starts at a word's start only, and its parts cannot hold its separators: a run of
# word characters is then scanned once, not retried from every position (a 1 MB prompt of "x"
# took minutes with the first pattern). Prompts are read up to MAX_PHRASE_CHARS anyway.
_CODE = re.compile(
    r"`([^`\n]{2,80})`"
    r"|\"([^\"\n]{3,80})\""
    r"|(?<![\w-])((?:--?)?[A-Za-z_][A-Za-z0-9-]*(?:(?:\.|::|/|_+|~|\^)[A-Za-z0-9-]+)+_*(?:\(\))?)"
    r"|\b([a-z]*[A-Z][a-z0-9]+[A-Z]\w*)"
    r"|(--[a-z][\w-]+)"
)
# English function words (with the contractions as FTS5 splits them, "don" "t", and as people
# type them without the apostrophe, "dont"), the verbs of asking, and the commonest German,
# French and Spanish ones.
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll ve re m don doesn didn isn aren wasn weren won wouldn couldn shouldn please tell
    dont doesnt didnt isnt arent wasnt werent wont wouldnt couldnt shouldnt cant hasnt havent
    im ive youre youve youll youd theyre theyve theyll weve hes shes heres whos wheres hows
    thats whats theres aint hadnt mustnt neednt shant
    show give find know need want like get got use used using make
    way thing things something anything also vs versus der die das und ist ein eine nicht mit
    wie was ich
    le la les de des et est un une pour el los las y en que por con para""".split()
)

_local = threading.local()
# A prompt's pairs that carry its grammar, not its topic (_grammar).
_HIRAGANA = re.compile(r"[\u3040-\u309f]")
_CJK_FUNCTION_PAIRS = frozenset(
    "怎么 什么 为什 如何 可以 需要 一下 这个 那个 哪个 是否 没有".split()
)
# Chinese, Japanese and Korean write a phrase's words together: unicode61 keeps a whole run as
# one token, so "冰糖" in a prompt never matched a note's "加冰糖炒色". Both sides, the index and
# the prompt, read such a run as its overlapping pairs of characters (the usual bigram indexing
# of CJK text): "加冰 冰糖 糖炒 炒色". Other text is read as it is.
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]{2,}")


def tokenize_option(which: tuple[str, tuple[str, ...]]) -> str:
    """A tokenizer as FTS5's `tokenize =` option spells it ("porter unicode61 …")."""
    name, args = which
    return " ".join((name, *args))


def tokenize(text: str) -> list[str]:
    """FTS5 tokens of `text` as the index holds them: case-folded, diacritics removed, split
    where FTS5 splits, stemmed."""
    return _split(FTS_TOKENIZER, text)


def words(text: str) -> list[str]:
    """The same tokens as written: case-folded, diacritics removed, not stemmed."""
    return _split(WORD_TOKENIZER, text)


def index_term(word: str) -> str:
    """The form the index holds a word (one of `words()`) under. FTS5's stemmer leaves a token
    of more than 64 bytes whole, and such words (a hex dump, minified code) stay out of the
    cache."""
    return word if len(word.encode()) > STEMMED_BYTES else _stem(word)


@functools.lru_cache(maxsize=1 << 16)  # asked for every prompt term of every candidate section
def _stem(word: str) -> str:
    stems = tokenize(word)
    return stems[0] if stems else word


def cjk_pairs(text: str) -> str:
    """The text as the keyword index reads it: each run of CJK characters as its overlapping
    pairs (a pair stays a pair: reading the index's own text again changes nothing)."""
    if not _CJK_RUN.search(text):
        return text
    return _CJK_RUN.sub(_spaced_pairs, text)


def _spaced_pairs(run: re.Match[str]) -> str:
    """A run's pairs, apart from any word written against it ("Python的列表")."""
    text, start, end = run.string, run.start(), run.end()
    before = " " if start and not text[start - 1].isspace() else ""
    after = " " if end < len(text) and not text[end].isspace() else ""
    return before + " ".join(run[0][i : i + 2] for i in range(len(run[0]) - 1)) + after


def is_cjk_pair(term: str) -> bool:
    return len(term) == 2 and _CJK_RUN.fullmatch(term) is not None


def _split(which: tuple[str, tuple[str, ...]], text: str) -> list[str]:
    tokenizers = getattr(_local, "tokenizers", None)
    if tokenizers is None:
        # A private in-memory connection per thread: apsw objects must not be shared across
        # threads mid-call. Tokenizing ~2 kB costs ~20 µs (measured), less than a regex split.
        _local.db = apsw.Connection(":memory:")
        tokenizers = _local.tokenizers = {}
    if which not in tokenizers:
        name, args = which
        tokenizers[which] = _local.db.fts5_tokenizer(name, list(args))
    data = cjk_pairs(text).encode("utf-8", "replace")
    return tokenizers[which](
        data, apsw.FTS5_TOKENIZE_DOCUMENT, None, include_offsets=False, include_colocated=False
    )


def prompt_terms(prompt: str) -> list[str]:
    """Distinct content words of the prompt, in order, one per stem ("note" and "notes" are one
    term, shown as first written): the keyword side's vocabulary. A stop word that is part of
    code is a name ("`once` vs `on`", "Promise.any")."""
    terms: dict[str, str] = {}
    code = {token for tokens, prose in _code_tokens(prompt) if not prose for token in tokens}
    for word in words(prompt):
        if len(word) > 1 and (word not in STOP_WORDS or word in code) and not _grammar(word):
            terms.setdefault(index_term(word), word)
            if len(terms) == MAX_TERMS:  # a pasted log's later words are not stemmed at all
                break
    return list(terms.values())


def _grammar(word: str) -> bool:
    """A pair of CJK characters that carries a sentence's grammar, not a topic a note holds:
    one with Japanese hiragana ("する", "を逆": particles and endings; the topic is in its kanji
    and katakana) or a Chinese question word ("怎么", "什么")."""
    return is_cjk_pair(word) and (_HIRAGANA.search(word) is not None or word in _CJK_FUNCTION_PAIRS)


def idf(total: int, count: int) -> float:
    """A term's inverse document frequency among `total` sections, `count` holding it (a term
    no section holds still gets a finite weight, the highest)."""
    return math.log((total + 1) / (count + 0.5))


def fts_query(terms: Sequence[str]) -> str:
    """Each term quoted (FTS5 operators in the prompt stay plain text), OR-ed together."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


def matched_terms(terms: Sequence[str], *texts: str) -> tuple[str, ...]:
    """The prompt terms (words) that occur in any of `texts` in any form of their stem, in
    prompt order."""
    return terms_in(terms, stems(*texts))


def stems(*texts: str) -> set[str]:
    """Every token of `texts` as the index holds it."""
    return {token for text in texts for token in tokenize(text)}


def terms_in(terms: Sequence[str], held: Collection[str]) -> tuple[str, ...]:
    """The prompt terms whose stem is among the `held` stems, in prompt order."""
    return tuple(term for term in terms if index_term(term) in held)


def code_phrases(prompt: str) -> list[str]:
    """The prompt's code and quoted text as FTS5 phrase queries, split where FTS5 splits
    (`shared_buffers` is the phrase "shared buffers"): evidence stronger than loose words."""
    phrases: dict[str, None] = {}
    for tokens, _ in _code_tokens(prompt):
        if not all(t in STOP_WORDS for t in tokens):  # "`once`" alone is in nearly every section
            phrases['"' + " ".join(t.replace('"', '""') for t in tokens) + '"'] = None
    return list(phrases)[:MAX_PHRASES]


def _code_tokens(prompt: str) -> list[tuple[list[str], bool]]:
    """(tokens, whether quoted prose) of each piece of code or "quoted text" in the prompt's
    start: a single word only in backticks or as a CamelCase or dotted name; never single
    letters ("e.g.", "a/b") or stop words alone unless in backticks ("and/or"; "`once`"), nor
    a run of text too long to be a name."""
    found = []
    for match in _CODE.finditer(prompt[:MAX_PHRASE_CHARS]):
        tokens = words(next(group for group in match.groups() if group))
        if not tokens or len(tokens) > MAX_PHRASE_TOKENS or all(len(t) == 1 for t in tokens):
            continue
        if not match.group(1) and all(t in STOP_WORDS for t in tokens):
            continue
        if len(tokens) > 1 or match.group(1) or match.group(3) or match.group(4):
            found.append((tokens, match.group(2) is not None))
    return found
