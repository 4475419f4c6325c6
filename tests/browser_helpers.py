"""Helpers shared by the browser end-to-end tests."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Locator, Page


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
