"""Headless Chromium (Debian's `chromium`) driven by Playwright for Python, for the report and notebook tests.

Enable with `apt-get install -y chromium` and `pip install -e '.[browser]'` (never `playwright install`: the
system Chromium is used). Without them `require()` skips the calling test and says how to enable it."""
import os
import shutil
from contextlib import contextmanager

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ENABLE = "apt-get install -y chromium && pip install -e '.[browser]'"


def require():
    """Playwright's sync API, or a skip naming what is missing."""
    sync_api = pytest.importorskip("playwright.sync_api", reason=f"playwright is not installed: {ENABLE}")
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        pytest.skip(f"no Chromium at {CHROMIUM}: {ENABLE}")
    return sync_api


@contextmanager
def chromium():
    """A launched headless Chromium, closed on exit."""
    sync_api = require()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium"),
                              args=ARGS)
        try:
            yield b
        finally:
            b.close()
