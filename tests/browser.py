"""Headless Chromium from Debian's packages, driven by Playwright's Python package pointed at
that executable (no browser download). Tests that need it take the ``chromium`` fixture (a
Playwright ``Page`` of 1366×768); without the program they are skipped, unless
``AGENTEVAL_REQUIRE_BROWSER=1`` (CI) makes that a failure.

A test saves screenshots with :func:`screenshot`: the file is named in the run's terminal
summary ("screenshots:") by tests/conftest.py.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
#: the flags a closed network needs: no background fetches, no component updates
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]


def _missing() -> str | None:
    if CHROMIUM is None:
        return "chromium is not installed (apt-get install chromium)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    return None


@pytest.fixture
def chromium() -> Iterator[Any]:
    why = _missing()
    if why is not None:
        if os.environ.get("AGENTEVAL_REQUIRE_BROWSER") == "1":
            pytest.fail(f"the browser tests must run here: {why}")
        pytest.skip(why)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.errors = []  # type: ignore[attr-defined]  # what the page logged as errors
            page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
            page.on("pageerror", lambda e: page.errors.append(str(e)))
            yield page
        finally:
            browser.close()


def screenshot(page: Any, name: str, record_property: Callable[[str, object], None]) -> Path:
    """Save what the browser shows as ``<AGENTEVAL_SCREENSHOTS or tmp>/<name>.png``."""
    folder = Path(os.environ.get("AGENTEVAL_SCREENSHOTS") or tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    record_property("screenshot", str(path))
    return path
