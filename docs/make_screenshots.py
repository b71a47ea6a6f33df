"""The README's screenshots, from the real catalog with a real verification run on this machine.

    python docs/make_screenshots.py      (needs /usr/bin/chromium and the `repro` and `test` extras)

Copies records/ and reproductions/ to a scratch root, runs `errkb reproduce` on the seed there (so the
history shown is a real run, with this machine's versions and devices), serves it with `errkb serve`, and
saves docs/screenshots/record.png and match.png from headless Chromium.
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from test_web_browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from web_support import SEED_SLUG, SEED_TRACEBACK, running_server  # noqa: E402

OUT = REPO / "docs" / "screenshots"


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(REPO / "records", root / "records")
        shutil.copytree(REPO / "reproductions", root / "reproductions")
        errkb = [sys.executable, "-m", "errkb.cli", "--root", str(root)]
        subprocess.run(errkb + ["build"], check=True)
        subprocess.run(errkb + ["reproduce", SEED_SLUG, "dataparallel-gather-scalars-warning"], check=True)
        with running_server(root) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            OUT.mkdir(parents=True, exist_ok=True)
            page.goto(f"{base}/-/errkb/record/{SEED_SLUG}")
            page.screenshot(path=str(OUT / "record.png"), full_page=True)
            page.goto(f"{base}/-/errkb/match")
            page.fill('textarea[name="traceback"]', SEED_TRACEBACK)
            page.click('form.errkb-match-form input[type="submit"]')
            page.wait_for_selector("li.errkb-match")
            page.screenshot(path=str(OUT / "match.png"), full_page=True)
            browser.close()
    print(f"saved {OUT / 'record.png'} and {OUT / 'match.png'}")


if __name__ == "__main__":
    main()
