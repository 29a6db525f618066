"""The relevance gate: is this prompt about the notes at all, and which candidates go with it.

Two decisions, both relative, because e5 cosines sit in a narrow band whose position moves with
the corpus (0.84-0.87 for an unrelated prompt's best match on one notebook, 0.86-0.89 on
another):

1. Prompt: a logistic score over signals that carry across notebooks — how much closer the
   prompt is to its best snippet than to the closest generic prompt (`null_bank.py`), above what
   generic prompts themselves reach on this index; how much of the prompt's keyword weight the
   note meaning picked also matches (agreement); and how far the best cosine stands above the
   prompt's similarity to the whole index. A keyword match on several distinct terms passes
   too when it is stronger than any unrelated prompt of the fit reached (none is, in FITTED).
2. Candidates, in a learned order of the first ten (fused rank, cosine, keyword coverage): the
   best one, each other candidate about as strong on meaning (cosine close to the best's) or on
   keywords — not dropped because it matched fewer words — and any ranked above one that passed.

The weights are fitted by `eval/evaluate.py` on labelled prompts over ten corpora and
reported leave-one-corpus-out (eval/RESULTS.md); `FITTED` records them and their data.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

# How far prompts about the notes stand above generic chatter (margin) where a notebook gives
# no reference point of its own (calibration.py): the median over the six eval corpora measured
# (0.073-0.122, eval/RESULTS.md).
DEFAULT_SPREAD = 0.083
# The unit a calibrated margin is read in (the weights were fitted with it): the margin as if
# this notebook's spread were SPREAD_UNIT.
SPREAD_UNIT = 0.05


@dataclass(frozen=True)
class CandidateOrder:
    """Weights of the learned order of the first candidates (`hybrid.in_order`): a logistic
    "is this the note that answers?" over the candidate's fused rank (as RRF counts a rank),
    its cosine below the best candidate's, and its keyword coverage."""

    rank_weight: float
    cosine_weight: float
    coverage_weight: float

    def value(self, rank_share: float, cosine_below_best: float, coverage: float) -> float:
        return (
            self.rank_weight * rank_share
            + self.cosine_weight * cosine_below_best
            + self.coverage_weight * coverage
        )


@dataclass(frozen=True)
class GateThresholds:
    """Every number the gate uses. `strictness` shifts the prompt score (RECALL_GATE_STRICTNESS:
    positive means more silence, in logit units)."""

    bias: float
    margin_weight: float
    agreement_weight: float
    zscore_weight: float
    keyword_terms: int
    keyword_coverage: float  # above 1: keywords alone never pass (`keyword_rule`)
    neighbour_cosine_gap: float
    neighbour_coverage: float
    # A prompt in another language than the notes (the notebook's, or its closest note's) has no
    # keyword agreement by construction: its agreement term is replaced by this fitted constant
    # (0 keeps the agreement term).
    foreign_weight: float = 0.0
    # Added when the best fused note holds the prompt's pasted code or quoted text as a phrase.
    phrase_weight: float = 0.0
    # A candidate ranked above a passing one passes too (issue 23, Build 3), ranked as judged:
    # by `order` when set, else by fused score.
    keep_ranked_above: bool = False
    # Added when the prompt names technologies and none the notebook is about (technologies.py).
    stack_weight: float = 0.0
    # The margin read in units of this notebook's spread between generic prompts and prompts
    # about its notes (calibration.py), times the default spread, rather than as it is.
    calibrated_margin: bool = False
    # The order candidates are judged and sent in (`hybrid.in_order`); None: by fused score.
    order: CandidateOrder | None = None
    # Two more readings of the search (issue 23, Build 9; eval/signal_trials.py measured
    # each): the share of the prompt's keyword weight no section holds (less the words it is
    # only phrased in: phrasing.py), and the best note's fused score.
    unknown_weight: float = 0.0
    fused_weight: float = 0.0
    # A prompt naming a day that notes are filed under passes when one of them matches this
    # share of the weight of its other words ("what did I do on october 21st": none, so all):
    # a journal is looked up by date, and its day's note says nothing the date's words match.
    # "weather on the 21st" does not: no note filed that day says "weather". Above 1: off.
    filed_coverage: float = 0.5
    # A prompt that is a day and nothing more ("anything from may 19?": its words naming the
    # day carry this share of the weight) is silent when no note is filed on that day or holds
    # its words. Not lower: a date no section holds has the highest weight, and "am i off work
    # on the 28th of december?" (0.76 of it the date) asks about work, which a note may answer.
    day_only: float = 0.9
    strictness: float = 0.0

    def with_strictness(self, strictness: float) -> GateThresholds:
        return replace(self, strictness=strictness)

    @property
    def keyword_rule(self) -> bool:
        """Whether keywords alone can pass: the fit turns the rule off (a share above 1) when
        an unrelated prompt matched as much as any share could ask."""
        return self.keyword_coverage <= 1.0

    def to_json(self) -> dict[str, object]:
        return {**dataclasses.asdict(self), "keyword_rule": self.keyword_rule}


# Fitted by `python eval/evaluate.py --fit` on all ten eval corpora: the three Trilium ones
# (eval/sets/), gnucash, gimp, handbook, skycultures with their shared prompts.jsonl, and three
# developer's notebooks asked coding questions (pydocs: the Python 3.11 docs, eval/pydocs.py;
# nodedocs: the Node.js 18 API docs, eval/nodedocs.py; gitdocs: the Git 2.39 docs,
# eval/gitdocs.py; their sets in eval/sets/), 2026-12-07 (stop 48),
# on snippets of 48 tokens, a stemmed keyword index, prompts read for their topic (words that
# only say where to look left out, search/topic.py) and the dates a prompt names matched to where
# notes are filed (search/dates/; a day named from today is no unknown word), meaning search
# ranking each snippet down by half its hubness (index/hubness.py, stop 46), names that are
# everyday words a technology only beside something technical, the calendar no unknown word,
# a folder no measure of the rest (stop 47), a bank prompt that is the prompt's twin counted at
# null_bank.TWIN_COSINE and a question read without its closing mark (stop 48). The
# candidates' learned order (a
# logistic over the first ten candidates of every answerable prompt: is this the expected
# note?). Logistic weights (`SCORE_INPUTS`: the margin read in this notebook's spread, agreement
# unless the prompt is in another language than the notebook or its closest note, that case's
# own weight, the code-phrase weight, the weight of a prompt about another stack, and two
# readings of the search: unknown words, fused top). With the fused top read, the code phrase's
# own weight is small (its sign has moved between refits): a section holding the phrase already
# ranks first in the fusion (PHRASE_WEIGHT), and that rank is what the fused top carries. Each
# corpus is fitted with the generic prompts judged its own prompts' paraphrases left out of the
# bank (eval/sets/bank_twins.json).
# The bias that keeps a training share of the unrelated prompts silent, that share (94 %) chosen
# by inner leave-one-corpus-out folds for the best hit@3 + 2 × silence; the keyword rule just
# above the strongest unrelated match (an unrelated prompt, "c# [Flags] enum, how do i check if
# one flag is set" to the Python docs, matched all five of its words in one section, so the
# rule is off: above 1); the neighbour gap with the best hit@3 + MRR less 0.01 a passage. The
# two day rules (`filed_coverage`, `day_only`) are set, not fitted: no labelled prompt names
# only a day.
# In-sample; the same procedure fitted on nine corpora and scored on the tenth is what
# eval/RESULTS.md reports.
FITTED = GateThresholds(
    bias=-5.735,
    margin_weight=84.6449,
    agreement_weight=4.1398,
    zscore_weight=0.4461,
    keyword_terms=3,
    keyword_coverage=1.05,
    neighbour_cosine_gap=0.02,
    neighbour_coverage=0.5,
    foreign_weight=6.7189,
    phrase_weight=0.0359,
    stack_weight=-3.4747,
    keep_ranked_above=True,
    calibrated_margin=True,
    order=CandidateOrder(rank_weight=43.1252, cosine_weight=66.9472, coverage_weight=3.162),
    unknown_weight=-5.0184,
    fused_weight=3.0889,
    filed_coverage=0.5,
    day_only=0.9,
)


@dataclass(frozen=True)
class PromptSignals:
    """What the prompt-level decision reads, all taken from the best candidates."""

    top_cosine: float  # best snippet of any candidate
    generic_cosine: float  # closest generic prompt (query–query)
    generic_prompt: str
    offset: float  # the margin generic prompts reach on this index (GenericPrompts.offset)
    agreement: float  # share of the prompt's IDF weight the top-cosine section matches
    coverage: float  # best share of the prompt's IDF weight one section matched
    terms: int  # distinct prompt terms in that section
    zscore: float  # top_cosine against the prompt's cosine over every snippet
    foreign: bool = False  # the prompt's language is none of the notebook's (languages.py)
    phrase: bool = False  # the best fused note holds one of the prompt's code phrases
    other_stack: bool = False  # it names technologies, none the notebook's (technologies.py)
    spread: float = DEFAULT_SPREAD  # about-level minus generic level here (calibration.py)
    unknown_share: float = 0.0  # the prompt's IDF weight in terms no section holds (phrasing.py)
    fused_top: float = 0.0  # the best note's fused score (before its area weight)
    # The best share of the prompt's keyword weight outside the day it names (and words that
    # only ask what the day held) a note filed on that day matched; 1 for a prompt that is only
    # the day; 0 when no note is filed on it (dates/filed.py, signals._filed_signals).
    filed_coverage: float = 0.0
    # The share of the weight in words naming a day that no note is filed on or holds.
    unfiled_day_share: float = 0.0
    # The share of the weight beside the day and the words that only ask what it held
    # ("restore the restic backup" of "… from last week"; 0 for "what did I do yesterday").
    beside_the_day: float = 0.0

    @property
    def margin(self) -> float:
        """How much closer the notes are than generic chatter, above this index's usual."""
        return self.top_cosine - self.generic_cosine - self.offset

    @property
    def scaled_margin(self) -> float:
        """The margin in this notebook's own units (see GateThresholds.calibrated_margin)."""
        return self.margin / self.spread * SPREAD_UNIT


@dataclass(frozen=True)
class PromptVerdict:
    about_notes: bool
    score: float
    parts: dict[str, float]  # each signal's share of the score
    reason: str
    filed: bool = False  # passed as naming a day notes are filed under: those notes answer
    # with `filed`: the score passes it too, so what it found goes along with the day's notes
    # ("how do i restore the restic backup from last week": the restic notes and the journal)
    scored: bool = False


@dataclass(frozen=True)
class CandidateSignals:
    cosine: float
    coverage: float
    terms: int
    filed: bool = False  # filed on a day the prompt names (dates/filed.py)
    # Of the prompt's weight beside the days it names loosely, the share this note matches (1:
    # the prompt is only the days, or names them closely). Filed notes answer only when it
    # reaches `filed_coverage`: a month holds many notes, and "what did I note about postgres
    # tuning last month" asks for one of them.
    filed_share: float = 1.0
    another_day: bool = False  # the journal files it on a day, and none the prompt names
    journal_day: bool = False  # the journal files it on a day
    holds_day: bool = False  # its own text names a whole day the prompt names
    folder: bool = False  # only a title with notes under it (candidates.folders)


@dataclass(frozen=True)
class ScoreInput:
    """One input of the prompt's logistic score: the name `explain` shows it under, the
    `GateThresholds` field holding its weight, and how it is read from the signals. The one list
    of them (`SCORE_INPUTS`) is what the product scores and what eval/fit.py fits, in this order."""

    name: str
    weight: str
    read: Callable[[PromptSignals, GateThresholds], float]


SCORE_INPUTS = (
    ScoreInput(
        "margin", "margin_weight", lambda s, t: s.scaled_margin if t.calibrated_margin else s.margin
    ),
    # A prompt in another language has no keyword agreement by construction (see foreign_weight).
    ScoreInput("agreement", "agreement_weight", lambda s, t: 0.0 if s.foreign else s.agreement),
    ScoreInput("zscore", "zscore_weight", lambda s, t: s.zscore),
    ScoreInput("foreign language", "foreign_weight", lambda s, t: float(s.foreign)),
    ScoreInput("code phrase", "phrase_weight", lambda s, t: float(s.phrase)),
    ScoreInput("another stack", "stack_weight", lambda s, t: float(s.other_stack)),
    ScoreInput("unknown words", "unknown_weight", lambda s, t: s.unknown_share),
    ScoreInput("fused top", "fused_weight", lambda s, t: s.fused_top),
)


def score_inputs(signals: PromptSignals, t: GateThresholds) -> list[float]:
    """The values `judge_prompt` weighs, in `SCORE_INPUTS` order (what the fit reads)."""
    return [i.read(signals, t) for i in SCORE_INPUTS]


def judge_prompt(signals: PromptSignals, t: GateThresholds) -> PromptVerdict:
    """Logistic score over the prompt's signals. Before it, a prompt that is mostly a day it
    names: it passes when notes filed on that day match enough of it (those notes are then the
    candidates) and is silent when none is filed on it. After it, a strong keyword match passes
    where the thresholds have that rule (`keyword_rule`)."""
    parts = {"bias": t.bias - t.strictness}
    for i, value in zip(SCORE_INPUTS, score_inputs(signals, t), strict=True):
        # `+ 0.0` keeps an input that is off at 0.0 rather than -0.0 under a negative weight.
        parts[i.name] = getattr(t, i.weight) * value + 0.0
    score = math.fsum(parts.values())
    if signals.filed_coverage >= t.filed_coverage:
        reason = f"a day notes are filed under, matching {signals.filed_coverage:.0%} of the rest"
        scored = score >= 0 and signals.beside_the_day > 0  # it asks about more than the day
        if scored:
            reason += f", and about the notes: score {score:+.2f}"
        return PromptVerdict(True, score, parts, reason, filed=True, scored=scored)
    if signals.unfiled_day_share >= t.day_only:
        share = signals.unfiled_day_share
        reason = f"a day no note is filed under: {share:.0%} of the weight names it"
        return PromptVerdict(False, score, parts, reason)
    if score >= 0:
        return PromptVerdict(True, score, parts, f"about the notes: score {score:+.2f}")
    if _strong_keywords(signals.terms, signals.coverage, t):
        reason = f"keywords: {signals.terms} terms carry {signals.coverage:.0%} of the weight"
        return PromptVerdict(True, score, parts, reason)
    return PromptVerdict(False, score, parts, f"not about the notes: score {score:+.2f}")


def judge_candidates(
    candidates: Sequence[CandidateSignals], prompt: PromptVerdict, t: GateThresholds
) -> list[tuple[bool, str]]:
    """(passed, reason) per candidate (given in the order they are judged: fused, or learned),
    relative to the best of them; with `keep_ranked_above`, a candidate ranked above a passing one
    is not dropped. A note filed on another day than the prompt names never passes. A prompt
    passed as a day gets that day's notes, and what the score finds too if it passes as well."""
    if not candidates:
        return []
    if not prompt.about_notes:
        return [(False, "prompt is not about the notes")] * len(candidates)
    if prompt.filed and not prompt.scored:
        return _filed_candidates(candidates, t)
    verdicts = _related_candidates(candidates, t)
    if prompt.filed:  # the day's notes on the topic go along with what the prompt found
        verdicts = [
            (True, "filed on the day") if _filed_answer(c, t) else v
            for c, v in zip(candidates, verdicts, strict=True)
        ]
    return verdicts


def _related_candidates(
    candidates: Sequence[CandidateSignals], t: GateThresholds
) -> list[tuple[bool, str]]:
    """The best candidate, each about as strong on meaning or keywords, and (with
    `keep_ranked_above`) any ranked above one that passed; never another day's journal note.
    A folder is no measure of the others: its bare title sits close to a short prompt (nor does
    it vouch for the prompt: signals.prompt_signals)."""
    measures = [c for c in candidates if not c.folder] or candidates
    best_cosine = max(c.cosine for c in measures)
    best_coverage = max(c.coverage for c in measures)
    verdicts = []
    for c in candidates:
        gap = max(0.0, best_cosine - c.cosine)  # a folder may stand above the best
        if c.another_day:
            verdicts.append((False, "filed on another day than the prompt names"))
        elif gap <= t.neighbour_cosine_gap:
            verdicts.append((True, f"meaning: cosine {c.cosine:.3f}, {gap:.3f} below the best"))
        elif _strong_keywords(c.terms, c.coverage, t) or (
            c.terms >= 2 and c.coverage >= max(t.neighbour_coverage, best_coverage)
        ):
            verdicts.append((True, f"keywords: {c.terms} terms, {c.coverage:.0%} of the weight"))
        else:
            verdicts.append(
                (False, f"weaker: cosine {gap:.3f} below the best (max {t.neighbour_cosine_gap})")
            )
    if t.keep_ranked_above:
        last = max((i for i, (passed, _) in enumerate(verdicts) if passed), default=-1)
        verdicts = [
            (True, f"ranked above a passing note ({reason})")
            if i < last and not ok and not candidates[i].another_day
            else (ok, reason)
            for i, (ok, reason) in enumerate(verdicts)
        ]
    return verdicts


def _filed_candidates(
    candidates: Sequence[CandidateSignals], t: GateThresholds
) -> list[tuple[bool, str]]:
    """For a prompt that is a day: the notes filed on it, and any other whose own text names
    the day and that matches as much of the prompt ("the restore test on 2026-10-21" in the
    backup note); never another day's journal note ("last wednesday" is not every Wednesday)."""
    best = max((c.coverage for c in candidates if _filed_answer(c, t)), default=0.0)
    return [
        (True, "filed on the day")
        if _filed_answer(c, t)
        else (True, f"names the day, {c.coverage:.0%} of the weight as the day's notes")
        if c.holds_day and not c.journal_day and c.coverage >= best
        else (False, "filed then, but not on the prompt's topic")
        if c.filed
        else (False, "not filed on the day")
        for c in candidates
    ]


def _filed_answer(c: CandidateSignals, t: GateThresholds) -> bool:
    """Filed on a day the prompt names, and about what else it asks (all of it, for a prompt
    that is only the day)."""
    return c.filed and c.filed_share >= t.filed_coverage


def _strong_keywords(terms: int, coverage: float, t: GateThresholds) -> bool:
    return t.keyword_rule and terms >= t.keyword_terms and coverage >= t.keyword_coverage
