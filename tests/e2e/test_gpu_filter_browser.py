"""Issue 24 in a browser: the sidebar's GPU filters change the answer, go into the URL and
survive a reload from it (the figures: tests/test_gpu_filter.py, worked out by hand, and
tests/test_dashboard_gpu_filter.py against the oracle).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

LOAD_TIMEOUT_MS = 30_000
UPDATE_TIMEOUT_MS = 15_000
#: The paper's catalog and objective at PW 3: Table IV's 17 x g4dn.xlarge without a filter.
PAPER = "catalog=aws-us-east-1-2023-10&objective=paper&pw=3"


def headline(page: Page):
    return page.locator(".st-key-rec_card h3")


def card(page: Page):
    return page.locator(".st-key-rec_card")


def open_recommend(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.get_by_role("heading", name="Recommend", level=1)).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    expect(headline(page)).to_be_visible(timeout=LOAD_TIMEOUT_MS)


def test_a_model_filter_changes_the_answer_and_survives_a_reload(
        page: Page, streamlit_server: str) -> None:
    open_recommend(page, f"{streamlit_server}/?{PAPER}")
    expect(headline(page)).to_contain_text("17 × g4dn.xlarge")
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.locator("summary", has_text="GPU filters").click()
    models = sidebar.locator(".st-key-sb_gpus")
    expect(models).to_be_visible(timeout=UPDATE_TIMEOUT_MS)
    models.locator("input").click()
    page.get_by_role("option", name="A10G", exact=True).click()
    page.keyboard.press("Escape")
    # only g5.xlarge (A10G) is left: 9 spot + 1 t3.xlarge, 2.8826 USD/h
    expect(headline(page)).to_contain_text("9 × g5.xlarge", timeout=UPDATE_TIMEOUT_MS)
    expect(card(page)).to_contain_text("Only A10G GPUs.")
    expect(page).to_have_url(re.compile(r"[?&]gpus=A10G(&|$)"), timeout=UPDATE_TIMEOUT_MS)

    page.reload()
    expect(headline(page)).to_contain_text("9 × g5.xlarge", timeout=LOAD_TIMEOUT_MS)
    expect(card(page)).to_contain_text("Only A10G GPUs.")
    expect(page).to_have_url(re.compile(r"[?&]gpus=A10G(&|$)"))
    # the sidebar shows the filter again, open since one is set
    expect(page.get_by_test_id("stSidebar").locator(".st-key-sb_gpus")).to_contain_text("A10G")


def test_memory_and_count_filters_from_a_link(page: Page, streamlit_server: str) -> None:
    """At least 20 GB per GPU, one GPU per VM: g5.xlarge again; a filter that leaves nothing
    (at least 32 GB) says which binds, and both survive a reload."""
    open_recommend(page, f"{streamlit_server}/?{PAPER}&min_gpu_gb=20&gpus_per_vm=1")
    expect(headline(page)).to_contain_text("9 × g5.xlarge")
    expect(card(page)).to_contain_text("Only GPUs with at least 20 GB each, 1 per VM.")
    page.reload()
    expect(headline(page)).to_contain_text("9 × g5.xlarge", timeout=LOAD_TIMEOUT_MS)
    expect(page).to_have_url(re.compile(r"[?&]min_gpu_gb=20(&|$)"))
    expect(page).to_have_url(re.compile(r"[?&]gpus_per_vm=1(&|$)"))

    page.goto(f"{streamlit_server}/?{PAPER}&min_gpu_gb=32")
    expect(page.get_by_text("Nothing is feasible for this scenario")).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    expect(card(page)).to_contain_text(
        "none has at least 32 GB per GPU (the most: 24 GB, g5.xlarge)")
    page.reload()
    expect(page.get_by_text("Nothing is feasible for this scenario")).to_be_visible(
        timeout=LOAD_TIMEOUT_MS)
    expect(page).to_have_url(re.compile(r"[?&]min_gpu_gb=32(&|$)"))
