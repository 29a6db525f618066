"""What a prompt asks about: the words that only say where to look are left out of the search."""

from __future__ import annotations

import pytest

from conftest import add_note
from trilium_recall.search.topic import application_is_topic, topic_of


@pytest.mark.parametrize(
    ("prompt", "topic"),
    [
        # a clause that only points at the notes goes whole
        ("according to my notes, when is my 1:1 with priya?", "when is my 1:1 with priya?"),
        ("check my trilium notes — which port does wireguard use", "which port does wireguard use"),
        ("what do my notes say about this: restic retention", "restic retention"),
        ("my notes should have this. where do the e2e tests live?", "where do the e2e tests live?"),
        (
            "where do the e2e tests live? (it's in my notes somewhere)",
            "where do the e2e tests live?",
        ),
        ("the helm flags for prod, check my notes", "the helm flags for prod"),
        ("the deploy checklist — i think i wrote it down in trilium", "the deploy checklist"),
        ("Trilium: how do I read a file line by line?", "how do I read a file line by line?"),
        # elsewhere the phrase itself
        ("what do my notes say about restic", "restic"),
        ("what does our knowledge base mention on pgbouncer", "pgbouncer"),
        ("what did I write in trilium about my backups", "what my backups"),
        # having recorded it says where to look too
        ("what gift ideas did i jot down in november", "what gift ideas in november"),
        ("how was the party, did i write anything", "how was the party"),
        ("i noted it down somewhere: the vpn port", "the vpn port"),
        ("did I take notes on the kubernetes talk?", "the kubernetes talk?"),
        ("have i made a note of the vpn port", "the vpn port"),
        ("do I have any notes on kubernetes?", "do I have kubernetes?"),
        ("was steht in meinen Notizen über restic", "was steht über restic"),
        (
            "qu'est-ce que j'ai écrit dans mes notes sur restic",
            "qu'est-ce que j'ai écrit sur restic",
        ),
        # a clause holding more than the pointing keeps its topic words
        ("node 18.2 in my notes: what changed", "node 18.2: what changed"),
        # what is left is not re-spaced: code keeps its dots
        (
            "according to my notes, how do I add .env to .gitignore",
            "how do I add .env to .gitignore",
        ),
    ],
)
def test_the_words_that_only_say_where_to_look_are_left_out(prompt, topic) -> None:
    assert topic_of(prompt, application_is_topic=lambda: False) == topic


@pytest.mark.parametrize(
    "prompt",
    [
        "my trilium server keeps crashing after the upgrade",  # a thing, not a place
        "how do i hit my own trilium endpoint from a script",
        "how do I link notes together",  # notes as the topic
        "write release notes for this version",
        # the notes, a notebook or Trilium as the topic, files and things named after them
        "how do I export my notes to markdown?",
        "how do I protect my notes with a password",
        "where are my notes online?",
        "my notes container won't start after docker compose up",
        "my notebook kernel keeps dying when I load the csv",
        "open my notes.py and fix the import",
        "in my notes app, what's the vpn port",
        "how do I back up trilium?",
        "where is trilium-data on the lxc",
        "trilium.db is locked",
        "how do the day notes in my journal work",  # Trilium's journal as the topic
        # writing and recording as code does it
        "did I write this function correctly?",
        "did I write anything wrong in this dockerfile",
        "what should i write about in my blog?",
        "what should I put in my Dockerfile",
        "did we log anything on failure?",
        "I wrote a bash script that fails",
        "check my notes",  # nothing else: searched as written
        "what did i write?",
        "according to my notes, " + "a pasted log line\n" * 200,  # a long prompt: as written
        "",
    ],
)
def test_a_prompt_that_names_no_place_to_look_is_searched_as_written(prompt) -> None:
    assert topic_of(prompt, application_is_topic=lambda: False) == prompt


def test_trilium_is_a_place_only_in_a_notebook_not_about_it() -> None:
    prompt = "how do I add a table in trilium?"
    assert topic_of(prompt, application_is_topic=lambda: False) == "how do I add a table?"
    assert topic_of(prompt, application_is_topic=lambda: True) == prompt
    # "my notes" points at the notes in every notebook
    assert (
        topic_of("in my trilium notes, how do I add a table", lambda: True)
        == "how do I add a table"
    )
    assert topic_of("from my trilium: how do I add a table", lambda: True) == "how do I add a table"


def test_the_index_is_asked_about_trilium_only_for_a_prompt_that_names_it() -> None:
    asked: list[str] = []

    def about_trilium() -> bool:
        asked.append("asked")
        return False

    assert topic_of("according to my notes, the vpn port", about_trilium) == "the vpn port"
    assert asked == []
    assert topic_of("in Trilium, the vpn port", about_trilium) == "the vpn port"
    assert asked == ["asked"]


def test_a_notebook_is_about_trilium_when_enough_of_its_sections_name_it(store, embedder) -> None:
    for n in range(40):
        add_note(store, embedder, f"n{n}", f"Recipe {n}", [("", f"Simmer the stock {n} minutes.")])
    assert not application_is_topic(store)
    add_note(store, embedder, "guide", "Tables", [("", "Trilium tables hold rows.")])
    assert not application_is_topic(store)  # one passing mention
    add_note(store, embedder, "guide2", "Links", [("", "Trilium links notes to notes.")])
    assert application_is_topic(store)
