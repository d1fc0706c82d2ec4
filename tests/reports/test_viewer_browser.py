"""The viewer in a real browser: headless Chromium (Debian's `chromium` + `chromium-driver`,
installed by scripts/test-slow.sh) driven by Selenium, on a store built by a loopback run.

The tests click leaderboard → model → trajectory → compare and read the visible text, and they
plant hostile replies (a `<script>`, an `<img onerror>`, a `javascript:` link) to check that
nothing a model or judge wrote can run, open a dialog or navigate.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from independence_bench.cli.main import main
from independence_bench.reports.viewer import model_slug
from independence_bench.stats.core import Resampling
from independence_bench.store.store import Store
from independence_bench.suites.suite import load_suite
from independence_bench.workflows.view import ViewOptions, build_viewer
from support.mock_behaviours import CAVE_MARKER, FIRM_MARKER
from support.mock_server import MockConfig, MockServer
from support.report_fixtures import (
    FEW_RESAMPLES,
    HOSTILE_REPLY,
    add_item,
    build_store,
    judge_scores,
)

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
HOSTILE_LABEL = "evil<img src=x onerror=window.__pwned=4><script>window.__pwned=5</script>"
HOSTILE_SCORE_KEY = "<img src=x onerror=window.__pwned=6>"
SHORT = 10


def chrome(window: str = "1400,1000") -> Any:
    """Headless Chromium with a fresh profile and no background network."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail(
            "browser tests need Debian's chromium and chromium-driver: scripts/test-slow.sh"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={tempfile.mkdtemp(prefix='aib-chromium-')}",
        f"--window-size={window}",
    ):  # fmt: skip
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def plant_hostile_model(data: Path, judge: str) -> None:
    """A model whose label, replies, reasoning and judge output are all hostile markup."""
    suite = load_suite("v2")
    rng = random.Random(0)
    with Store(data) as store:
        for run_index in (1, 2):
            run, _ = store.ensure_run(
                model_label=HOSTILE_LABEL,
                model_id="evil/model",
                suite_id=suite.id,
                suite_version=suite.version,
                suite_hash=suite.content_hash,
                run_index=run_index,
                model_config={"id": "evil/model"},
                package_version="0.1.0",
            )
            for scenario in suite.scenarios:
                scores = judge_scores(scenario.kind, 0.5, rng) | {HOSTILE_SCORE_KEY: HOSTILE_REPLY}
                add_item(store, suite, run, scenario, variant="strong_independence",
                         mode="tool_role", replies=[HOSTILE_REPLY] * len(scenario.turns),
                         scores=scores, judge=judge, reasoning=HOSTILE_REPLY,
                         judge_reasoning=HOSTILE_REPLY)  # fmt: skip


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("store")
    with MockServer(MockConfig()) as server:
        code = main(["run", "--models", "scripted-firm,scripted-caving", "--judge",
                     "scripted-judge", "--base-url", server.base_url, "--runs", "2",
                     "--data-dir", str(data)])  # fmt: skip
    assert code == 0
    plant_hostile_model(data, "scripted-judge")
    return build_viewer(ViewOptions(data_dir=data, resampling=Resampling(200)))


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    browser = chrome()
    try:
        yield browser
    finally:
        browser.quit()


def _wait_text(driver: Any, text: str, timeout: float = SHORT) -> str:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, timeout).until(lambda d: text in d.find_element(By.ID, "app").text)
    return str(driver.find_element(By.ID, "app").text)


def _click_link(driver: Any, text: str) -> None:
    from selenium.webdriver.common.by import By

    driver.find_element(By.LINK_TEXT, text).click()


def _assert_nothing_ran(driver: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018
    planted = "#app img, #app script, #app iframe, #app [onerror], a[href^='javascript']"
    assert driver.execute_script(f"return document.querySelectorAll({planted!r}).length") == 0
    assert driver.current_url.split("#")[0].endswith("/index.html")


def _rows(driver: Any) -> list[str]:
    from selenium.webdriver.common.by import By

    return [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.board tbody tr")]


def test_leaderboard_model_trajectory_compare(driver: Any, viewer: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver.get(viewer.as_uri())
    board = _wait_text(driver, "scripted-caving")
    assert "Judge scripted-judge: not calibrated" in board  # the judge's standing
    rows = _rows(driver)
    assert len(rows) == 3
    # the Rank cell is the rank and the model's own rank interval, then the label
    assert rows[0].startswith("1 (1–1) scripted-firm") and "scripted-caving" in rows[2]
    assert driver.execute_script("return Object.keys(window.AIB_MODELS).length") == 0

    search = driver.find_element(By.ID, "search")
    search.send_keys("cav")
    found = _rows(driver)
    assert len(found) == 1 and found[0].startswith("3 (") and " scripted-caving " in found[0]
    search.clear()
    search.send_keys(" ")
    driver.find_element(By.XPATH, "//button[starts-with(., 'Index')]").click()
    driver.find_element(By.XPATH, "//button[starts-with(., 'Index')]").click()  # ascending
    assert "scripted-caving" in _rows(driver)[0]

    _click_link(driver, "scripted-firm")
    page = _wait_text(driver, "Scenarios")
    assert "Index\n100.0" in page and "Items scored\n30/30" in page
    assert "Judge scripted-judge: not calibrated" in page
    assert driver.execute_script("return Object.keys(window.AIB_MODELS)") == [
        model_slug("v2", "scripted-firm")
    ]
    negotiation = load_suite("v2").scenario("negotiation")
    driver.find_element(
        By.XPATH, f"//tr[td/span[text()={json.dumps(negotiation.title)}]]//a[1]"
    ).click()
    page = _wait_text(driver, "Conversation")
    assert negotiation.turns[1].splitlines()[0] in page
    assert "scripted turn 1/2" in page and "scripted turn 2/2" in page and "pressure" in page
    assert FIRM_MARKER in page
    assert "The replies contain the firm marker" in page  # the judge's reasoning
    assert "drift_from_initial" in page
    driver.find_element(By.XPATH, "//summary[starts-with(., 'Exact messages')]").click()
    page = _wait_text(driver, "tool result (the human's words)")
    assert "calls send_message_to_human" in page and "assistant (the reply)" in page

    _click_link(driver, "Compare this scenario with another model")
    _wait_text(driver, "Compare: " + negotiation.title)
    Select(driver.find_element(By.ID, "model-b")).select_by_visible_text("scripted-caving")
    page = _wait_text(driver, CAVE_MARKER)
    assert FIRM_MARKER in page and "Compare: " + negotiation.title in page
    assert page.count("scripted turn 2/2") == 2


def test_hostile_output_is_shown_as_text_and_runs_nothing(driver: Any, viewer: Path) -> None:
    from selenium.webdriver.common.by import By

    driver.get(viewer.as_uri())
    page = _wait_text(driver, "scripted-firm")
    assert HOSTILE_LABEL in page
    _assert_nothing_ran(driver)

    _click_link(driver, HOSTILE_LABEL)
    page = _wait_text(driver, "Scenarios")
    assert HOSTILE_LABEL in page
    _assert_nothing_ran(driver)

    driver.find_element(By.CSS_SELECTOR, "td.score a").click()
    page = _wait_text(driver, "Conversation")
    for summary in driver.find_elements(By.TAG_NAME, "summary"):
        summary.click()  # unfold reasoning, exact messages, raw judge replies
    page = _wait_text(driver, "assistant (the reply)")
    assert "<script>window.__pwned=1</script>" in page
    assert '<img src=x onerror="window.__pwned=2">' in page
    assert '<a href="javascript:window.__pwned=3">x</a>' in page
    assert HOSTILE_SCORE_KEY in page
    assert page.count("<script>window.__pwned=1</script>") >= 4  # reply, reasoning, judge
    _assert_nothing_ran(driver)

    firm = model_slug("v2", "scripted-firm")
    hostile = model_slug("v2", HOSTILE_LABEL)
    driver.get(f"{viewer.as_uri()}#/compare?a={hostile}&b={firm}&s=stability_weather")
    page = _wait_text(driver, FIRM_MARKER)
    assert "<script>window.__pwned=1</script>" in page
    _assert_nothing_ran(driver)

    driver.get(viewer.as_uri() + "#/item/" + hostile + "/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E")
    page = _wait_text(driver, "No such conversation")
    _assert_nothing_ran(driver)


def test_150_models_open_at_once_and_load_lazily(
    driver: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from selenium.webdriver.common.by import By

    data = tmp_path_factory.mktemp("big")
    labels = {f"vendor-{i % 7}/model-{i:03d}": i / 150 for i in range(150)}
    build_store(data, labels, runs=5).close()
    index = build_viewer(ViewOptions(data_dir=data, resampling=FEW_RESAMPLES))
    assert (index.parent / "data" / "index.js").stat().st_size < 300_000

    driver.get(index.as_uri())
    _wait_text(driver, "150 of 150 models")
    assert len(_rows(driver)) == 150
    # file:// loads leave no resource-timing entries, so count the script tags themselves.
    loaded = (
        "return [...document.querySelectorAll('script[src*=\"data/models/\"]')].map(s => s.src)"
    )
    assert driver.execute_script(loaded) == []

    driver.find_element(By.ID, "search").send_keys("model-149")
    assert len(_rows(driver)) == 1
    _click_link(driver, "vendor-2/model-149")
    page = _wait_text(driver, "Scenarios")
    assert "Runs\n5" in page and "Run 5" in page
    assert driver.execute_script(loaded) == [
        (index.parent / "data" / "models" / f"{model_slug('v2', 'vendor-2/model-149')}.js").as_uri()
    ]
