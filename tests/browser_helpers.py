"""Helpers shared by the browser end-to-end tests.

Streamlit reruns are asynchronous, so every check of the browser tests waits on visible text
with Playwright's ``expect`` (auto-waiting), never on sleeps."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import Locator, Page, expect

#: How long a page may take to load, and a rerun to update it, on a busy 2-core machine (the
#: browser tests run beside the others), ms.
LOAD_TIMEOUT_MS = 45_000
UPDATE_TIMEOUT_MS = 15_000
#: A page's size unless a test sets its own (the ``page`` fixture's context), px.
VIEWPORT = {"width": 1400, "height": 1000}
#: The sidebar's PW control.
PW_LABEL = "PW: pricing willingness (USD/hour)"
#: The pages under test by path, and their titles.
PAGES = {"recommend": "Recommend", "plan": "Plan a job", "instances": "Instances",
         "catalog": "Catalog editor", "simulate": "Simulate", "method": "Method"}


def headline(page: Page) -> Locator:
    """The recommended configuration's headline on the card."""
    return page.locator(".st-key-rec_card h3")


def open_app(page: Page, url: str, heading: str = "Recommend") -> None:
    """Open ``url`` and wait for the page's title and the sidebar's PW control."""
    page.goto(url)
    expect(page.get_by_role("heading", name=heading, level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    expect(page.get_by_role("slider", name=PW_LABEL)).to_be_visible(timeout=LOAD_TIMEOUT_MS)


def query(page: Page) -> dict[str, str]:
    """The page URL's query parameters (the last value of each)."""
    return {k: v[-1] for k, v in parse_qs(urlparse(page.url).query).items()}


def download_json(page: Page, button: str, target: Path) -> Any:
    """Click the download button named ``button``, keep the file as ``target`` (an artifact)
    and return its JSON."""
    with page.expect_download() as info:
        page.get_by_role("button", name=button).click()
    info.value.save_as(target)
    return json.loads(target.read_text())


def screenshot(page: Page, path: Path) -> None:
    """The whole page: Streamlit scrolls inside its main block, so grow the viewport to fit."""
    height = page.evaluate(
        "() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    size = page.viewport_size or {"width": 1400, "height": 1000}
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], height + 40)})
    try:
        page.wait_for_timeout(300)  # let plotly redraw at the new size
        page.screenshot(path=str(path))
    finally:
        page.set_viewport_size(size)


def click_grid_cell(page: Page, grid: Locator, x: float, y: float) -> None:
    """Click the cell of the data grid ``grid`` at page point (x, y), and wait until the grid
    holds the keyboard focus: keys pressed before it does (the first arrow, on a busy machine)
    would be lost and the next ones land in another cell."""
    page.mouse.click(x, y)
    page.wait_for_function("grid => grid.contains(document.activeElement)",
                           arg=grid.element_handle())


def wait_until_settled(page: Page, timeout_ms: float = 30_000) -> None:
    """Wait until the app's script run has finished (Streamlit marks the app element
    ``data-test-script-state="notRunning"``) and two animation frames have painted what it
    sent: the page's last elements are in place, without a fixed sleep."""
    page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(
        timeout=timeout_ms)
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def edit_grid_cell(page: Page, grid: Locator, cell: tuple[float, float], keys: Sequence[str],
                   text: str, landed: Callable[[], None], attempts: int = 2) -> None:
    """Type ``text`` into a data grid's cell and press Enter: wait for the page to settle,
    click the cell at ``cell`` (x, y offsets from the grid's top-left corner, px), press
    ``keys`` (arrows) to reach the cell to edit, type, and check ``landed`` (an ``expect``).

    On a busy machine the grid can still be redrawn by a rerun between the click and the keys,
    and the keys go nowhere: the same edit is then made once more from a settled page (what a
    person would do) before ``landed``'s failure is raised.
    """
    for attempt in range(attempts):
        wait_until_settled(page)
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        assert box is not None
        click_grid_cell(page, grid, box["x"] + cell[0], box["y"] + cell[1])
        for key in keys:
            page.keyboard.press(key)
        page.keyboard.type(text, delay=50)  # each key reaches the cell editor
        page.keyboard.press("Enter")
        try:
            landed()
            return
        except AssertionError:
            if attempt == attempts - 1:
                raise


#: Each data grid under a selector: its key (``st-key-...``), the width its scrolling area
#: shows and the width of its content, px.
GRIDS = """(selector) => [...document.querySelectorAll(selector)].filter(
    (e) => e.querySelector('.dvn-scroller')).map((e) => {
  const scroller = e.querySelector('.dvn-scroller');
  return {key: (e.closest('[class*="st-key-"]')?.className.match(/st-key-[\\w-]+/) || ['?'])[0],
          shown: scroller.clientWidth, content: scroller.scrollWidth};
})"""


def grid_widths(page: Page, selector: str) -> list[dict[str, object]]:
    """The shown and content widths of the data grids matching ``selector`` (``GRIDS``), once
    the first has been drawn and has sized its columns."""
    page.locator(f"{selector} .dvn-scroller").first.wait_for(timeout=LOAD_TIMEOUT_MS)
    page.wait_for_timeout(1000)  # the grid sizes its columns after the first paint
    return page.evaluate(GRIDS, selector)
