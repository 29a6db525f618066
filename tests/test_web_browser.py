"""The status page in a real browser: headless Debian Chromium driven by Playwright, against the
real engine over the demo notebook and an engine of our own holding hostile titles.

`RECALL_WRITE_SCREENSHOT=1 python -m pytest tests/test_web_browser.py` rewrites docs/web.png
(the README's picture) from the same steps; otherwise the test checks it is there.
"""

from __future__ import annotations

import datetime
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from chromium import NEEDS_CHROMIUM
from conftest import OPEN
from engine_process import app_over_trilium
from standin_faults import FaultyTrilium
from trilium_recall.demo.standin import FakeTrilium
from trilium_recall.search.gate import FITTED
from trilium_recall.search.rankings import RRF_K

pytestmark = NEEDS_CHROMIUM

DOCS_SHOT = Path(__file__).resolve().parents[1] / "docs" / "web.png"
RESTIC_PROMPT = "how do i restore my restic backup"
SILENT_PROMPT = "write a regex that matches ISO 8601 dates with optional milliseconds"
# Ends in a right-to-left override: it must not turn around what the page prints after it.
HOSTILE_TITLE = '<img src=x onerror="window.__pwned=1">Backups <b>restic</b>\u202e'
HOSTILE_PROMPT = '<script>window.__pwned=2</script><img src=x onerror="window.__pwned=3"> restic'


class Watched:
    """A page with its console messages and uncaught errors kept."""

    def __init__(self, browser: Browser, width: int = 1200, **context: str) -> None:
        viewport = {"width": width, "height": 900}
        self.context = browser.new_context(viewport=viewport, **context)
        self.page = self.context.new_page()
        self.console: list[str] = []
        self.errors: list[str] = []
        self.page.on("console", lambda message: self.console.append(message.text))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))

    def csp_violations(self) -> list[str]:
        return [line for line in self.console if "Content Security Policy" in line]


def sign_in(page: Page, url: str, password: str) -> None:
    page.goto(f"{url}/")
    assert page.url == f"{url}/ui/login"  # no session: the page sends us to sign in
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{url}/")


def run_prompt(page: Page, prompt: str, path: str = "hook") -> None:
    page.get_by_label("Prompt", exact=True).fill(prompt)
    page.locator(f'input[name="path"][value="{path}"]').check()
    page.get_by_role("button", name="Explain").click()


def screenshot(page: Page, path: Path) -> bytes:
    page.screenshot(path=str(path), full_page=True)
    shot = path.read_bytes()
    assert shot.startswith(b"\x89PNG\r\n\x1a\n") and len(shot) > 50_000
    return shot


def test_status_explain_and_activity_on_the_demo(demo_engine, browser, tmp_path) -> None:
    url = demo_engine.url
    notes = httpx.get(f"{url}/health").json()["instances"]["default"]["notes"]
    watched = Watched(browser)
    page = watched.page
    sign_in(page, url, demo_engine.password)

    card = page.locator('[data-instance="default"]')
    expect(card.locator(".badge")).to_have_text("ok")
    expect(card).to_contain_text(f"{notes} notes")
    for text in ("wiki 15", "journal 10", "archived 4", "protected 1", "LLM Wiki (20)"):
        expect(card).to_contain_text(text)
    expect(page.locator("#overall")).to_have_text("ok")

    run_prompt(page, SILENT_PROMPT)
    headline = page.locator("#result .headline")
    expect(headline).to_have_text(re.compile(r"^Silent in \d+ ms: not about the notes: score -"))
    expect(page.get_by_text("Nothing: the prompt goes on unchanged.")).to_be_visible()
    reasons = page.locator("#result table.candidates td.why").all_text_contents()
    assert reasons and set(reasons) == {"prompt is not about the notes"}
    expect(page.locator("#result .score-chart")).to_have_attribute(
        "aria-label", re.compile(r"^prompt score -\d+\.\d\d; passes at 0 or above$")
    )

    run_prompt(page, RESTIC_PROMPT)
    expect(headline).to_have_text(re.compile(r"^Sent [1-3] passages? in \d+ ms$"))
    expect(page.locator("#result pre.sent")).to_contain_text("Backups (restic)")
    passed = page.locator("#result tr.passed td.title").all_text_contents()
    assert any(t.startswith("Backups (restic)") for t in passed)
    dropped = page.locator("#result tr.dropped td.why").all_text_contents()
    allowance = re.escape(f"(max {FITTED.neighbour_cosine_gap})")
    assert dropped and all(
        re.fullmatch(rf"weaker: cosine 0\.\d{{3}} below the best {allowance}", t) for t in dropped
    )
    expect(page.get_by_text("Searched as")).to_have_count(0)  # nothing left out
    caption = f"/ ({RRF_K} + fused rank)"  # the rank as the engine's RRF counts it
    expect(page.locator("#result")).to_contain_text("Judged in a learned order: the first ten by")
    expect(page.locator("#result")).to_contain_text(caption)
    expect(page.locator("#result")).to_contain_text("prompt language en, the closest note's ")
    expect(page.locator("#result")).to_contain_text(
        re.compile(r"unknown words \d+% · fused top \d\.\d{3}")
    )
    # each candidate meaning search ranked shows its hubness (index/hubness.py)
    titled = page.locator("#result table.candidates td.title")
    expect(titled.filter(has_text=re.compile(r"hubness 0\.\d{3}")).first).to_be_visible()
    learned = page.locator("#result table.candidates td.num").first
    expect(learned).to_have_text(re.compile(r"^\d\.\d{4} · -?\d+\.\d\d$"))
    rows = page.locator("#result table.candidates tbody tr").count()
    assert page.locator("#result table.candidates td.chart svg").count() == 2 * rows
    first_gap = page.locator("#result table.candidates td.chart svg").first
    expect(first_gap).to_have_attribute("aria-label", re.compile(r"\(gap 0\.000\)$"))

    activity = page.locator("#activity tbody tr")
    expect(activity.nth(0)).to_contain_text(RESTIC_PROMPT)
    expect(activity.nth(0)).to_contain_text("Backups (restic)")
    expect(activity.nth(1)).to_contain_text(SILENT_PROMPT)
    expect(activity.nth(1)).to_contain_text("not about the notes: score -")
    for row in (activity.nth(0), activity.nth(1)):
        expect(row.locator(".badge.path")).to_have_text("web")

    shot = screenshot(page, tmp_path / "web.png")
    if os.environ.get("RECALL_WRITE_SCREENSHOT") == "1":
        DOCS_SHOT.parent.mkdir(exist_ok=True)
        DOCS_SHOT.write_bytes(shot)
    docs = DOCS_SHOT.read_bytes()
    assert docs.startswith(b"\x89PNG\r\n\x1a\n") and len(docs) > 50_000, "docs/web.png"

    run_prompt(page, "ok", path="mcp")  # no skip rules on this path: "ok" is searched
    expect(page.get_by_role("heading", name="What the MCP tool answers")).to_be_visible()
    expect(page.locator("#result pre.sent")).to_have_text("No matching notes.")
    expect(page.get_by_role("heading", name="Is the prompt about the notes?")).to_be_visible()

    run_prompt(page, f"according to my notes, {RESTIC_PROMPT}")
    expect(page.locator("#result")).to_contain_text(
        f"Searched as “{RESTIC_PROMPT}”: harness text, an acknowledgement before the question,"
        " the words that only say where to look, stack frames and machine ids are left out."
    )
    expect(page.locator("#result pre.sent")).to_contain_text("Backups (restic)")

    run_prompt(page, "what did I do on october 21st?")
    expect(page.locator("#result")).to_contain_text(
        "Dates: “october 21st” = 21 oct (matched by the notes filed then)."
    )
    expect(page.locator("#result")).to_contain_text("filed on the day #1")
    expect(page.locator("#result pre.sent")).to_contain_text("21 - Wednesday")

    assert watched.errors == [] and watched.csp_violations() == []
    watched.context.close()


def test_the_page_fits_a_phone(demo_engine, browser) -> None:
    """At 360 px the page was 663 px wide (835 after an Explain): the facts ran out of their
    card and the charts and tables past the screen."""
    watched = Watched(browser, width=360)
    page = watched.page
    sign_in(page, demo_engine.url, demo_engine.password)
    expect(page.locator('[data-instance="default"] .badge')).to_have_text("ok")
    run_prompt(page, RESTIC_PROMPT)
    expect(page.locator("#result .headline")).to_have_text(re.compile(r"^Sent "))
    expect(page.locator("#activity tbody tr").first).to_contain_text(RESTIC_PROMPT)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    for table in page.locator("table").all():  # a table wider than the screen scrolls in its box
        box = table.evaluate("t => t.parentElement.getBoundingClientRect().right")
        assert box <= 360, box
    assert watched.errors == [] and watched.csp_violations() == []
    watched.context.close()


def test_days_from_today_count_from_the_browser_s_date(demo_engine, browser) -> None:
    """At 8 pm on 22 October in Los Angeles it is already the 23rd in UTC: "yesterday" is the
    21st, whose note the journal files, not the 22nd, which has none."""
    watched = Watched(browser, timezone_id="America/Los_Angeles")
    page = watched.page
    page.clock.set_fixed_time(datetime.datetime(2026, 10, 23, 3, tzinfo=datetime.UTC))
    sign_in(page, demo_engine.url, demo_engine.password)
    run_prompt(page, "what did I do yesterday?")
    expect(page.locator("#result")).to_contain_text("Dates: “yesterday” = 21 oct 2026")
    expect(page.locator("#result pre.sent")).to_contain_text("21 - Wednesday")
    assert watched.errors == []
    watched.context.close()


def test_without_a_session_every_page_sends_to_the_sign_in(demo_engine, browser) -> None:
    url = demo_engine.url
    watched = Watched(browser)
    for path in ("/ui/status", "/ui/activity"):
        assert watched.context.request.get(f"{url}{path}").status == 401, path
    refused = watched.context.request.post(f"{url}/ui/explain", data={"prompt": "restic"})
    assert refused.status == 401
    page = watched.page
    sign_in(page, url, demo_engine.password)
    expect(page.locator("#overall")).to_have_text("ok")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(f"{url}/ui/login")
    page.goto(f"{url}/")
    assert page.url == f"{url}/ui/login"
    assert watched.context.request.get(f"{url}/ui/status").status == 401
    watched.context.close()


@pytest.fixture
def hostile_engine(tmp_path: Path) -> Iterator[str]:
    """An engine (fake embedder, gate open) over a note whose title is markup."""
    trilium = FakeTrilium(token="hostile_token")
    trilium.add_note("hostile00001", HOSTILE_TITLE, content="<p>restic backup restore steps</p>")
    settings = {"login_password": "hostile-test-Pw-1"}
    with app_over_trilium(trilium, "hostile_token", tmp_path, OPEN, **settings) as url:
        yield _when_indexed(url)


def _when_indexed(url: str) -> str:
    deadline = time.monotonic() + 60
    while httpx.get(f"{url}/health").json()["status"] != "ok":
        assert time.monotonic() < deadline, "the hostile notebook was never indexed"
        time.sleep(0.05)
    return url


def test_markup_in_titles_and_prompts_is_shown_never_run(hostile_engine, browser) -> None:
    watched = Watched(browser)
    page = watched.page
    sign_in(page, hostile_engine, "hostile-test-Pw-1")
    expect(page.locator("#instances .chips")).to_contain_text(HOSTILE_TITLE)
    run_prompt(page, HOSTILE_PROMPT)
    expect(page.locator("#result .headline")).to_have_text(re.compile(r"^Sent 1 passage"))
    expect(page.locator("#result td.title").first).to_contain_text(HOSTILE_TITLE)
    expect(page.locator("#result pre.sent")).to_contain_text(HOSTILE_TITLE)
    expect(page.locator("#activity td.prompt-head").first).to_have_text(HOSTILE_PROMPT)
    expect(page.locator("#activity .sent-list").first).to_contain_text(HOSTILE_TITLE)
    for titled in ("#activity .sent-list li", "#instances .chips li", "#result td.title"):
        expect(page.locator(f"{titled} > bdi").first).to_have_text(HOSTILE_TITLE)  # isolated
    assert page.locator("main img, main script, main b").count() == 0  # text, not elements
    assert page.evaluate("window.__pwned") is None
    # Not even tried: a blocked inline handler would show as a CSP violation.
    assert watched.errors == [] and watched.csp_violations() == []
    watched.context.close()


def test_during_a_first_build_the_page_names_the_version_and_waits_for_the_features(
    browser, tmp_path
) -> None:
    """The card said "Trilium: not yet asked" through a whole first build (minutes to hours):
    the version is known from the first request, the sync features only once it is over."""
    trilium = FaultyTrilium(token="build_token")
    trilium.add_note("heldNote0001", "Held note", content="<p>restic backup restore steps</p>")
    trilium.contents_open.clear()  # the build lists the notes, then waits for their contents
    settings = {"login_password": "build-test-Pw-1"}
    with app_over_trilium(trilium, "build_token", tmp_path, OPEN, **settings) as url:
        watched = Watched(browser)
        page = watched.page
        sign_in(page, url, "build-test-Pw-1")
        card = page.locator("#instances")
        expect(card).to_contain_text(
            f"{trilium.app_version} · sync features known after the first full run"
        )
        expect(page.locator("#overall")).not_to_have_text("ok")
        trilium.contents_open.set()
        expect(page.locator("#overall")).to_have_text("ok", timeout=60_000)
        expect(card).to_contain_text(f"{trilium.app_version} · blobId")  # 0.93: no history
        expect(card).not_to_contain_text("known after")
        assert watched.errors == []
        watched.context.close()
