"""Every page in a real browser: the root URL, then every link of the top navigation in one
visit at 1280x720 (Running jobs through the menu the navigation folds its last links into; each
page drawn whole: its charts, no exception, its title right under the page links, kept as a
screenshot), and a first load at a page's path; no request goes to another host.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from browser_helpers import (
    LOAD_TIMEOUT_MS,
    PAGES,
    headline,
    open_app,
    query,
    screenshot,
    wait_until_settled,
)
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

#: The top navigation's links in the order the walk follows them (from Recommend at "/").
NAVIGATION = ("Plan a job", "Instances", "Catalog editor", "Simulate", "Live prices", "Regions",
              "Method", "Running jobs", "Recommend")
#: The links the top navigation folds into its menu at 1280 px (dashboard/url_pages.py puts
#: them last): the walk opens the menu (its button, "2 more") and clicks the menu item.
FOLDED = ("Running jobs",)
#: The charts each page of PAGES draws at PW 2.5.
CHARTS = {"recommend": 2, "plan": 3, "instances": 3, "catalog": 0, "simulate": 2, "method": 1}
SLUGS = {title: slug for slug, title in PAGES.items()}
#: The walk's window: issue 20 item 17's small screen, where each page's title must sit right
#: under the page links (before: 68 px lower, about 120 px of empty screen above every title).
SMALL_SCREEN = {"width": 1280, "height": 720}
TITLE_GAP = """() => document.querySelector('h1').getBoundingClientRect().top
  - document.querySelector('header').getBoundingClientRect().bottom"""
#: Most px between the bottom of the page links and the top of the page title's box.
TITLE_GAP_PX = 24


def record_hosts(page: Page) -> set[str]:
    """The host of every request ``page`` makes from now on (filled as they are made)."""
    hosts: set[str] = set()
    page.on("request", lambda request: hosts.add(urlparse(request.url).hostname or ""))
    return hosts


def drawn_whole(page: Page, slug: str) -> None:
    """``/<slug>`` shows its page with PW 2.5 kept, every chart drawn and no exception."""
    expect(page.get_by_text("Page not found")).to_have_count(0)
    assert urlparse(page.url).path == f"/{slug}"
    assert query(page)["pw"] == "2.5"
    expect(page.locator(".js-plotly-plot")).to_have_count(CHARTS[slug], timeout=LOAD_TIMEOUT_MS)
    if slug == "method":
        expect(page.get_by_text("Performance-First beats DeepVM")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_the_root_url_then_every_page_through_the_navigation(
        page: Page, streamlit_server: str, artifacts_dir: Path) -> None:
    """One visit that checks:

    * "/" shows Recommend in place (no redirect: one round trip on a first visit), PW kept;
    * every link of the top navigation opens its page, with the scenario kept in the URL and
      no exception; Running jobs (issue 28), which the navigation folds into its menu at 1280
      px, through that menu;
    * each page of PAGES is drawn whole (at its own path, the scenario kept, every chart drawn,
      no exception) and its screenshot is kept as an artifact;
    * issue 20 item 17: at 1280x720 every page's title sits right under the page links;
    * issue 27: offline, no page makes a failed request (the page icon came from a font CDN):
      every request goes to the dashboard's own host.
    """
    hosts = record_hosts(page)
    page.set_viewport_size(SMALL_SCREEN)
    open_app(page, f"{streamlit_server}/?pw=2.5")
    expect(headline(page)).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    wait_until_settled(page)  # the page's last elements arrive
    gaps = {"Recommend at /": page.evaluate(TITLE_GAP)}
    expect(page.get_by_text("Page not found")).to_have_count(0)
    assert urlparse(page.url).path == "/"
    assert query(page)["pw"] == "2.5"
    for title in NAVIGATION:
        if title in FOLDED:
            expect(page.get_by_role("link", name=title, exact=True)).to_have_count(0)
            more = page.get_by_test_id("stTopNavSection")
            expect(more).to_have_text(re.compile(r"\d+ more"))
            more.click()
            page.get_by_role("menuitem", name=title, exact=True).click()
        else:
            page.get_by_role("link", name=title, exact=True).first.click()
        expect(page.get_by_role("heading", name=title, level=1)).to_be_visible(
            timeout=LOAD_TIMEOUT_MS)
        expect(page).to_have_url(re.compile(r"[?&]pw=2.5(&|$)"))
        wait_until_settled(page)  # the page's run is over: no element of the page before
        gaps[title] = page.evaluate(TITLE_GAP)
        expect(page.get_by_test_id("stException")).to_have_count(0)
        if title in SLUGS:
            drawn_whole(page, SLUGS[title])
            screenshot(page, artifacts_dir / f"page-{SLUGS[title]}.png")
        if title == "Running jobs":  # issue 28's page, reached through the folded menu
            assert urlparse(page.url).path == "/jobs"
            expect(page.get_by_text("This page reads the ledgers only; it never calls "
                                    "AWS.")).to_be_visible()
            screenshot(page, artifacts_dir / "page-jobs.png")
    assert all(-1 <= gap <= TITLE_GAP_PX for gap in gaps.values()), gaps
    own = urlparse(streamlit_server).hostname
    assert hosts - {own, ""} == set(), hosts


def test_a_link_to_a_page_path_opens_it_whole(page: Page, streamlit_server: str) -> None:
    """A link to ``/<page>`` (a first load at that path; here Plan, which the others' paths
    load the same way: every page's whole drawing is checked by the walk above) opens that
    page with the scenario kept, every chart drawn and no exception, and asks nothing of
    another host (issue 27). (The older ``?page=`` form is read by the URL codec, tested
    without a browser, and against a path in test_app_browser's shared link test.)"""
    hosts = record_hosts(page)
    open_app(page, f"{streamlit_server}/plan?pw=2.5", PAGES["plan"])
    drawn_whole(page, "plan")
    own = urlparse(streamlit_server).hostname
    assert hosts - {own, ""} == set(), hosts
