"""Every page in a real browser: the top navigation, a link to each page's path, the root URL;
each page drawn whole (its charts, no exception) and kept as a screenshot.

Streamlit reruns are asynchronous, so every check waits on visible text with Playwright's
``expect`` (auto-waiting), never on sleeps.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from browser_helpers import LOAD_TIMEOUT_MS, PAGES, headline, open_app, query, screenshot
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e


def test_navigation_opens_every_page(page: Page, streamlit_server: str) -> None:
    """Every link of the top navigation opens its page, with the scenario kept in the URL."""
    open_app(page, f"{streamlit_server}/?pw=2.5")
    for title in ("Plan a job", "Instances", "Catalog editor", "Simulate", "Live prices",
                  "Regions", "Method", "Recommend"):
        page.get_by_role("link", name=title, exact=True).first.click()
        expect(page.get_by_role("heading", name=title, level=1)).to_be_visible(
            timeout=LOAD_TIMEOUT_MS)
        expect(page).to_have_url(re.compile(r"[?&]pw=2.5(&|$)"))
        expect(page.get_by_test_id("stException")).to_have_count(0)


def test_the_root_url_opens_recommend(page: Page, streamlit_server: str) -> None:
    """"/" shows Recommend in place (no redirect: one round trip on a first visit)."""
    open_app(page, f"{streamlit_server}/?pw=2.5")
    expect(headline(page)).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    expect(page.get_by_text("Page not found")).to_have_count(0)
    assert urlparse(page.url).path == "/"
    assert query(page)["pw"] == "2.5"
    page.get_by_role("link", name="Plan a job", exact=True).first.click()
    expect(page.get_by_role("heading", name="Plan a job", level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)


@pytest.mark.parametrize("slug", list(PAGES))
def test_a_link_to_a_page_path_opens_it_whole(page: Page, streamlit_server: str,
                                              artifacts_dir: Path, slug: str) -> None:
    """A link to ``/<page>`` opens that page with the scenario kept, every chart drawn and no
    exception; the screenshot is kept as an artifact. (The older ``?page=`` form is read by
    the URL codec, tested without a browser, and against a path in test_inputs_browser.)"""
    open_app(page, f"{streamlit_server}/{slug}?pw=2.5", PAGES[slug])
    expect(page.get_by_text("Page not found")).to_have_count(0)
    assert urlparse(page.url).path == f"/{slug}"
    assert query(page)["pw"] == "2.5"
    charts = {"recommend": 2, "plan": 3, "instances": 3, "simulate": 2, "method": 1}.get(slug, 0)
    expect(page.locator(".js-plotly-plot")).to_have_count(charts, timeout=LOAD_TIMEOUT_MS)
    if slug == "method":
        expect(page.get_by_text("Performance-First beats DeepVM")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    screenshot(page, artifacts_dir / f"page-{slug}.png")


def test_no_page_asks_anything_of_another_host(page: Page, streamlit_server: str) -> None:
    """Issue 27: offline, no page makes a failed request (the page icon came from a font CDN):
    every request of the default page and Plan goes to the dashboard's own host."""
    hosts: set[str] = set()
    page.on("request", lambda request: hosts.add(urlparse(request.url).hostname or ""))
    for slug, title in (("", "Recommend"), ("plan", "Plan a job")):
        open_app(page, f"{streamlit_server}/{slug}", title)
        expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    own = urlparse(streamlit_server).hostname
    assert hosts - {own, ""} == set(), hosts
