"""Helpers shared by the browser end-to-end tests."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page


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
