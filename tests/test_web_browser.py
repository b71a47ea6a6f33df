"""End to end in headless Chromium: search, facet, open a record, paste a traceback; the records view at 1280 and 390 px.

Needs /usr/bin/chromium (Debian: `apt-get install -y chromium`). The README's screenshots come from
docs/make_screenshots.py, with real verification runs rather than this test's sample history.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from web_support import (
    SEED_SLUG, SEED_TRACEBACK, XSS_PASTE, XSS_SLUG, add_record, make_root, running_server, write_xss_results, xss_record,
)

from errkb import catalog
from errkb.web.browse import PAGE_SIZE

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
        page.fill('form.errkb-home-search input[name="q"]', "DataParallel")
        page.click('form.errkb-home-search input[type="submit"]')
        page.wait_for_url(lambda url: "/-/errkb/records" in url and "q=DataParallel" in url)
        rows = page.locator("table.errkb-records tbody tr")
        expect(rows.first.locator("a.errkb-record-link")).to_have_attribute("href", f"/-/errkb/record/{SEED_SLUG}")

        page.locator("#facet-errorClass").get_by_role("link", name="ValueError", exact=True).click()
        page.wait_for_url(lambda url: "errorClass=ValueError" in url and "q=DataParallel" in url)
        expect(rows).not_to_have_count(0)
        for cls in rows.locator("td.errkb-col-class").all_inner_texts():
            assert cls == "ValueError"

        page.locator(f'table.errkb-records a[href="/-/errkb/record/{SEED_SLUG}"]').click()
        expect(page).to_have_url(f"{base}/-/errkb/record/{SEED_SLUG}")
        expect(page.locator("h1.errkb-title")).to_have_text("DataParallel not supported when CRF is used")
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


def test_the_home_page_paste_box_finds_the_record(tmp_path, page):
    from playwright.sync_api import expect

    with running_server(make_root(tmp_path)) as base:
        page.goto(base + "/")
        expect(page.locator(".errkb-home-verdicts")).to_contain_text("verified")
        page.fill('form.errkb-home-paste textarea[name="traceback"]', SEED_TRACEBACK)
        page.click('form.errkb-home-paste input[type="submit"]')
        expect(page).to_have_url(f"{base}/-/errkb/match")
        expect(page.locator("li.errkb-match").first.locator("a").first).to_have_attribute(
            "href", f"/-/errkb/record/{SEED_SLUG}"
        )


def box(locator) -> dict:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not displayed"
    return found


@pytest.mark.parametrize("width", [1280, 390])
def test_records_view_fits_the_screen(tmp_path, browser, width):
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        root = make_root(tmp_path)
        with running_server(root) as base:
            page.goto(base + "/")
            page.get_by_role("link", name="Browse all records").click()
            expect(page).to_have_url(f"{base}/-/errkb/records")
            page.wait_for_load_state("load")  # the stylesheet applied before anything is measured
            rows = page.locator("table.errkb-records tbody tr")
            # A page of PAGE_SIZE records, the total above them, a link to the next page below.
            total = len(list((root / "records").glob("*.json")))
            assert total > PAGE_SIZE
            expect(rows).to_have_count(PAGE_SIZE)
            expect(page.locator("a[rel=next]")).to_be_visible()
            expect(page.locator("body")).to_contain_text(f"{total} records")
            # No sideways scrolling of the page, whatever the width: long text is not in the table.
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            expect(page.locator("table.errkb-records")).not_to_contain_text("def build_criterion")
            # DDP's message runs to 900 characters: the table shows its first lines, the record page all of it.
            longest = page.locator('a.errkb-record-link[href="/-/errkb/record/ddp-unused-parameters-reduction-not-finished"]')
            assert box(longest)["height"] <= 130
            first_message = box(rows.first.locator("a.errkb-record-link"))
            facets = box(page.locator("aside.errkb-facets"))
            assert first_message["y"] + first_message["height"] <= 900  # the first record is on the first screen
            if width >= 1000:
                headings = [h.strip().lower() for h in page.locator("table.errkb-records thead th").all_inner_texts()]
                assert [h for h in headings if h != "verified on"] == ["message", "class", "library", "verdict", "tags"]
                assert facets["x"] + facets["width"] <= box(page.locator("table.errkb-records"))["x"]  # beside
            else:
                assert facets["y"] + facets["height"] <= first_message["y"]  # before the rows
                expect(page.locator("table.errkb-records thead")).to_be_hidden()  # cards, not a squeezed table
            expect(rows.first.locator(".errkb-badge")).to_be_visible()
            rows.first.locator("a.errkb-record-link").click()  # the whole record, one click away
            expect(page.locator("h1.errkb-title")).to_be_visible()
    finally:
        context.close()


def test_markup_in_a_record_does_not_run(tmp_path, page):
    """The probe (markup in every field of a record and its result files) on each page that shows it: no
    script runs, no dialog opens."""
    from playwright.sync_api import expect

    root = make_root(tmp_path / "root")
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    add_record(root, xss_record(incoming))
    write_xss_results(root)
    catalog.build(root)
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    with running_server(root) as base:
        page.goto(f"{base}/-/errkb/record/{XSS_SLUG}")
        expect(page.locator(".errkb-head")).to_contain_text('<script>alert("errorMessage")</script>')
        for path in ["/", "/-/errkb/records?q=Probe", f"/catalog/records/{XSS_SLUG}", "/catalog/reproduction_runs",
                     "/catalog/search?q=Probe"]:
            page.goto(base + path)
            page.wait_for_load_state("load")
        # Filtered to the probe: with over 100 records it is no longer on the table's first page.
        page.goto(f"{base}/catalog/records?_col=errorMessage&_col=documentation&_col=solutions&slug={XSS_SLUG}")
        expect(page.locator("table.rows-and-columns")).to_contain_text('<img src=x onerror=alert("documentation")>')
        page.goto(f"{base}/-/errkb/match")
        page.fill('textarea[name="traceback"]', XSS_PASTE)
        page.locator('form.errkb-match-form [type="submit"]').click()
        page.wait_for_load_state("load")
        expect(page.locator("li.errkb-match").first).to_contain_text('<script>alert("errorMessage")</script>')
    assert dialogs == []


@pytest.mark.parametrize("width", [1280, 390])
def test_the_record_page_reads_at_1280_and_390(tmp_path, browser, width):
    """Title first, the long message collapsed, fixes on the first screen, the whole matrix visible without
    scrolling sideways (compact release columns), at a laptop's and a phone's width."""
    import shutil

    from conftest import REPO
    from errkb import catalog

    root = tmp_path / "root"
    for folder in ("records", "reproductions", "verifications", "keys"):  # keys: to verify the results
        shutil.copytree(REPO / folder, root / folder)
    catalog.build(root)
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        with running_server(root) as base:
            page.goto(f"{base}/-/errkb/record/cuda-out-of-memory")
            page.wait_for_load_state("load")
            assert page.locator("h1.errkb-title").inner_text() == "CUDA out of memory"
            assert not page.locator("pre.errkb-message").is_visible()  # 11 lines, collapsed under their first
            fixes = page.locator("h2", has_text="How to fix it").bounding_box()
            assert fixes["y"] < 900, "the fixes start on the first screen"
            assert page.evaluate("document.documentElement.scrollWidth") <= width  # long identifiers wrap
            page.goto(f"{base}/-/errkb/record/expected-all-tensors-on-same-device")
            page.wait_for_load_state("load")
            assert page.evaluate("document.documentElement.scrollWidth") <= width
            wrap = page.locator(".errkb-matrix-wrap")
            assert wrap.evaluate("e => e.scrollWidth <= e.clientWidth"), "the matrix scrolls sideways"
    finally:
        context.close()
