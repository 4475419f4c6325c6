"""Issue 24 in a browser: the 7B full fine-tune (FSDP within a VM) on Plan a job, from a link.
Its card names the PW that first fits (PW 3) or a fitting cluster (PW 10), and a reload keeps
the job's inputs (the figures: tests/test_dashboard_transformer.py, worked out by hand).
"""

from __future__ import annotations

import re

import pytest
from browser_helpers import LOAD_TIMEOUT_MS, UPDATE_TIMEOUT_MS, open_app, query, wait_until_settled
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.e2e

SEVEN_B = ("catalog=aws-us-east-1-2025-h1&workload=transformer&params_b=7&tokens_b=2"
           "&method=full&sharding=fsdp&trials=0")


def card(page: Page):
    return page.locator(".st-key-plan_card")


def test_the_7b_card_names_the_pw_that_fits_or_a_fitting_cluster_and_a_reload_keeps_it(
        page: Page, streamlit_server: str) -> None:
    open_app(page, f"{streamlit_server}/plan?pw=3&{SEVEN_B}", heading="Plan a job")
    expect(card(page)).to_contain_text("No cluster fits this job", timeout=LOAD_TIMEOUT_MS)
    expect(card(page)).to_contain_text(re.compile(
        r"Lift PW to [\d.,]+ USD/h for the first cluster the job fits on: \w+: \d+ x \S+ "
        r"spot"))
    expect(card(page)).to_contain_text("Your job: 7B full, FSDP within a VM, 2B tokens")
    wait_until_settled(page)
    page.screenshot(path="/tmp/dash24-plan-pw3.png", full_page=True)

    # the job's inputs are drawn from the link
    expect(page.get_by_role("radio", name=re.compile("^Transformer"))).to_be_checked()
    params = page.get_by_role("spinbutton", name="Parameters (billions)", exact=True)
    expect(params).to_have_value(re.compile(r"^7(\.0+)?$"))

    # an edit goes into the URL, and a reload from it keeps the edit and the kind
    params.fill("13")
    params.press("Enter")
    expect(card(page)).to_contain_text("Your job: 13B full", timeout=UPDATE_TIMEOUT_MS)
    expect(page).to_have_url(re.compile(r"[?&]params_b=13(&|$)"))
    page.reload()
    expect(card(page)).to_contain_text("Your job: 13B full", timeout=LOAD_TIMEOUT_MS)
    wait_until_settled(page)
    assert query(page)["workload"] == "transformer"
    assert query(page)["params_b"] == "13"
    expect(page.get_by_role("spinbutton", name="Parameters (billions)", exact=True)
           ).to_have_value(re.compile(r"^13(\.0+)?$"))

    # at PW 10 the card names a cluster (its type's GPUs hold the job: the AppTest test)
    open_app(page, f"{streamlit_server}/plan?pw=10&{SEVEN_B}", heading="Plan a job")
    expect(card(page)).to_contain_text("1 epoch of your job", timeout=LOAD_TIMEOUT_MS)
    expect(card(page)).to_contain_text(re.compile(r"\d+ × (p4d|p4de|p5|p5en|p3dn|g5|g6|g6e)\."
                                                  r"\d*xlarge spot"))
    wait_until_settled(page)
    page.screenshot(path="/tmp/dash24-plan-pw10.png", full_page=True)
