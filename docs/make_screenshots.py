"""The README's screenshots, from the real catalog with a real verification run on this machine.

    python docs/make_screenshots.py [OUT]      (needs /usr/bin/chromium and the `repro` and `test` extras)

Copies records/, reproductions/ and the committed verification results (verifications/: real runs across PyTorch
releases) to a scratch root, serves it with `errkb serve`, and
saves, from headless Chromium at 1280 px and 390 px wide, into OUT (default docs/screenshots/):
home, records (the "Browse records" menu link), search (Datasette's, and the browser's for "OOM"), record pages
(the seed, CUDA out of memory, one verified on six releases) and match pages (the seed, an OOM paste).
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

WIDTHS = {"": 1280, "-390": 390}  # file name suffix: viewport width
OOM_SLUG = "cuda-out-of-memory"
MATRIX_SLUG = "expected-all-tensors-on-same-device"
OOM_PASTE = (
    "Traceback (most recent call last):\n  File \"train.py\", line 41, in <module>\n    loss = model(batch).sum()\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB "
    "of which 1.02 GiB is free. Of the allocated memory 21.10 GiB is allocated by PyTorch, and 1.05 GiB is reserved "
    "by PyTorch but unallocated.\n"
)


def shoot(page, base: str, out: Path, suffix: str) -> list[Path]:
    saved = []

    def save(name: str) -> None:
        path = out / f"{name}{suffix}.png"
        page.screenshot(path=str(path), full_page=True)
        saved.append(path)

    page.goto(base + "/")
    save("home")
    # Follow the navigation menu's link, so the same script shows what a user reaches before and after a change.
    page.goto(base + page.locator('a:text-is("Browse records")').first.get_attribute("href"))
    save("records")
    page.goto(base + "/catalog/search?q=DataParallel")
    save("search")
    page.goto(base + "/-/errkb/records?q=OOM")  # a synonym: the records say "out of memory"
    save("search-oom")
    page.goto(f"{base}/-/errkb/record/{SEED_SLUG}")
    save("record")
    page.goto(f"{base}/-/errkb/record/{OOM_SLUG}")  # an 11-line message, skipped on CPU-only machines
    save("record-oom")
    page.goto(f"{base}/-/errkb/record/{MATRIX_SLUG}")  # verified on six releases
    save("record-matrix")
    for name, paste in (("match", SEED_TRACEBACK), ("match-oom", OOM_PASTE)):
        page.goto(f"{base}/-/errkb/match")
        page.fill('textarea[name="traceback"]', paste)
        page.click('form.errkb-match-form input[type="submit"]')
        page.wait_for_selector("li.errkb-match")
        save(name)
    return saved


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shutil.copytree(REPO / "records", root / "records")
        shutil.copytree(REPO / "reproductions", root / "reproductions")
        shutil.copytree(REPO / "verifications", root / "verifications")
        shutil.copytree(REPO / "keys", root / "keys")  # the maintainers' public keys: results count only when signed
        subprocess.run([sys.executable, "-m", "errkb.cli", "--root", str(root), "build"], check=True)
        with running_server(root) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            saved = []
            for suffix, width in WIDTHS.items():
                page = browser.new_page(viewport={"width": width, "height": 900})
                saved += shoot(page, base, out, suffix)
                page.close()
            browser.close()
    print("saved", *map(str, saved), sep="\n  ")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else REPO / "docs" / "screenshots")
