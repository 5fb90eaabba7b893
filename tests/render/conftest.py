import pytest

from tests.support.browser import chromium


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per module (skips, saying how to enable it, without Playwright or Chromium)."""
    with chromium() as b:
        yield b
