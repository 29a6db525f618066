"""From a prompt to the passages worth showing: which prompts are not a person's question
(`triage`), keyword ∥ meaning search fused by rank (`hybrid`, over `candidates`), the relevance
gate (`gate`) with its null bank of generic prompts (`null_bank`), summaries standing in for
sources (`summaries`), this notebook's reference points (`calibration`), and the one
`recall()` pipeline (`recall`) with what it is asked and answers, data only, and their one
rendering (`answers`).

May import: the top's foundation, `notes`, `index`.
"""
