"""Issue 20 item 17: nothing cut off or oversized, measured in Chromium.

* At 1440x900 the catalog editor's grids and Plan's comparison table fit the main column
  (their scrolling area is no wider than what shows; before: 1,121 and 1,232 px in 978).
* The JSON preview on Recommend scrolls inside a box instead of growing to 7,000 px.
* At 1280x720 a page title sits right under the page links (before: 68 px lower, about
  120 px of empty screen above every title).
"""

from __future__ import annotations

import pytest
from browser_helpers import wait_until_settled
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

LOAD_TIMEOUT_MS = 60_000
CATALOG = "catalog=aws-us-east-1-2023-10"
GRIDS = """(selector) => [...document.querySelectorAll(selector)].filter(
    (e) => e.querySelector('.dvn-scroller')).map((e) => {
  const scroller = e.querySelector('.dvn-scroller');
  return {key: (e.closest('[class*="st-key-"]')?.className.match(/st-key-[\\w-]+/) || ['?'])[0],
          shown: scroller.clientWidth, content: scroller.scrollWidth};
})"""
TITLE_GAP = """() => document.querySelector('h1').getBoundingClientRect().top
  - document.querySelector('header').getBoundingClientRect().bottom"""
#: Most px between the bottom of the page links and the top of the page title's box.
TITLE_GAP_PX = 24


def grids(page: Page, selector: str) -> list[dict[str, object]]:
    page.locator(f"{selector} .dvn-scroller").first.wait_for(timeout=LOAD_TIMEOUT_MS)
    page.wait_for_timeout(1000)  # the grid sizes its columns after the first paint
    return page.evaluate(GRIDS, selector)


def test_grids_fit_the_main_column_at_1440(page: Page, streamlit_server: str) -> None:
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{streamlit_server}/catalog?{CATALOG}")
    editors = grids(page, '[data-testid="stDataFrame"][class*="st-key-ce_"], '
                          '[class*="st-key-ce_"] [data-testid="stDataFrame"]')
    assert len(editors) == 4
    for grid in editors:
        assert grid["content"] <= grid["shown"] + 1, grid
    page.goto(f"{streamlit_server}/plan?{CATALOG}&pw=3")
    expect(page.get_by_text("The best clusters and the paper's policies")).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    tables = grids(page, '[data-testid="stDataFrame"]')  # the comparison (the rest is folded)
    assert len(tables) >= 1
    for table in tables:
        assert table["content"] <= table["shown"] + 1, tables


def test_json_preview_scrolls_inside_a_box(page: Page, streamlit_server: str) -> None:
    page.goto(f"{streamlit_server}/?{CATALOG}&pw=3")
    page.get_by_text("What the JSON holds (preview)").click(timeout=LOAD_TIMEOUT_MS)
    code = page.locator('[data-testid="stCode"]').first
    expect(code).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    box = code.bounding_box()
    assert box is not None
    assert box["height"] <= 600, box


@pytest.mark.parametrize("slug", ["", "plan", "simulate", "catalog"])
def test_page_titles_sit_under_the_page_links_at_1280x720(page: Page, streamlit_server: str,
                                                          slug: str) -> None:
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{streamlit_server}/{slug}?{CATALOG}")
    title = page.locator("h1").first
    expect(title).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    wait_until_settled(page)  # the page's last elements arrive
    gap = page.evaluate(TITLE_GAP)
    assert -1 <= gap <= TITLE_GAP_PX, gap
