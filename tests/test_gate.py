"""The gate's two decisions as pure functions: every path, with the reason it gives."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from trilium_recall.search.gate import (
    SCORE_INPUTS,
    SPREAD_UNIT,
    CandidateSignals,
    GateThresholds,
    PromptSignals,
    judge_candidates,
    judge_prompt,
    score_inputs,
)

GATE = GateThresholds(
    bias=-2.0,
    margin_weight=100.0,
    agreement_weight=4.0,
    zscore_weight=0.5,
    keyword_terms=3,
    keyword_coverage=0.7,
    neighbour_cosine_gap=0.02,
    neighbour_coverage=0.5,
)


def signals(**changes: float) -> PromptSignals:
    base = PromptSignals(
        top_cosine=0.88,
        generic_cosine=0.86,
        generic_prompt="fix the failing test",
        offset=-0.02,
        agreement=0.0,
        coverage=0.0,
        terms=0,
        zscore=0.0,
    )
    return replace(base, **changes)


def test_margin_is_measured_above_what_generic_prompts_reach_on_this_index() -> None:
    assert signals().margin == pytest.approx(0.88 - 0.86 + 0.02)


def test_a_prompt_passes_on_its_score_and_each_signal_s_share_adds_up() -> None:
    verdict = judge_prompt(signals(agreement=0.25), GATE)  # -2 + 100·0.04 + 4·0.25 = +3
    assert verdict.about_notes
    assert verdict.parts == pytest.approx(
        {
            "bias": -2.0,
            "margin": 4.0,
            "agreement": 1.0,
            "zscore": 0.0,
            "foreign language": 0.0,
            "code phrase": 0.0,
            "another stack": 0.0,
            "unknown words": 0.0,
            "fused top": 0.0,
        }
    )
    assert verdict.score == pytest.approx(3.0)
    assert verdict.reason == "about the notes: score +3.00"


def test_the_search_readings_each_add_their_weighted_share() -> None:
    weighted = replace(GATE, unknown_weight=-2.0, fused_weight=1.5)
    read = signals(agreement=0.25, unknown_share=0.5, fused_top=0.4)
    verdict = judge_prompt(read, weighted)
    expected = {"unknown words": -1.0, "fused top": 0.6}
    assert {k: verdict.parts[k] for k in expected} == pytest.approx(expected)
    assert verdict.score == pytest.approx(3.0 + sum(expected.values()))
    assert judge_prompt(read, GATE).score == pytest.approx(3.0)  # unweighted: no share


def test_every_weight_of_the_prompt_score_has_one_input_and_the_score_is_their_sum() -> None:
    # The fit (eval/fit.py) maps its weights back by SCORE_INPUTS' order: a weight field with
    # no input, or one read twice, would be fitted into the wrong place.
    weight_fields = {
        f.name for f in fields(GateThresholds) if f.name.endswith("_weight") and f.type == "float"
    }
    assert sorted(i.weight for i in SCORE_INPUTS) == sorted(weight_fields)
    assert len({i.name for i in SCORE_INPUTS}) == len(SCORE_INPUTS)
    weights = {name: float(n + 1) for n, name in enumerate(sorted(weight_fields))}
    gate = replace(GATE, **weights)
    read = signals(
        agreement=0.3,
        zscore=1.2,
        phrase=True,
        other_stack=True,
        unknown_share=0.4,
        fused_top=0.7,
    )
    values = score_inputs(read, gate)
    expected = gate.bias + sum(
        getattr(gate, i.weight) * v for i, v in zip(SCORE_INPUTS, values, strict=True)
    )
    score = judge_prompt(read, gate).score
    assert score == pytest.approx(expected)
    for i, value in zip(SCORE_INPUTS, values, strict=True):  # each weight scales its own input
        bumped = replace(gate, **{i.weight: getattr(gate, i.weight) + 1.0})
        assert judge_prompt(read, bumped).score - score == pytest.approx(value)


def test_a_prompt_closer_to_generic_chatter_than_to_the_notes_is_not_about_them() -> None:
    verdict = judge_prompt(signals(top_cosine=0.84, offset=0.0), GATE)  # margin -0.02
    assert not verdict.about_notes
    assert verdict.reason == "not about the notes: score -4.00"


def test_strictness_shifts_the_score_both_ways() -> None:
    borderline = signals(top_cosine=0.84, generic_cosine=0.84, offset=0.0)  # score -2
    assert judge_prompt(borderline, replace(GATE, strictness=-2.5)).about_notes
    assert not judge_prompt(signals(), replace(GATE, strictness=5.0)).about_notes


def test_a_strong_keyword_match_on_several_terms_passes_a_low_score() -> None:
    weak_meaning = signals(top_cosine=0.80, offset=0.0)
    strong = judge_prompt(replace(weak_meaning, terms=3, coverage=0.75), GATE)
    assert strong.about_notes and strong.score < 0
    assert strong.reason == "keywords: 3 terms carry 75% of the weight"
    assert not judge_prompt(replace(weak_meaning, terms=2, coverage=0.9), GATE).about_notes
    assert not judge_prompt(replace(weak_meaning, terms=4, coverage=0.6), GATE).about_notes


def test_a_keyword_rule_above_every_share_never_passes_a_prompt_on_keywords() -> None:
    # The fit sets it above 1 when an unrelated prompt matched 95 % of its words or more.
    off = replace(GATE, keyword_coverage=1.05)
    every_word = replace(signals(top_cosine=0.80, offset=0.0), terms=5, coverage=1.0)
    assert judge_prompt(every_word, GATE).about_notes
    assert not judge_prompt(every_word, off).about_notes
    assert GATE.to_json()["keyword_rule"] is True and off.to_json()["keyword_rule"] is False
    assert off.to_json()["keyword_coverage"] == 1.05


def test_candidates_go_with_the_best_when_about_as_strong_on_meaning() -> None:
    about = judge_prompt(signals(), GATE)
    verdicts = judge_candidates(
        [
            CandidateSignals(cosine=0.90, coverage=0.6, terms=3),
            CandidateSignals(cosine=0.885, coverage=0.1, terms=1),  # fewer words, same strength
            CandidateSignals(cosine=0.86, coverage=0.2, terms=1),
        ],
        about,
        GATE,
    )
    assert verdicts == [
        (True, "meaning: cosine 0.900, 0.000 below the best"),
        (True, "meaning: cosine 0.885, 0.015 below the best"),
        (False, "weaker: cosine 0.040 below the best (max 0.02)"),
    ]


def test_a_candidate_weaker_on_meaning_goes_along_on_strong_keywords() -> None:
    about = judge_prompt(signals(), GATE)
    verdicts = judge_candidates(
        [
            CandidateSignals(cosine=0.90, coverage=0.3, terms=2),
            CandidateSignals(cosine=0.85, coverage=0.8, terms=3),  # the keyword rule
            CandidateSignals(cosine=0.85, coverage=0.55, terms=2),  # best coverage, ≥ 2 terms
            CandidateSignals(cosine=0.85, coverage=0.55, terms=1),
        ],
        about,
        GATE,
    )
    assert [passed for passed, _ in verdicts] == [True, True, False, False]
    assert verdicts[1] == (True, "keywords: 3 terms, 80% of the weight")


def test_a_folder_is_no_measure_of_the_other_candidates() -> None:
    """A bare title ("Crop") sits closer to a short prompt than the note that answers it."""
    about = judge_prompt(signals(), GATE)
    notes = [
        CandidateSignals(cosine=0.86, coverage=0.3, terms=1),
        CandidateSignals(cosine=0.85, coverage=0.3, terms=1),
        CandidateSignals(cosine=0.80, coverage=0.1, terms=1),
    ]
    folder = CandidateSignals(cosine=0.93, coverage=0.3, terms=1)
    as_leaf = judge_candidates([folder, *notes], about, GATE)
    as_folder = judge_candidates([replace(folder, folder=True), *notes], about, GATE)
    assert [passed for passed, _ in as_leaf] == [True, False, False, False]
    assert [passed for passed, _ in as_folder] == [True, True, True, False]
    assert as_folder[1] == (True, "meaning: cosine 0.860, 0.000 below the best")
    only = judge_candidates([replace(folder, folder=True)], about, GATE)
    assert only == [(True, "meaning: cosine 0.930, 0.000 below the best")]


def test_no_candidate_passes_when_the_prompt_is_not_about_the_notes() -> None:
    rejected = judge_prompt(signals(top_cosine=0.80, offset=0.0), GATE)
    verdicts = judge_candidates([CandidateSignals(0.80, 0.9, 5)], rejected, GATE)
    assert verdicts == [(False, "prompt is not about the notes")]
    assert judge_candidates([], rejected, GATE) == []


def test_a_candidate_ranked_above_a_passing_one_is_not_dropped() -> None:
    """Issue 23: the 2nd by fusion was dropped for a cosine gap while the 3rd passed."""
    about = judge_prompt(signals(), GATE)
    ranked = [  # best fused first
        CandidateSignals(cosine=0.90, coverage=0.2, terms=1),
        CandidateSignals(cosine=0.86, coverage=0.1, terms=1),  # 0.04 below: dropped alone
        CandidateSignals(cosine=0.89, coverage=0.1, terms=1),  # passes on meaning
        CandidateSignals(cosine=0.84, coverage=0.1, terms=1),  # below every passing one
    ]
    landed = judge_candidates(ranked, about, GATE)
    ordered = judge_candidates(ranked, about, replace(GATE, keep_ranked_above=True))
    assert [passed for passed, _ in landed] == [True, False, True, False]
    assert [passed for passed, _ in ordered] == [True, True, True, False]
    assert ordered[1][1].startswith("ranked above a passing note (weaker: cosine 0.040")
    assert ordered[3] == landed[3]


def test_a_prompt_in_another_language_is_not_asked_for_keyword_agreement() -> None:
    gate = replace(GATE, foreign_weight=1.5)
    english = judge_prompt(signals(agreement=0.25), gate)
    foreign = judge_prompt(signals(agreement=0.25, foreign=True), gate)
    assert english.parts["agreement"] == pytest.approx(1.0)
    assert english.parts["foreign language"] == 0.0
    assert foreign.parts["agreement"] == 0.0
    assert foreign.parts["foreign language"] == pytest.approx(1.5)
    assert foreign.score == pytest.approx(english.score + 0.5)


def test_a_calibrated_margin_is_read_in_the_notebook_s_own_spread() -> None:
    wide = signals(spread=0.10)  # this notebook's about-level stands 0.10 above generic chatter
    assert wide.margin == pytest.approx(0.04)
    assert wide.scaled_margin == pytest.approx(0.04 / 0.10 * SPREAD_UNIT)
    plain = judge_prompt(wide, GATE)
    scaled = judge_prompt(wide, replace(GATE, calibrated_margin=True))
    assert plain.parts["margin"] == pytest.approx(100.0 * 0.04)
    assert scaled.parts["margin"] == pytest.approx(100.0 * wide.scaled_margin)


def test_a_prompt_about_another_stack_gets_its_own_weight() -> None:
    gate = replace(GATE, stack_weight=-2.5)
    same = judge_prompt(signals(agreement=0.25), gate)
    other = judge_prompt(signals(agreement=0.25, other_stack=True), gate)
    assert same.parts["another stack"] == 0.0
    assert other.parts["another stack"] == pytest.approx(-2.5)
    assert other.score == pytest.approx(same.score - 2.5)


def test_a_prompt_that_is_mostly_a_day_notes_are_filed_under_passes_with_only_those_notes() -> None:
    # a score far below the line: the day's note says nothing the date's words match
    verdict = judge_prompt(signals(top_cosine=0.80, filed_coverage=0.8), GATE)
    assert verdict.about_notes and verdict.filed and verdict.score < 0
    assert verdict.reason == "a day notes are filed under, matching 80% of the rest"
    candidates = [
        CandidateSignals(0.90, 0.0, 0),  # closer in meaning, but says nothing of the day
        CandidateSignals(0.80, 0.6, 2, filed=True),
        CandidateSignals(0.79, 0.6, 2, holds_day=True),  # says the day: as good as its note
        CandidateSignals(0.79, 0.6, 2),  # as many words, but not the day
        CandidateSignals(0.79, 0.9, 3, journal_day=True, holds_day=True),  # another day's note
    ]
    assert judge_candidates(candidates, verdict, GATE) == [
        (False, "not filed on the day"),
        (True, "filed on the day"),
        (True, "names the day, 60% of the weight as the day's notes"),
        (False, "not filed on the day"),
        (False, "not filed on the day"),
    ]
    assert not judge_prompt(signals(top_cosine=0.80, filed_coverage=0.4), GATE).about_notes


def test_a_day_beside_a_question_the_score_passes_adds_its_notes_to_what_it_found() -> None:
    """ "how do i restore the restic backup from last week": the restic notes and the week's."""
    asked = signals(agreement=0.25, filed_coverage=0.7, beside_the_day=0.6)  # score +3
    verdict = judge_prompt(asked, GATE)
    assert verdict.filed and verdict.scored and verdict.score > 0
    assert verdict.reason.startswith("a day notes are filed under, matching 70% of the rest, and")
    candidates = [
        CandidateSignals(0.90, 0.6, 2),  # the how-to
        CandidateSignals(0.80, 0.3, 1, filed=True, filed_share=0.7),  # the week's restic note
        CandidateSignals(0.70, 0.1, 1),  # weaker on both
        CandidateSignals(0.90, 0.9, 3, journal_day=True, another_day=True),
        CandidateSignals(0.60, 0.0, 0, filed=True, filed_share=0.0),  # that week, not restic
    ]
    passed = [ok for ok, _ in judge_candidates(candidates, verdict, GATE)]
    assert passed == [True, True, False, False, False]
    # only the day and words that ask what it held ("what did I do last week"): its notes alone
    only_the_day = judge_prompt(signals(agreement=0.25, filed_coverage=1.0), GATE)
    assert only_the_day.filed and not only_the_day.scored and only_the_day.score > 0
    only_the_day_candidates = [replace(c, filed_share=1.0) for c in candidates]
    assert [ok for ok, _ in judge_candidates(only_the_day_candidates, only_the_day, GATE)] == [
        False,
        True,
        False,
        False,
        True,
    ]


def test_a_day_s_notes_on_another_topic_do_not_crowd_out_the_answer() -> None:
    """ "what did I note about postgres tuning last month": of the month's many notes, those on
    postgres tuning, then what the score found; not every note filed that month."""
    verdict = judge_prompt(signals(agreement=0.25, filed_coverage=0.6, beside_the_day=0.8), GATE)
    assert verdict.filed and verdict.scored
    candidates = [
        CandidateSignals(0.90, 0.8, 3),  # the postgres tuning note
        CandidateSignals(0.85, 0.6, 2, filed=True, filed_share=0.6),  # a day's note on it
        *[CandidateSignals(0.70, 0.0, 0, filed=True, filed_share=0.0)] * 3,  # other days
    ]
    passed = [ok for ok, _ in judge_candidates(candidates, verdict, GATE)]
    assert passed == [True, True, False, False, False]
    # a prompt the score does not pass: the filed notes on its topic alone
    weak = judge_prompt(signals(top_cosine=0.80, filed_coverage=0.6, beside_the_day=0.8), GATE)
    assert weak.filed and not weak.scored
    passed = [ok for ok, _ in judge_candidates(candidates, weak, GATE)]
    assert passed == [False, True, False, False, False]


def test_a_prompt_that_is_only_a_day_no_note_is_filed_under_is_silent() -> None:
    verdict = judge_prompt(signals(agreement=0.25, unfiled_day_share=0.95), GATE)  # score +3
    assert not verdict.about_notes and verdict.score > 0
    assert verdict.reason == "a day no note is filed under: 95% of the weight names it"
    # a date beside a question of its own is left to the score
    assert judge_prompt(signals(agreement=0.25, unfiled_day_share=0.76), GATE).about_notes
    off = replace(GATE, filed_coverage=2.0, day_only=2.0)
    assert judge_prompt(signals(agreement=0.25, unfiled_day_share=0.95), off).about_notes


def test_a_note_filed_on_another_day_than_the_prompt_names_never_passes() -> None:
    passed = judge_prompt(signals(agreement=0.25), replace(GATE, keep_ranked_above=True))
    candidates = [
        CandidateSignals(0.90, 0.9, 3, another_day=True),  # closest, but the 22nd for the 21st
        CandidateSignals(0.89, 0.5, 2),
        CandidateSignals(0.85, 0.0, 0),
    ]
    judged = judge_candidates(candidates, passed, replace(GATE, keep_ranked_above=True))
    assert judged[0] == (False, "filed on another day than the prompt names")
    # the others are judged against the best of all, as if it had passed: a ruled-out note
    # does not widen the window of those about as close
    assert [ok for ok, _ in judged] == [False, True, False]
