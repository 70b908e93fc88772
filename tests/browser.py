"""Headless Chromium from Debian's packages, driven by Selenium through Debian's chromedriver
(no browser download). Tests that need it take the ``chromium`` fixture; without the two
programs they are skipped, unless ``AGENTEVAL_REQUIRE_BROWSER=1`` (CI) makes that a failure.

A test saves screenshots with :func:`screenshot`: the file is named in the run's terminal
summary ("screenshots:") by tests/conftest.py.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
#: the flags a closed network needs: no background fetches, no component updates
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1366,768")


def _missing() -> str | None:
    if CHROMIUM is None or CHROMEDRIVER is None:
        return "chromium and chromedriver are not installed (apt-get install chromium " \
               "chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


@pytest.fixture
def chromium() -> Iterator[Any]:
    why = _missing()
    if why is not None:
        if os.environ.get("AGENTEVAL_REQUIRE_BROWSER") == "1":
            pytest.fail(f"the browser tests must run here: {why}")
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    profile = tempfile.mkdtemp(prefix="agenteval-chromium-")
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait_for(check: Callable[[], Any], timeout: float = 10.0) -> Any:
    """``check()``'s first truthy value within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def screenshot(driver: Any, name: str, record_property: Callable[[str, object], None]) -> Path:
    """Save what the browser shows as ``<AGENTEVAL_SCREENSHOTS or tmp>/<name>.png``."""
    folder = Path(os.environ.get("AGENTEVAL_SCREENSHOTS") or tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    driver.save_screenshot(str(path))
    record_property("screenshot", str(path))
    return path


def errors_in_console(driver: Any) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
