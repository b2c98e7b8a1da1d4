"""The dashboard in a real Chromium (Debian's, driven by Playwright through ``executable_path``),
against ``sld serve`` as a process: the journey a new user takes, at a desktop and a phone size.

Every page visited is saved as a screenshot under ``$SLD_TEST_ARTIFACTS`` (default
``test-artifacts/`` in the working directory).  A console error or an uncaught exception on any
page fails the test.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import httpx
import pytest

from tests.app.conftest import toy_csv
from tests.app.test_service_e2e import free_port, start, stop, wait_healthy
from tests.agent.storage.conftest import postgres_database  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TASK = "parallel_scaling_law"  # the smallest bundled task: a run of 30 candidates takes seconds


def chromium_path() -> str | None:
    return os.environ.get("SLD_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser():
    path = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        path = None
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set but Chromium or Playwright is missing: .ci/run installs Debian's chromium")
        pytest.skip("browser tests need Debian's chromium and the playwright package")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory, sldbench_dir):
    base_dir = tmp_path_factory.mktemp("serve")
    port = free_port()
    env = {**os.environ, "SLD_DATA_DIR": str(sldbench_dir), "SLD_EMBEDDED_WORKERS": "1"}
    proc = start(["serve", "--port", str(port), "--database-url", f"sqlite:///{base_dir}/sld.db",
                  "--log-level", "warning"], env)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc)
        yield base
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def shots() -> Path:
    out = Path(os.environ.get("SLD_TEST_ARTIFACTS", "test-artifacts")) / "dashboard"
    out.mkdir(parents=True, exist_ok=True)
    return out


class Watched:
    """A page whose console errors and uncaught exceptions are collected."""

    def __init__(self, browser, width: int, height: int):
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))

    def visit(self, url: str, shots: Path | None = None, name: str = ""):
        response = self.page.goto(url)
        assert response is not None and response.ok, (url, response and response.status)
        self.check(shots, name)

    def check(self, shots: Path | None = None, name: str = ""):
        page = self.page
        page.wait_for_load_state("networkidle")
        title = page.title()
        assert title.endswith("· sld") and len(title) > len("· sld") + 1, title
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{page.url} is {overflow}px wider than the window"
        if shots is not None:
            page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
        assert not self.problems, self.problems

    def close(self):
        self.context.close()


def test_the_whole_journey_in_a_browser(browser, server, shots):
    w = Watched(browser, 1280, 800)
    page = w.page
    try:
        w.visit(server + "/", shots, "home")
        page.get_by_role("button", name=f"Import {TASK}").click()
        page.wait_for_url("**/ui/datasets/*")
        w.check(shots, "dataset")
        assert page.locator("#dataset-plot canvas").count() >= 1  # uPlot drew the data

        # a small run from the form: the task's columns are ticked already
        page.get_by_label("Budget (candidates)").fill("30")
        page.get_by_role("button", name="Start run").click()
        page.wait_for_url("**/ui/runs/*")
        run_url = page.url
        first = int(page.get_by_test_id("candidates").inner_text())
        page.get_by_test_id("state").filter(has_text="done").wait_for(timeout=180_000)  # htmx polls it
        assert int(page.get_by_test_id("candidates").inner_text()) > first
        w.check(shots, "run")

        page.get_by_role("link", name="Leaderboard").click()
        page.wait_for_url("**/leaderboard")
        assert page.locator("td.law math").count() >= 1
        w.check(shots, "leaderboard")
        page.get_by_role("link", name="Complexity").click()  # sorting is a link: the keyboard can use it
        page.wait_for_url("**sort=complexity**")
        w.check()

        page.goto(run_url + "/law")
        assert page.locator(".law-math math").count() == 1
        assert page.locator("#law-plot canvas").count() >= 1 and page.locator("#residual-plot canvas").count() >= 1
        w.check(shots, "law")
        page.get_by_label("Candidate runs").fill("num_params,parallel_size,group\n1e9,8,pile\n5e8,2,pile\n")
        page.get_by_label("Target").fill("num_params=2e9,parallel_size=16,group=pile")
        page.get_by_role("button", name="Rank").click()
        page.get_by_test_id("suggestions").wait_for()
        assert page.get_by_test_id("suggestions").locator("li").count() == 2
        w.check(shots, "law-suggestions")

        page.get_by_role("link", name="Compare with another law →").click()
        page.get_by_role("button", name="Compare with the human law").click()
        page.get_by_test_id("comparison").wait_for(timeout=60_000)
        assert "human" in page.get_by_test_id("comparison").inner_text()
        page.locator("#compare-plot canvas").first.wait_for()
        w.check(shots, "compare")

        # an upload through the page, then a CSV with a broken row refused with its reason
        csv = shots / "sweep.csv"
        csv.write_bytes(toy_csv())
        w.visit(server + "/")
        page.get_by_label("CSV file").set_input_files(str(csv))
        page.get_by_label("Name").fill("my sweep")
        page.get_by_role("button", name="Upload").click()
        page.wait_for_url("**/ui/datasets/*")
        assert page.get_by_role("heading", name="my sweep").count() == 1
        bad = shots / "bad.csv"
        bad.write_text("N,loss\n1,2,3\n4,5,6\n")
        w.visit(server + "/")
        page.get_by_label("CSV file").set_input_files(str(bad))
        page.get_by_role("button", name="Upload").click()
        alert = page.get_by_role("alert")
        assert "line 2 has 3 field(s)" in alert.inner_text()
        page.screenshot(path=str(shots / "rejected-csv.png"))
    finally:
        w.close()


@pytest.mark.postgres
def test_on_postgresql_with_a_separate_worker_pages_fit_a_phone_and_the_keyboard(browser, postgres_database,
                                                                                  shots):
    """``sld serve --workers 0`` and ``sld worker`` as two processes on PostgreSQL, a phone's screen."""
    from agent.storage.testing import empty_tables
    from tests.app.test_service_e2e import poll_until_finished, queue, upload

    empty_tables(postgres_database)
    port = free_port()
    env = {**os.environ, "DATABASE_URL": postgres_database, "SLD_POLL_INTERVAL": "0.2"}
    server = start(["serve", "--port", str(port), "--workers", "0", "--log-level", "warning"], env)
    worker = start(["worker"], env)
    base = f"http://127.0.0.1:{port}"
    w = None
    try:
        wait_healthy(base, server)
        with httpx.Client(base_url=base, timeout=60) as http:
            run = poll_until_finished(http, queue(http, upload(http)))
        w = Watched(browser, 390, 844)
        for name, path in [("home", "/"), ("dataset", f"/ui/datasets/{run['dataset_id']}"),
                           ("run", f"/ui/runs/{run['id']}"), ("leaderboard", f"/ui/runs/{run['id']}/leaderboard"),
                           ("law", f"/ui/runs/{run['id']}/law"), ("compare", f"/ui/runs/{run['id']}/compare")]:
            w.visit(base + path, shots, f"phone-{name}")
        w.page.keyboard.press("Tab")
        assert w.page.evaluate("document.activeElement.textContent") == "Skip to content"
        w.page.keyboard.press("Enter")  # skips the navigation: the next Tab lands in the page's content
        w.page.keyboard.press("Tab")
        assert w.page.evaluate("document.activeElement.closest('main') !== null")
    finally:
        if w is not None:
            w.close()
        worker_log, log = stop(worker), stop(server)
    assert "Traceback" not in log + worker_log, log + worker_log
