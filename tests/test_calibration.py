"""Per-notebook reference points (search/calibration.py), the prompt's language
(search/languages.py) and the technologies it names (search/technologies.py): fast, over a real
SQLite index with the deterministic HashEmbedder."""

from __future__ import annotations

import dataclasses

import pytest

from conftest import add_note, make_settings
from trilium_recall.index import reference_points
from trilium_recall.index.terms import index_term
from trilium_recall.search.calibration import (
    MIN_NOTES,
    calibrate,
    calibration_key,
    last_calibration,
    pseudo_prompts,
)
from trilium_recall.search.gate import DEFAULT_SPREAD
from trilium_recall.search.hybrid import search
from trilium_recall.search.languages import (
    NOTEBOOK_MARKERS,
    in_another_language,
    is_foreign,
    notebook_languages,
    prompt_language,
    text_language,
)
from trilium_recall.search.null_bank import GenericPrompts, bank_key
from trilium_recall.search.technologies import (
    named_technologies,
    names_another_stack,
    notebook_technologies,
)

BANK = ["fix the failing unit test", "what is the capital of france", "write a haiku about rain"]
ENGLISH = [
    ("Backups", "The restic repository is checked every night and the snapshots are pruned."),
    ("Router", "The router is a small box and the firewall is set up with nftables rules."),
    ("Sourdough", "Feed the starter the night before and bake the loaf in a hot oven."),
    ("Tomatoes", "The tomatoes in the garden need water and the leaves are tied up."),
    ("Taxes", "The receipts for the year are kept in a folder and the forms are filed in May."),
    ("Cameras", "The camera is set to manual and the lens is cleaned before the trip."),
]


@pytest.mark.parametrize(
    ("prompt", "language"),
    [
        ("how do i restore the restic backup from last week", "en"),
        ("wie stelle ich das Backup von letzter Woche wieder her, das ist nicht klar", "de"),
        ("comment est-ce que je restaure la sauvegarde avec restic pour mon serveur", "fr"),
        ("¿cómo restauro la copia de seguridad con restic en mi servidor?", "es"),
        ("バックアップを復元する方法", "cjk"),
        # Short questions hold few function words, one of them often English-looking ("in").
        ("come salvo il file in png senza perdere i livelli?", "it"),
        ("quanto de memória devo dar pro cache?", "pt"),
        ("comment sauter un test quand on tourne sous windows ?", "fr"),
        ("restic snapshots --json", None),  # no function words: unsure
        # Only words Portuguese shares with English ("no", "as", "do"): English, unless a
        # letter English does not write says otherwise.
        ("git push rejected: no upstream branch set as default", None),
        ("ModuleNotFoundError: No module named 'yaml' even though pip shows it as installed", "en"),
        ("as configurações do wireguard no raspberry pi", "pt"),
        ("onde guardei as notas do wireguard no raspberry pi", "pt"),
        ("o backup do servidor", "pt"),
        ("à quelle heure on dîne au bouchon samedi soir à lyon ?", "fr"),
        ("ValueError: field tags is not allowed — was soll ich da genau hinschreiben?", "de"),
        # A stack trace repeats Portuguese "com" (with) on every line: words count once.
        (
            'Exception in thread "main" java.lang.IllegalStateException: closed\n'
            "    at com.acme.app.Store.read(Store.java:42)\n"
            "    at com.acme.app.Main.main(Main.java:7)",
            "en",
        ),
    ],
)
def test_a_prompt_s_language_from_its_function_words_or_script(prompt, language) -> None:
    assert prompt_language(prompt) == language


@pytest.mark.parametrize(
    ("text", "language"),
    [
        (ENGLISH[0][1], "en"),
        (
            "Die Butter in der Pfanne schmelzen und die Zwiebeln dazu geben, bis sie goldbraun "
            "sind. Das ist wichtig, weil der Käse sonst nicht schmilzt.",
            "de",
        ),
        (
            "Samedi soir : dîner au bouchon, réservé pour 20 h. Les quenelles sont la spécialité "
            "de la maison, avec une sauce Nantua.",
            "fr",
        ),
        ("京都の桜の季節にホテルを予約した。二泊三日。", "cjk"),
        # Code holds the short markers of several languages ("e", "o", "do", "se", "as", "no").
        ("const e = o.map((x) => x.id); if (e && o) { do { se = as(e); } while (no) }", None),
        ("restic snapshots --json", None),
    ],
)
def test_a_section_s_language_from_its_function_words_or_script(text, language) -> None:
    assert text_language(text) == language


def test_no_agreement_is_asked_of_a_prompt_in_another_language_than_the_closest_note() -> None:
    assert in_another_language("en", ("en",), "de")
    assert in_another_language("de", ("en",), "en")  # the notebook's languages alone say so
    assert in_another_language("de", ("en",), None)
    assert not in_another_language("en", ("en",), "en")
    assert not in_another_language("en", ("en",), None)  # the closest note's unsure: not
    assert not in_another_language(None, ("en",), "de")  # the prompt's unsure: not


def test_the_notebook_markers_are_counted_as_written() -> None:
    # Document counts come from the stemmed index: a marker must be its own stem.
    markers = [m for pair in NOTEBOOK_MARKERS.values() for m in pair]
    assert [index_term(m) for m in markers] == markers


def test_a_notebook_holds_the_languages_enough_of_its_sections_are_written_in() -> None:
    counts = {"the": 90, "and": 80, "und": 5, "ist": 4, "les": 30, "est": 1}

    def document_counts(words):
        return 100, {w: counts.get(w, 0) for w in words}

    assert notebook_languages(document_counts) == ("en", "de")
    assert notebook_languages(lambda words: (0, {})) == ()
    assert is_foreign("de", ("en",)) and not is_foreign("de", ("en", "de"))
    assert not is_foreign(None, ("en",)) and not is_foreign("fr", ())


def _calibrated(store, embedder) -> GenericPrompts:
    return calibrate(GenericPrompts(BANK, embedder.queries(BANK)), store.vectors, store, embedder)


def test_reference_points_come_from_the_notebook_s_own_notes(store, embedder) -> None:
    for index, (title, text) in enumerate(ENGLISH):
        add_note(store, embedder, f"n{index}", title, [(title, text)])
    generic = _calibrated(store, embedder)
    reference = generic.reference
    prompts, notes = pseudo_prompts(store)
    assert notes == len(ENGLISH) and sorted(prompts) == sorted(t for t, _ in ENGLISH)
    assert reference.pseudo_prompts == len(ENGLISH)
    assert reference.languages == ("en",)
    assert reference.generic_level == pytest.approx(generic.offset)
    # A title is closer to its own note than to the bank: prompts about the notes sit above it.
    assert reference.about_level is not None and reference.about_level > reference.generic_level
    assert reference.spread == pytest.approx(reference.about_level - reference.generic_level)
    assert reference.to_json()["why"] == f"{len(ENGLISH)} pseudo-prompts from 6 notes"


def test_the_last_calibration_is_kept_in_the_index_for_the_next_start(store, embedder) -> None:
    for index, (title, text) in enumerate(ENGLISH):
        add_note(store, embedder, f"n{index}", title, [(title, text)])
    bank = GenericPrompts(BANK, embedder.queries(BANK))
    assert last_calibration(bank, store, embedder) is None  # never calibrated
    measured = calibrate(bank, store.vectors, store, embedder)
    found = last_calibration(bank, store, embedder)
    assert found is not None
    kept, measured_on = found
    assert measured_on == len(store.vectors) and kept.offset == measured.offset
    assert kept.reference.reason == f"kept from the last calibration: {measured.reference.reason}"
    assert dataclasses.replace(kept.reference, reason=measured.reference.reason) == (
        measured.reference
    )
    # Points measured with another bank (or model) are not read as this one's.
    other = GenericPrompts(BANK[:-1], embedder.queries(BANK[:-1]))
    assert last_calibration(other, store, embedder) is None
    # Nor points told by other name or marker lists (an older release's).
    with store.atomic() as db:
        db.execute("UPDATE reference_points SET key = ?", (bank_key(BANK, embedder.name),))
    assert last_calibration(bank, store, embedder) is None
    # A row this code cannot read (damaged, or not what it wrote) is measured again, not a crash.
    key = calibration_key(bank, embedder)
    for damaged in ({"snippets": 3}, {"generic_level": 0.1, "languages": [], "snippets": "x"}):
        reference_points.save(store, key, damaged)
        assert last_calibration(bank, store, embedder) is None
    with store.atomic() as db:
        db.execute("UPDATE reference_points SET points = 'not json'")
    assert last_calibration(bank, store, embedder) is None


@pytest.mark.parametrize("notes", [0, 1])
def test_an_empty_or_one_note_notebook_keeps_the_shipped_defaults_and_says_why(
    store, embedder, tmp_path, notes
) -> None:
    for index, (title, text) in enumerate(ENGLISH[:notes]):
        add_note(store, embedder, f"n{index}", title, [(title, text)])
    generic = _calibrated(store, embedder)
    reference = generic.reference
    assert reference.about_level is None and reference.spread == DEFAULT_SPREAD
    assert "shipped defaults" in reference.reason
    if notes:
        assert reference.reason.startswith(f"1 notes (fewer than {MIN_NOTES})")
    result = search(store, embedder, generic, make_settings(tmp_path), "restore the backup")
    assert result.trace.to_json()["reference_points"]["why"] == reference.reason


def test_a_notebook_in_one_language_prompted_in_another_is_told_and_shown(
    store, embedder, tmp_path
) -> None:
    for index, (title, text) in enumerate(ENGLISH):
        add_note(store, embedder, f"n{index}", title, [(title, text)])
    generic = _calibrated(store, embedder)
    settings = make_settings(tmp_path)
    german = search(store, embedder, generic, settings, "wie ist das mit dem Sauerteig und Ofen")
    english = search(store, embedder, generic, settings, "how is the sourdough baked in the oven")
    shown = german.trace.to_json()["prompt"]
    assert shown["language"] == "de" and shown["foreign_language"] is True
    assert english.trace.to_json()["prompt"]["foreign_language"] is False


def test_a_notebook_of_code_notes_calibrates_without_a_language(store, embedder) -> None:
    code = "for f in *.log; do gzip -9 $f; done\nrsync -az ./ host:/srv/"
    for index in range(MIN_NOTES):
        add_note(store, embedder, f"c{index}", f"script{index}.sh", [("", code)])
    reference = _calibrated(store, embedder).reference
    assert reference.languages == ()
    assert reference.pseudo_prompts == MIN_NOTES and reference.about_level is not None
    assert not is_foreign(prompt_language("wie komprimiere ich die logs und dann"), ())


@pytest.mark.parametrize(
    ("prompt", "named"),
    [
        ("how do i sort a vec of structs by a field in rust", ("rust",)),
        ("node.js child_process exec vs spawn", ("nodejs", "js")),
        ("TypeScript generics: Type 'K' does not satisfy the constraint", ("typescript",)),
        ("port this python script to Go, er, golang", ("python", "golang")),
        ("what's the difference between a process and a thread", ()),
        ("c# [Flags] enum, is one flag set", ("csharp",)),  # FTS5 keeps only "c": a pattern
        ("std::vector in C++ vs a python list", ("python", "cpp")),
        ("is example.net down again", ()),  # a domain, not .NET
        ("bake the ambient occlusion in FreeCAD before exporting to glTF", ("freecad",)),
        ("vlookup across two sheets in libreoffice calc", ("libreoffice",)),
        ("my notion page won't load on windows", ()),  # an everyday word and an OS
        ("puree the soup in a blender, then excel at plating", ()),  # everyday words
        ("what did I write in trilium about my passport", ()),  # the notes' own app
        ("how do I react to SIGINT in node so the server shuts down", ("nodejs",)),  # a verb
        ("should the app react when the token expires", ()),
        ("useMemo vs useCallback in react, when are they worth it", ("react",)),
        ("git grep only in python files", ("git", "python")),  # a git question, whatever it greps
        ("svn: E155007 is not a working copy", ("svn",)),
        ("is https://github.com/psf/requests/issues/6000 fixed in python 3.12", ("python",)),
        ("pip install git+https://gitlab.com/org/lib.git fails", ()),  # a link, a pip question
        ("see github.com/org/repo/pull/12", ()),
        ("react.js/vue.js: which one for a small dashboard", ("react", "js", "vue")),
        # Names that are everyday words too, beside nothing technical: no technology.
        ("where do I enter the swift code for an international wire", ("swift",)),  # "code"
        ("how do I make a swift motion blur effect", ()),
        ("how do I record my spring property tax installment", ()),
        ("crop this so my daughter Ruby gets a square picture", ()),
        ("remove the python from this photo of a snake", ()),
        ("Comment changer la vue de l'image en plein écran ?", ()),
        ("delete a node from a linked list", ()),
        ("write a function that visits every node of the tree", ()),
        ("dinner with Julia on friday", ()),
        ("e.g. julia will bring the cake", ()),
        ("pick up Ruby at 3 p.m. after her swim class", ()),
        # ... and beside code, another technology, a label or a word of the trade.
        ("difference between Box and Rc in rust", ("rust",)),  # what it is written in
        ("rust: cannot borrow `self.items` as mutable", ("rust",)),
        ("spring boot with docker compose", ("spring", "docker")),
        ("my flutter app freezes on start", ("flutter",)),
        ("read a file line by line in python and node", ("python", "nodejs")),
        ("what's the difference between react and vue", ("react", "vue")),  # two of them
        ("node --test reports 0 tests", ("nodejs",)),
        ("rails migration rollback", ("rails",)),
    ],
)
def test_the_technologies_a_prompt_names(prompt, named) -> None:
    assert named_technologies(prompt) == named


def test_typescript_and_node_are_no_other_stack_than_javascript() -> None:
    assert not names_another_stack(("typescript",), ("javascript", "nodejs"))
    assert not names_another_stack(("nodejs",), ("js",))  # a notebook that writes "Node.js"
    assert names_another_stack(("typescript",), ("python",))
    assert names_another_stack(("rust",), ("javascript",))


def test_a_notebook_is_about_the_technologies_enough_of_its_sections_name() -> None:
    counts = {"python": 400, "javascript": 3, "sqlite": 12, "rust": 0}

    def document_counts(words):
        return 1000, {w: counts.get(w, 0) for w in words}

    def literal_counts(literals):  # a sample of 100 sections, 5 of them about C#
        return 100, [5 * (literal == "c#") for literal in literals]

    def no_titles(names):
        return set()

    # A passing mention (3 of 1,000 sections) does not make a Python notebook a JavaScript one.
    held = notebook_technologies(document_counts, literal_counts, no_titles)
    assert held == ("csharp", "python", "sqlite")
    empty = notebook_technologies(
        lambda words: (0, dict.fromkeys(words, 0)), lambda ls: (0, [0] * len(ls)), no_titles
    )
    assert empty == ()

    def large(words):  # 50,000 sections: 200 on Rust are not a passing mention
        return 50_000, {
            w: {"rust": 200, "python": 30_000, "javascript": 5}.get(w, 0) for w in words
        }

    def no_symbols(literals):
        return 50_000, [0] * len(literals)

    assert notebook_technologies(large, no_symbols, no_titles) == ("python", "rust")
    # One note given to vim among 50,000 sections: too few sections, but its title names it.
    assert notebook_technologies(large, no_symbols, lambda names: {"vim"} & set(names)) == (
        "python",
        "rust",
        "vim",
    )
    assert names_another_stack(("rust",), ("python",))
    assert not names_another_stack(("python", "rust"), ("python",))  # porting between the two
    assert not names_another_stack(("git", "python"), ("git", "perl"))  # a git manual's own
    assert not names_another_stack((), ("python",))
    assert not names_another_stack(("rust",), None)  # a calibration from before: not measured


def test_a_question_about_another_stack_is_told_and_shown(store, embedder, tmp_path) -> None:
    python = "Use python -m venv and pip to install the package; pytest runs the tests."
    for index in range(MIN_NOTES):
        add_note(store, embedder, f"p{index}", f"Python project {index}", [("Setup", python)])
    generic = _calibrated(store, embedder)
    assert generic.reference.technologies == ("python",)
    settings = make_settings(tmp_path)
    rust = search(store, embedder, generic, settings, "how do i install a package in rust")
    ours = search(store, embedder, generic, settings, "how do i install a package in python")
    shown = rust.trace.to_json()
    assert shown["prompt"]["technologies"] == ["rust"] and shown["prompt"]["other_stack"]
    assert shown["reference_points"]["technologies"] == ["python"]
    assert ours.trace.to_json()["prompt"]["other_stack"] is False


def test_a_note_given_to_a_tool_makes_the_notebook_about_it(store, embedder, tmp_path) -> None:
    # A personal notebook with one short note on vim among many others is asked about vim:
    # the note's title says it is about vim however few sections name it.
    python = "Use python -m venv and pip to install the package; pytest runs the tests."
    for index in range(MIN_NOTES * 10):
        add_note(store, embedder, f"p{index}", f"Python project {index}", [("Setup", python)])
    add_note(store, embedder, "vim", "Vim cheatsheet", [("Macros", "qa records, @a replays.")])
    generic = _calibrated(store, embedder)
    assert generic.reference.technologies == ("python", "vim")
    found = search(store, embedder, generic, make_settings(tmp_path), "vim: replay a macro")
    assert found.trace.to_json()["prompt"]["other_stack"] is False


def test_a_notebook_is_about_a_name_as_written_not_another_form_of_its_stem(
    store, embedder
) -> None:
    # The keyword index stems: "io" and "ios", "reacting" and "react" share stems. A long note
    # on Python's io module, reacting to events, is about neither iOS nor React.
    io = "Wrap the bytes in io.BytesIO; the io module, reacting to each read."
    add_note(store, embedder, "io", "Python io module", [(f"io {n}", io) for n in range(60)])
    held = _calibrated(store, embedder).reference.technologies
    assert held is not None and "ios" not in held and "react" not in held
    # A later note's 40 sections on iOS count, though the io note's sections come first: the
    # sections read to tell the word from its stem are spread over all that hold the stem.
    ios = "On iOS the share sheet lists every app that takes the file."
    add_note(store, embedder, "ios", "Shortcuts", [(f"share {n}", ios) for n in range(40)])
    assert "ios" in (_calibrated(store, embedder).reference.technologies or ())


def test_a_title_names_a_technology_however_many_titles_share_its_stem(store, embedder) -> None:
    io = "Wrap the bytes in io.BytesIO."
    add_note(store, embedder, "io", "Python io module", [(f"io {n}", io) for n in range(60)])
    add_note(store, embedder, "ios", "iOS tips", [("Tips", "Long-press the icon.")])
    assert "ios" in (_calibrated(store, embedder).reference.technologies or ())


def test_a_notebook_about_c_sharp_is_told_from_its_text(store, embedder) -> None:
    # FTS5 keeps only "c" of "C#": the notebook's sections are read for the literal instead.
    text = "In C# a [Flags] enum combines values; HasFlag tells whether one is set."
    for index in range(MIN_NOTES):
        add_note(store, embedder, f"cs{index}", f"C# notes {index}", [("Enums", text)])
    assert _calibrated(store, embedder).reference.technologies == ("csharp",)


def test_links_in_the_notes_name_no_technology(store, embedder) -> None:
    """A Debian handbook full of mirror hosts and search.php links is about neither .NET nor
    PHP; one on ASP.NET and PHP itself is."""
    linked = "Fetch it from https://raspi.debian.net/tested/ or deb.debian.net/debian/search.php"
    for index in range(MIN_NOTES):
        add_note(store, embedder, f"l{index}", f"Mirrors {index}", [("Sources", linked)])
    assert _calibrated(store, embedder).reference.technologies == ()
    text = "An ASP.NET page and a .NET service; the PHP front end calls both."
    for index in range(MIN_NOTES):
        add_note(store, embedder, f"n{index}", f"Stack {index}", [("Services", text)])
    assert _calibrated(store, embedder).reference.technologies == ("dotnet", "php")
