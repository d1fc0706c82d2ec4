#!/usr/bin/env python3
"""Regenerate docs/viewer-leaderboard.png and docs/viewer-trajectory.png.

Runs the benchmark against the scripted loopback server (no network, no key), builds the viewer
and photographs two pages with headless Chromium (Debian's `chromium` and `chromium-driver`,
which scripts/test-slow.sh installs). Usage: .venv/bin/python scripts/viewer-screenshots.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support: the doubles

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from independence_bench.cli.main import main
from independence_bench.reports.viewer import model_slug
from independence_bench.stats.core import Resampling
from independence_bench.workflows.view import ViewOptions, build_viewer
from support.mock_server import MockConfig, MockServer

DOCS = Path(__file__).resolve().parent.parent / "docs"
MODELS = "scripted-firm,scripted-plain,scripted-echo,scripted-caving"


def browser(width: int, height: int) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in (
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={tempfile.mkdtemp(prefix='aib-chromium-')}",
        f"--window-size={width},{height}", "--hide-scrollbars", "--force-color-profile=srgb",
    ):  # fmt: skip
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait_for(driver: webdriver.Chrome, text: str) -> None:
    WebDriverWait(driver, 10).until(lambda d: text in d.find_element(By.ID, "app").text)
    time.sleep(0.3)


def main_() -> int:
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "store"
        with MockServer(MockConfig()) as server:
            args = ["run", "--models", MODELS, "--judge", "scripted-judge"]
            args += ["--base-url", server.base_url, "--runs", "3", "--data-dir", str(data)]
            if main(args) != 0:
                return 1
        index = build_viewer(ViewOptions(data_dir=data, resampling=Resampling(2000)))
        driver = browser(1360, 520)
        try:
            driver.get(index.as_uri())
            wait_for(driver, "scripted-caving")
            driver.save_screenshot(str(DOCS / "viewer-leaderboard.png"))
            driver.set_window_size(1280, 1035)
            driver.get(f"{index.as_uri()}#/model/{model_slug('v2', 'scripted-caving')}")
            wait_for(driver, "Scenarios")
            title = "Walked step by step toward declaring no view at all"
            driver.find_element(By.XPATH, f"//tr[td/span[text()='{title}']]//a[1]").click()
            wait_for(driver, "Conversation")
            driver.save_screenshot(str(DOCS / "viewer-trajectory.png"))
        finally:
            driver.quit()
    print(f"wrote {DOCS / 'viewer-leaderboard.png'} and {DOCS / 'viewer-trajectory.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
