"""End to end in headless Chromium: search, facet, open a record, paste a traceback.

Needs /usr/bin/chromium (Debian: `apt-get install -y chromium`). The README's screenshots come from
docs/make_screenshots.py, with real verification runs rather than this test's sample history.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from web_support import SEED_SLUG, SEED_TRACEBACK, XSS_SLUG, add_record, make_root, running_server, xss_record

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run",
]

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: install it with `apt-get install -y chromium`"
)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def test_search_facet_open_a_record_and_match_a_traceback(tmp_path, page):
    from playwright.sync_api import expect

    with running_server(make_root(tmp_path)) as base:
        page.goto(base + "/")
        page.fill('input[name="_search"]', "DataParallel")
        page.click('form.errkb-home-search input[type="submit"]')
        page.wait_for_url(lambda url: "_search=DataParallel" in url)
        record_link = page.locator(f'table.rows-and-columns a[href="/-/errkb/record/{SEED_SLUG}"]')
        expect(record_link).to_be_visible()

        page.locator("#facet-errorClass").get_by_role("link", name="ValueError", exact=True).click()
        page.wait_for_url(lambda url: "errorClass=ValueError" in url and "_search=DataParallel" in url)
        expect(page.locator("table.rows-and-columns tbody tr")).not_to_have_count(0)

        page.locator(f'table.rows-and-columns a[href="/-/errkb/record/{SEED_SLUG}"]').click()
        expect(page).to_have_url(f"{base}/-/errkb/record/{SEED_SLUG}")
        expect(page.locator("h1.errkb-message")).to_have_text("DataParallel not supported when CRF is used")
        expect(page.locator("tr.errkb-raise")).to_contain_text("raise ValueError(")
        expect(page.locator(".errkb-history")).to_contain_text("verified")

        page.get_by_role("link", name="Paste a traceback").last.click()
        page.fill('textarea[name="traceback"]', SEED_TRACEBACK)
        page.click('form.errkb-match-form input[type="submit"]')
        first = page.locator("li.errkb-match").first
        expect(first.locator("a").first).to_have_attribute("href", f"/-/errkb/record/{SEED_SLUG}")
        expect(first.locator(".errkb-reasons")).not_to_be_empty()

        page.fill('textarea[name="traceback"]', "KeyError: 'banana split with sprinkles'")
        page.click('form.errkb-match-form input[type="submit"]')
        expect(page.locator(".errkb-answer h2")).to_have_text("No match")


def test_markup_in_a_record_does_not_run(tmp_path, page):
    from playwright.sync_api import expect

    root = make_root(tmp_path / "root")
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    add_record(root, xss_record(incoming))
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    with running_server(root) as base:
        page.goto(f"{base}/-/errkb/record/{XSS_SLUG}")
        expect(page.locator("h1.errkb-message")).to_contain_text('<script>alert("doc")</script>')
        page.goto(f"{base}/catalog/records?_col=errorMessage&_col=documentation&_col=solutions")
        expect(page.locator("table.rows-and-columns")).to_contain_text("<img src=x onerror=alert(1)>")
        page.goto(f"{base}/catalog/records/{XSS_SLUG}")
        page.wait_for_load_state("load")
    assert dialogs == []
