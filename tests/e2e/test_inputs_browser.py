"""Issue 20 (items 1-11) in a real browser: what only the browser shows of the inputs a person
types (an unknown path, the MTBI grid, the upload limit, the catalog editor's warnings).

Every check waits on visible text with Playwright's ``expect``, never on sleeps.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from browser_helpers import edit_grid_cell
from playwright.sync_api import Page, expect

from deepvm_core.catalog.catalog import catalog_to_dict
from deepvm_core.catalog.store import load_catalog

pytestmark = pytest.mark.e2e

LOAD_TIMEOUT_MS = 45_000
UPDATE_TIMEOUT_MS = 15_000


def query(page: Page) -> dict[str, list[str]]:
    return parse_qs(urlparse(page.url).query)


def heading(page: Page, name: str):
    return page.get_by_role("heading", name=name, level=1)


def test_an_unknown_path_says_no_such_page(page: Page, streamlit_server: str) -> None:
    """Item 10: /nonexistent shows Recommend with a note naming the path."""
    page.goto(f"{streamlit_server}/nonexistent")
    expect(heading(page, "Recommend")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    expect(page.get_by_text("No such page: '/nonexistent'")).to_be_visible(
        timeout=UPDATE_TIMEOUT_MS)
    # The root URL has no such note.
    page.goto(f"{streamlit_server}/")
    expect(heading(page, "Recommend")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    expect(page.get_by_text("No such page")).to_have_count(0)


def test_the_path_beats_the_page_parameter(page: Page, streamlit_server: str) -> None:
    """Item 10: /simulate?page=plan shows Simulate, and the URL says so."""
    page.goto(f"{streamlit_server}/simulate?page=plan")
    expect(heading(page, "Simulate")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    expect(page).to_have_url(re.compile(r"[?&]page=simulate(&|$)"), timeout=UPDATE_TIMEOUT_MS)
    expect(heading(page, "Plan a job")).to_have_count(0)
    # At the root the parameter names the page.
    page.goto(f"{streamlit_server}/?page=simulate")
    expect(heading(page, "Simulate")).to_be_visible(timeout=LOAD_TIMEOUT_MS)


def _edit_mtbi(page: Page, row: int, text: str, landed: Callable[[], None]) -> None:
    """Type ``text`` into the MTBI cell of ``row`` (0-based) of the Assumptions' MTBI grid:
    the GPU type cell, then right to bucket, source, MTBI."""
    grid = page.locator("[class*='st-key-plan_mtbi_editor_'] [data-testid=stDataFrame]")
    expect(grid).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    edit_grid_cell(page, grid, (30, 35 + 17 + 35 * row), ["ArrowRight"] * 3, text, landed)


def test_the_mtbi_grid_reads_what_a_person_types(page: Page, streamlit_server: str) -> None:
    """Item 4: 1e-9 is read as 1e-9 h (the old grid dropped 'e' and '-': 19 h), it reaches the
    URL, and a refused value is said in words while the value in use stays."""
    page.goto(f"{streamlit_server}/plan?trials=200&catalog=aws-us-east-1-2023-10")
    expect(page.locator(".st-key-plan_card h3")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    page.get_by_text("Assumptions: interruptions, restarts, checkpoints").click()
    _edit_mtbi(page, 0, "1e-9", lambda: expect(page).to_have_url(  # g3s.xlarge
        re.compile(r"[?&]mtbi=g3s.xlarge%3A1e-09(&|$)"), timeout=UPDATE_TIMEOUT_MS))
    _edit_mtbi(page, 1, "abc", lambda: expect(page.get_by_text(  # g4dn.xlarge
        "MTBI of g4dn.xlarge: 'abc' is not a number of hours")).to_be_visible(
        timeout=UPDATE_TIMEOUT_MS))
    assert query(page)["mtbi"] == ["g3s.xlarge:1e-09"]  # the refused value changed nothing


def test_the_upload_limit_is_the_documented_8_mib(page: Page, streamlit_server: str,
                                                   tmp_path: Path) -> None:
    """Item 6: a 3 MiB catalog (over the old 2 MB cap) loads; a 9 MiB one reaches the page and
    is refused there with the core's limit in words."""
    text = json.dumps(catalog_to_dict(load_catalog("aws-us-east-1-2023-10")))
    small, large = tmp_path / "padded-3mib.json", tmp_path / "padded-9mib.json"
    small.write_text(text + " " * (3 * 2**20))  # JSON allows trailing whitespace
    large.write_text(text + " " * (9 * 2**20))
    page.goto(f"{streamlit_server}/catalog")
    expect(heading(page, "Catalog editor")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    uploader = page.locator(".st-key-ce_upload input[type=file]")
    uploader.set_input_files(str(small))
    expect(page.get_by_text("Loaded padded-3mib.json as catalog")).to_be_visible(
        timeout=UPDATE_TIMEOUT_MS)
    uploader.set_input_files(str(large))
    expect(page.get_by_text("padded-9mib.json was not loaded")).to_be_visible(
        timeout=UPDATE_TIMEOUT_MS)
    # The core's limit, MAX_CATALOG_BYTES = 8 * 2**20 = 8,388,608 bytes, named in the table.
    expect(page.get_by_test_id("stMain")).to_contain_text("8,388,608", timeout=UPDATE_TIMEOUT_MS)


def test_a_typed_price_typo_is_warned_and_the_edit_is_in_the_link(
        page: Page, streamlit_server: str) -> None:
    """Item 7: a spot price typed as 45 (0.526 on demand, 0.1578 in the catalog) is kept but
    warned about, and the link holds the edit."""
    page.goto(f"{streamlit_server}/catalog?catalog=aws-us-east-1-2023-10")
    expect(page.get_by_text("Valid:")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    grid = page.get_by_test_id("stDataFrame").first  # GPU VMs: name, family, OD, spot, ...
    expect(grid).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    page.wait_for_function(
        "document.querySelector('[data-testid=stDataFrame]').offsetWidth > 600")
    # Row 1's Name cell, then Family, OD, Spot and down to g4dn.xlarge's spot price.
    # landed: the warning names g4dn.xlarge's own on-demand price (a key lost on a busy
    # machine would put 45 in another cell, with another warning)
    edit_grid_cell(page, grid, (110, 35 + 17), ["ArrowRight"] * 3 + ["ArrowDown"], "45",
                   lambda: expect(page.get_by_text("is above the on-demand price 0.526 USD/hour")
                                  ).to_be_visible(timeout=UPDATE_TIMEOUT_MS))
    expect(page.get_by_text("look like typos (still in use)")).to_be_visible()
    expect(page.get_by_text("is 285x the 0.1578 USD/hour of aws-us-east-1-2023-10")
           ).to_be_visible(timeout=UPDATE_TIMEOUT_MS)
    expect(page).to_have_url(re.compile(r"[?&]edited=[0-9a-f]{16}(&|$)"),
                             timeout=UPDATE_TIMEOUT_MS)
    link = page.url
    shared = page.context.new_page()
    shared.goto(link)
    expect(shared.get_by_test_id("stSidebar")).to_contain_text("(edited)",
                                                               timeout=LOAD_TIMEOUT_MS)
    expect(shared.get_by_text("is above the on-demand price 0.526 USD/hour")).to_be_visible(
        timeout=UPDATE_TIMEOUT_MS)


def test_a_refused_restart_is_said_next_to_the_input(page: Page, streamlit_server: str) -> None:
    """Item 5: 525600 min typed as Restart R (the core's bound is 24 h = 1440 min) is refused in
    words next to the input, which shows the 6 min in use, not 525600 in red."""
    page.goto(f"{streamlit_server}/plan?trials=200")
    expect(page.locator(".st-key-plan_card h3")).to_be_visible(timeout=LOAD_TIMEOUT_MS)
    page.get_by_text("Assumptions: interruptions, restarts, checkpoints").click()
    restart = page.get_by_role("spinbutton", name="Restart R (min)")
    restart.fill("525600")
    restart.press("Enter")
    expect(page.get_by_text("Restart R (min): 525600 min was refused (the most is 1440 min); "
                            "6 min is in use.")).to_be_visible(timeout=UPDATE_TIMEOUT_MS)
    expect(restart).to_have_value("6")
